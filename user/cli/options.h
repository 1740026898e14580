// Command-line options: a plain struct built by CLI11, testable without a process.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "model/paths.h"
#include "model/profile.h"

namespace jmt {

struct Options {
    int pid = 0;                            // attach mode: the JVM to trace
    std::vector<std::string> command;       // launch mode: the java command after "--"
    std::string user;                       // launch mode: -u/--user, who the command runs as
    std::string match;                      // --match REGEX: the one JVM whose command line matches
    bool list = false;                      // --list: show the JVMs on this host, trace nothing
    std::vector<std::string> packages;      // JVM form, no trailing '/'
    std::vector<std::string> class_globs;   // JVM form ('.' -> '/'); '*' and '?' wildcards
    std::vector<std::string> method_globs;  // method names; '*' and '?' wildcards
    double interval_s = 0;                  // >0: a report per interval of this many seconds
    bool per_thread = false;                // rows split by thread
    bool per_jvm = false;                   // several JVMs: rows split by JVM (pid)
    bool foreign = false;                   // --foreign: time inside untraced callees per method
    double duration_s = 0;                  // 0: until signal or target exit
    double max_overhead_percent = 0;        // >0: detach when the traps take more of the JVM's CPU time
    size_t top = 20;                        // 0: all rows
    SortKey sort = SortKey::Excl;
    bool offcpu = false;  // --offcpu: the table's run-queue and blocked columns always
    bool json = false;
    bool csv = false;
    bool folded = false;                   // collapsed stacks of the call paths instead of the table
    bool tree = false;                     // the call tree instead of the table
    PathMetric metric = PathMetric::Wall;  // --folded's value (and the flame graph's default)
    double min_percent = 0.5;              // --tree: leave out subtrees under this % of the total
    std::string flamegraph;                // --flamegraph FILE.html, besides the report
    std::string pprof;                     // --pprof FILE.pb.gz, besides the report
    uint32_t max_paths = 0;                // call paths the kernel keeps (0: as many as fit, up to 65534)
    uint64_t min_calls = 0;                // rows with fewer calls are left out of every output
    std::string output;                    // report file; empty: stdout
    uint64_t slower_than_ns = 0;           // --slower-than: calls recorded from this time (0: off)
    size_t slow_calls = 100;               // --slow-calls: of them, the slowest kept per report
    bool no_latency = false;               // --no-latency: no histograms (a traced return's few ns)
    bool raw = false;                      // times as measured, probe cost left in
    bool shared_probes = false;            // trace although another tracer holds the probes
    bool cost_before = false;              // the probe cost's windows before the trace, not after it
    bool verbose = false;                  // libbpf's own messages on stderr
    // A JVM whose probes are switched on at run time: the longest wait (s) for
    // its compiles to settle before the switch; 0: none.
    double settle_s = 60;
};

// --sort's and --metric's names (jmethodtime, merge and diff take the same).
const std::map<std::string, SortKey> &sort_keys();
const std::map<std::string, PathMetric> &path_metrics();
// "a, b, c": the names of one of those maps, for --help.
template <typename T>
std::string names_of(const std::map<std::string, T> &named)
{
    std::string out;
    for (const auto &entry : named)
        out += (out.empty() ? "" : ", ") + entry.first;
    return out;
}
// A check that a value is one of named's names: "'nope' is not a sort key (one of calls, excl, ...)".
template <typename T>
CLI::Validator one_of(const std::map<std::string, T> &named, const std::string &what)
{
    return CLI::Validator(
        [&named, what](std::string &value) -> std::string {
            if (named.count(value))
                return "";
            return "'" + value + "' is not " + what + " (one of " + names_of(named) + ")";
        },
        "NAME");
}

// Whether the options need call paths in the kernel (--folded, --tree, --flamegraph, --pprof, --json).
bool wants_call_paths(const Options &o);

struct ParseOutcome {
    Options options;
    bool exit_now = false;  // --help, --version or an error: print `message`, exit
    int exit_code = 0;
    std::string message;
};

ParseOutcome parse_options(int argc, const char *const argv[]);

// "org.postgresql" or "org/postgresql/" -> "org/postgresql".
// Throws std::invalid_argument naming the problem for empty or malformed input.
std::string normalize_package(const std::string &spec);

// A --class or --method glob, checked and in JVM form ('.' -> '/' for classes).
// Throws std::invalid_argument naming the problem.
std::string normalize_glob(const std::string &spec, bool is_class);

}  // namespace jmt
