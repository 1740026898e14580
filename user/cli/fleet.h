// jmethodtime merge FILE... and jmethodtime diff BASE NEW, on JSON reports.
#pragma once

namespace jmt {

// Whether argv[1] names a subcommand handled here ("merge", "diff").
bool is_fleet_command(int argc, const char *const argv[]);

// Runs it: 0 done, 1 a report could not be read or written (one line on stderr), 2 a usage error.
int run_fleet(int argc, const char *const argv[]);

}  // namespace jmt
