// Where a report comes from: the host and the JVM a trace ran against. One per
// trace; a merged report (model/merge.h) carries every source it sums.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jmt {

// The version of the JSON report's layout ("schema_version"): a reader refuses
// other versions (report/report_json.h).
constexpr int kReportSchemaVersion = 1;

struct ReportSource {
    std::string hostname;      // gethostname() of the tracing host (its UTS namespace)
    int pid = 0;               // the JVM's pid as the tracing host sees it
    std::string main_class;    // the JVM's main class (or "-jar FILE"), from its command line
    std::string command;       // /proc/PID/cmdline, arguments joined by spaces
    std::string jdk_version;   // JAVA_VERSION of the JVM's JDK; empty if unknown
    std::string kernel;        // uname -r
    std::string arch;          // uname -m of the tracing host: "x86_64", "aarch64"; empty in older reports
    std::string start_time;    // the trace's start, UTC ISO 8601 ("2026-11-21T20:51:03.123Z")
    uint64_t duration_ns = 0;  // the trace's wall time
};

// "host (pid 1234)": a source in a line of text.
std::string source_text(const ReportSource &s);

// The architectures of sources, sorted, unknown ones (empty) left out: "aarch64, x86_64".
std::string architectures(const std::vector<ReportSource> &sources);

}  // namespace jmt
