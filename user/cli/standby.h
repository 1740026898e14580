// jmethodtime standby -p PID | --match REGEX: a JVM started with
// -XX:+DTraceMethodProbes left as cheap as one without it (control/probe_switch.h),
// until a trace switches on its classes.
#pragma once

namespace jmt {

// Whether argv[1] is "standby".
bool is_standby_command(int argc, const char *const argv[]);

// 0 done, 1 a JVM could not be put on standby (one line each), 2 a usage error.
int run_standby(int argc, const char *const argv[]);

}  // namespace jmt
