// Describes the host and the JVM of a trace for its report (model/source.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/source.h"

namespace jmt {

// The source of a trace of pid started at start_unix_ns (ns since the epoch):
// hostname, uname -r, the JVM's command line from /proc/PID/cmdline and its
// main class; duration_ns is left 0 (the report sets it). jdk_version as the
// preflight found it.
ReportSource describe_source(int pid, const std::string &jdk_version, uint64_t start_unix_ns);

// The main class of a java command line (argv[0] the launcher): the first
// argument that is not an option or an option's value; "-jar app.jar" gives
// "app.jar", "-m mod/cls" gives "mod/cls". Empty when there is none.
std::string java_main_class(const std::vector<std::string> &argv);

}  // namespace jmt
