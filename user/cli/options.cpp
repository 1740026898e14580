#include "cli/options.h"

#include "model/slow_calls.h"
#include "util/error.h"

#include <CLI/CLI.hpp>

#include <map>
#include <sstream>
#include <stdexcept>

#include "cli/option_checks.h"
#include "jmethodtime.h"

namespace jmt {

std::string normalize_package(const std::string &spec)
{
    std::string p = spec;
    for (char &c : p)
        if (c == '.')
            c = '/';
    while (!p.empty() && p.back() == '/')
        p.pop_back();
    while (!p.empty() && p.front() == '/')
        p.erase(p.begin());
    if (p.empty())
        throw std::invalid_argument("empty package '" + spec +
                                    "': give a prefix such as org/postgresql or org.postgresql");
    if (p.size() > JMT_PREFIX_LEN)
        throw std::invalid_argument("package '" + spec + "' is longer than " + std::to_string(JMT_PREFIX_LEN) +
                                    " bytes: give a shorter prefix");
    for (char c : p) {
        if (c == ';' || c == '[' || c == ' ' || c == '\t' || c == '\n' || c == '*')
            throw std::invalid_argument("package '" + spec + "' contains '" + std::string(1, c) +
                                        "': give a plain prefix such as org/postgresql");
    }
    if (p.find("//") != std::string::npos)
        throw std::invalid_argument("package '" + spec +
                                    "' has an empty segment: give a prefix such as org/postgresql");
    return p;
}

std::string normalize_glob(const std::string &spec, bool is_class)
{
    const char *what = is_class ? "--class" : "--method";
    std::string g = spec;
    if (is_class)
        for (char &c : g)
            if (c == '.')
                c = '/';
    if (g.empty())
        throw std::invalid_argument(std::string("empty ") + what + " pattern: give a name or a glob such as " +
                                    (is_class ? "'*Statement'" : "'get*'"));
    if (g.size() >= JMT_GLOB_LEN)
        throw std::invalid_argument(std::string(what) + " pattern '" + spec + "' is longer than " +
                                    std::to_string(JMT_GLOB_LEN - 1) + " bytes: shorten it with '*'");
    for (char c : g) {
        if (c == ';' || c == '(' || c == ')' || c == '[' || c == ']' || c == ' ' || c == '\t' || c == '\n' ||
            (!is_class && (c == '/' || c == '.')))
            throw std::invalid_argument(std::string(what) + " pattern '" + spec + "' contains '" + std::string(1, c) +
                                        "': " +
                                        (is_class ? "give a class name such as org/postgresql/jdbc/PgResultSet "
                                                    "or a glob such as '*ResultSet'"
                                                  : "give a method name such as getString or a glob such as "
                                                    "'get*'; the class goes in --class"));
    }
    return g;
}

namespace {

// CLI11's message of a usage error as one line, in the words of the checks above.
std::string parse_error_line(const CLI::ParseError &e)
{
    std::string m = e.what();
    for (char &c : m)
        if (c == '\n')
            c = ' ';
    const size_t colon = m.find(": ");
    const std::string option = colon == std::string::npos ? "" : m.substr(0, colon);
    if (dynamic_cast<const CLI::ArgumentMismatch *>(&e) && !option.empty()) {
        if (m.find("missing") != std::string::npos)
            return option + ": needs a value (jmethodtime --help lists what each option takes)";
        if (m.find("At Most") != std::string::npos)
            return option + ": given more than once: give it once";
    }
    if (dynamic_cast<const CLI::ExtrasError *>(&e) || dynamic_cast<const CLI::ExcludesError *>(&e))
        return m + " (jmethodtime --help lists the options)";
    return m;
}

}  // namespace

const std::map<std::string, SortKey> &sort_keys()
{
    static const std::map<std::string, SortKey> keys = {{"calls", SortKey::Calls},
                                                        {"incl", SortKey::Incl},
                                                        {"excl", SortKey::Excl},
                                                        {"cpu-incl", SortKey::CpuIncl},
                                                        {"cpu-excl", SortKey::CpuExcl},
                                                        {"foreign", SortKey::Foreign},
                                                        {"runq-incl", SortKey::RunqIncl},
                                                        {"runq-excl", SortKey::RunqExcl},
                                                        {"blocked-incl", SortKey::BlockedIncl},
                                                        {"blocked-excl", SortKey::BlockedExcl}};
    return keys;
}

const std::map<std::string, PathMetric> &path_metrics()
{
    static const std::map<std::string, PathMetric> metrics = {{"calls", PathMetric::Calls},
                                                              {"wall", PathMetric::Wall},
                                                              {"cpu", PathMetric::Cpu},
                                                              {"runq", PathMetric::Runq},
                                                              {"blocked", PathMetric::Blocked}};
    return metrics;
}

bool wants_call_paths(const Options &o)
{
    // --json too: its "paths" let jmethodtime merge rebuild flame graphs (about 30 ns per event).
    return o.folded || o.tree || !o.flamegraph.empty() || !o.pprof.empty() || o.json;
}

namespace {

// What CLI11 fills in before the values are checked and converted: the
// numeric values as given (checked by cli/option_checks, one line per bad
// value), the filters and names of choices, and the options counted.
struct Given {
    std::vector<std::string> packages, classes, methods;
    std::string sort = "excl", metric = "wall";
    std::string pid, duration, max_overhead, interval, top, max_paths, min_calls, min_percent = "0.5", settle,
                                                                                  slower_than, slow_calls;
    CLI::Option *pid_opt = nullptr, *list_opt = nullptr, *duration_opt = nullptr, *max_overhead_opt = nullptr,
                *interval_opt = nullptr, *top_opt = nullptr, *min_percent_opt = nullptr, *max_paths_opt = nullptr,
                *min_calls_opt = nullptr, *settle_opt = nullptr, *slower_than_opt = nullptr, *slow_calls_opt = nullptr;
};

const char kDescription[] = "jmethodtime: exact per-method call counts and inclusive/exclusive elapsed and\n"
                            "on-CPU time of a running JVM, from HotSpot's method probes (eBPF).\n"
                            "A JVM started without -XX:+DTraceMethodProbes (JDK 8 to 23) gets the probes\n"
                            "switched on at run time for the traced classes only, and off at the end; one\n"
                            "started with the flag (any JDK) traps on every call unless put on standby.\n"
                            "In launch mode (-- java ...) jmethodtime adds the flag and traces from the\n"
                            "first Java method.\n\n"
                            "  jmethodtime -p PID [OPTIONS]                  trace a running JVM\n"
                            "  jmethodtime [OPTIONS] -- java [JAVA ARGS...]  run a JVM and trace it from its start\n"
                            "  jmethodtime --list                            show the JVMs on this host\n"
                            "  jmethodtime standby -p PID | --match REGEX    leave a JVM started with the flag as\n"
                            "                                                cheap as without it until traced\n";

// What to trace, and for how long.
void add_trace_options(CLI::App &app, Options &o, Given &g)
{
    app.set_version_flag("-V,--version", "jmethodtime " JMT_VERSION);
    g.pid_opt = app.add_option("-p,--pid", g.pid, "Process id of the JVM to trace")->type_name("PID");
    g.list_opt = app.add_flag("--list", o.list,
                              "List the JVMs on this host (pid, command, JDK version, libjvm, whether the "
                              "probes exist and are enabled) and exit");
    app.add_option("--package", g.packages,
                   "Trace only classes under this package prefix (org/postgresql or org.postgresql; "
                   "whole segments; repeatable). Default: every method")
        ->take_all();
    app.add_option("--class", g.classes,
                   "Trace only classes matching this glob ('*' any run, '?' one character; "
                   "org.postgresql.jdbc.PgResultSet or '*ResultSet'; repeatable, with --package both must match)")
        ->take_all();
    app.add_option("--method", g.methods,
                   "Trace only methods whose name matches this glob ('get*', '<init>'; repeatable)")
        ->take_all();
    g.duration_opt =
        app.add_option("-d,--duration", g.duration,
                       "Stop after SECONDS (default: until Ctrl-C, SIGTERM or the JVM exits; in launch mode the "
                       "command runs on untraced)")
            ->type_name("SECONDS");
    g.max_overhead_opt =
        app.add_option("--max-overhead", g.max_overhead,
                       "Detach when the probes' traps take more than PERCENT of the JVM's CPU time in two "
                       "1 s windows in a row (default: never); the report covers the trace until then")
            ->type_name("PERCENT");
    g.interval_opt =
        app.add_option("-i,--interval", g.interval,
                       "Print a report every SECONDS with the calls that completed in that interval, with a "
                       "timestamp")
            ->type_name("SECONDS");
    app.add_option("-u,--user", o.user,
                   "Launch mode: run the command as USER (name or uid) with USER's groups; under sudo "
                   "the default is the user who ran sudo, otherwise root (-u root keeps root)")
        ->type_name("USER");
    app.add_flag("--per-thread", o.per_thread, "Split the rows by thread (thread id and name)");
    app.add_flag("--per-jvm", o.per_jvm,
                 "With several JVMs (--match): split the rows by JVM (pid) instead of summing them");
    app.add_flag(
        "--foreign", o.foreign,
        "Also measure the part of each method's exclusive time spent inside untraced callees "
        "(JDK code, the socket): Foreign and CPU Foreign columns. Costs a little on every untraced method's call");
    g.slower_than_opt = app.add_option("--slower-than", g.slower_than,
                                       "Record each call of a traced method that runs DURATION or longer (20ms, "
                                       "500us, 1.5s): thread, start, wall/CPU/run-queue/blocked time and its "
                                       "traced callers, listed under the rows")
                            ->type_name("DURATION");
    g.slow_calls_opt =
        app.add_option("--slow-calls", g.slow_calls,
                       "With --slower-than, the slowest N calls kept per report (default 100; the rest counted)")
            ->type_name("N");
    app.add_flag("--no-latency", o.no_latency,
                 "Keep no latency histogram per method (p50, p99 and max columns, JSON's latency): saves a traced "
                 "return's few ns");
    app.add_flag("--raw", o.raw,
                 "Show times as measured, without taking out the calibrated cost of the probe events "
                 "inside each call (the cost is still calibrated for the overhead line and --max-overhead)");
    app.add_flag("--shared-probes", o.shared_probes,
                 "Trace even when another tracer (jmethodtime, bpftrace, bcc, perf) holds the JVM's method probes: "
                 "every event then also runs its programs, so the bounds on times widen to twice the probe cost");
    app.add_flag("--cost-before", o.cost_before,
                 "Measure what one probe event costs the JVM in its own code before the trace (about 6 s, the "
                 "probes attached, the JVM's calls then not in the report) instead of after it: for a JVM that "
                 "exits with the trace, a batch job");
    app.add_flag("-v,--verbose", o.verbose, "Show libbpf's messages");
    g.settle_opt =
        app.add_option("--settle", g.settle,
                       "A JVM whose probes are switched on at run time: wait at most SECONDS for its JIT compiles "
                       "to settle first, so that code compiling then does not carry probe calls, and at the end for "
                       "the code the end deoptimized to compile again (default 60; 0: neither)")
            ->type_name("SECONDS");
    auto *match = app.add_option("--match", o.match,
                                 "Trace the JVMs whose command line matches this regular expression "
                                 "(ECMAScript, searched anywhere in it; up to 16 in one trace), instead of -p: the "
                                 "pid differs on every host")
                      ->type_name("REGEX");
    g.pid_opt->excludes(g.list_opt);
    match->excludes(g.pid_opt)->excludes(g.list_opt);
}

// What the report holds and where it goes.
void add_output_options(CLI::App &app, Options &o, Given &g)
{
    g.top = std::to_string(o.top);
    g.top_opt = app.add_option("--top", g.top, "Rows in the table (0: all)")->type_name("N")->capture_default_str();
    app.add_option("--sort", g.sort,
                   "Table and CSV order: " + names_of(sort_keys()) +
                       " (foreign with --foreign; runq: waiting runnable for a CPU; blocked: neither on a CPU "
                       "nor waiting for one)")
        ->check(one_of(sort_keys(), "a sort key"))
        ->capture_default_str();
    app.add_flag("--offcpu", o.offcpu,
                 "Show the table's run-queue and blocked columns even when no row spends 1% of its time so");
    auto *json = app.add_flag("--json", o.json, "Print one JSON document with every method instead of the table");
    auto *csv =
        app.add_flag("--csv", o.csv, "Print CSV (a header, then every method) instead of the table")->excludes(json);
    auto *folded = app.add_flag("--folded", o.folded,
                                "Print the call paths as collapsed stacks (a;b;c VALUE per line: FlameGraph, "
                                "speedscope, inferno) instead of the table; VALUE per --metric")
                       ->excludes(json)
                       ->excludes(csv);
    app.add_flag("--tree", o.tree, "Print the call tree (calls and times per call path, indented) instead of the table")
        ->excludes(json)
        ->excludes(csv)
        ->excludes(folded);
    app.add_option("--metric", g.metric,
                   "Value of --folded (and the flame graph's first): calls, or exclusive ns of wall (elapsed), "
                   "cpu (on a CPU), runq (waiting for a CPU) or blocked (neither)")
        ->check(one_of(path_metrics(), "a metric"))
        ->capture_default_str();
    g.min_percent_opt = app.add_option("--min-percent", g.min_percent,
                                       "--tree: leave out call paths under this percentage of the total elapsed time")
                            ->type_name("PERCENT")
                            ->capture_default_str();
    app.add_option("--flamegraph", o.flamegraph,
                   "Also write the call paths as a flame graph to FILE.html (self-contained, offline)");
    g.max_paths_opt =
        app.add_option("--max-paths", g.max_paths,
                       "Call paths the kernel keeps before counting new ones under [truncated] (default: up to "
                       "65534, fewer on hosts with very many CPUs)")
            ->type_name("N");
    app.add_option("--pprof", o.pprof,
                   "Also write the call paths as a gzipped pprof profile to FILE.pb.gz (go tool pprof, "
                   "Pyroscope, Parca)");
    g.min_calls_opt =
        app.add_option("--min-calls", g.min_calls, "Leave out methods with fewer calls (every output)")->type_name("N");
    app.add_option("-o,--output", o.output, "Write the report to FILE instead of standard output");
}

// Every numeric value, strictly (cli/option_checks.h); throws std::invalid_argument.
void convert_numbers(const Given &g, Options &o)
{
    if (g.pid_opt->count())
        o.pid = static_cast<int>(checked_integer(kPidRule, g.pid));
    if (g.duration_opt->count())
        o.duration_s = checked_number(kDurationRule, g.duration);
    if (g.max_overhead_opt->count())
        o.max_overhead_percent = checked_number(kMaxOverheadRule, g.max_overhead);
    if (g.interval_opt->count())
        o.interval_s = checked_number(kIntervalRule, g.interval);
    if (g.top_opt->count())
        o.top = static_cast<size_t>(checked_integer(kTopRule, g.top));
    if (g.min_percent_opt->count())
        o.min_percent = checked_number(kMinPercentRule, g.min_percent);
    if (g.max_paths_opt->count())
        o.max_paths = static_cast<uint32_t>(checked_integer(kMaxPathsRule, g.max_paths));
    if (g.min_calls_opt->count())
        o.min_calls = checked_integer(kMinCallsRule, g.min_calls);
    if (g.settle_opt->count())
        o.settle_s = checked_number(kSettleRule, g.settle);
    if (g.slower_than_opt->count()) {
        try {
            o.slower_than_ns = parse_duration_ns(g.slower_than);
        } catch (const Error &e) {
            throw std::invalid_argument(std::string("--slower-than: ") + e.what());
        }
    }
    if (g.slow_calls_opt->count())
        o.slow_calls = static_cast<size_t>(checked_integer(kSlowCallsRule, g.slow_calls));
}

// Options that exclude or need each other, and the filters' limits; throws CLI::ValidationError.
void check_combinations(const Given &g, const Options &o, bool dash_dash)
{
    if (dash_dash && o.command.empty())
        throw CLI::ValidationError("no command after --: give one, e.g. -- java -cp app.jar Main");
    if (!o.command.empty() && (o.pid || o.list))
        throw CLI::ValidationError(std::string(o.pid ? "--pid" : "--list") +
                                   " excludes a command after --: trace a running JVM or launch one");
    if (!o.user.empty() && o.command.empty())
        throw CLI::ValidationError("-u/--user is for launch mode (-- java ...): a running JVM keeps its user");
    if (g.packages.size() > JMT_MAX_PREFIXES)
        throw CLI::ValidationError("--package", "at most " + std::to_string(JMT_MAX_PREFIXES) +
                                                    " prefixes: use a common parent package");
    if (!o.match.empty() && !o.command.empty())
        throw CLI::ValidationError("--match picks a running JVM; a command after -- is launched: drop one of them");
    if (o.pid == 0 && !o.list && o.command.empty() && o.match.empty())
        throw CLI::ValidationError("no JVM to trace: give -p/--pid PID, --match REGEX, a command after -- "
                                   "(jmethodtime -- java ...), or --list");
    if (g.sort == "foreign" && !o.foreign)
        throw CLI::ValidationError("--sort foreign needs --foreign (the time inside untraced callees is "
                                   "measured only then): add --foreign");
    if (o.interval_s > 0 && (o.folded || o.tree))
        throw CLI::ValidationError("--interval reports the table, --json or --csv; --folded and --tree "
                                   "cover the whole trace: drop one of them");
    if (o.cost_before && (!o.command.empty() || o.raw || o.interval_s > 0))
        throw CLI::ValidationError(std::string("--cost-before measures the probe cost ") +
                                   (!o.command.empty() ? "in a running JVM before its trace; a launched one is "
                                                         "traced from its start: drop --cost-before"
                                                       : "that --raw and -i leave in: drop one of them"));
    if (g.classes.size() > JMT_MAX_GLOBS || g.methods.size() > JMT_MAX_GLOBS)
        throw CLI::ValidationError("--class/--method", "at most " + std::to_string(JMT_MAX_GLOBS) +
                                                           " patterns each: combine them with '*'");
}

// The checked values into o: filters in JVM form, the sort key and the metric.
void finish(const Given &g, Options &o)
{
    for (const auto &p : g.packages)
        o.packages.push_back(normalize_package(p));
    for (const auto &glob : g.classes)
        o.class_globs.push_back(normalize_glob(glob, true));
    for (const auto &glob : g.methods)
        o.method_globs.push_back(normalize_glob(glob, false));
    o.sort = sort_keys().at(g.sort);
    o.metric = path_metrics().at(g.metric);
}

}  // namespace

ParseOutcome parse_options(int argc, const char *const argv[])
{
    ParseOutcome outcome;
    Options &o = outcome.options;
    Given given;
    CLI::App app{kDescription, "jmethodtime"};
    add_trace_options(app, o, given);
    add_output_options(app, o, given);
    std::ostringstream out, err;
    try {
        // Launch mode: everything after the first "--" is the command, never our options.
        int own = argc;
        for (int i = 1; i < argc; i++)
            if (std::string(argv[i]) == "--") {
                own = i;
                o.command.assign(argv + i + 1, argv + argc);
                break;
            }
        app.parse(own, argv);
        convert_numbers(given, o);
        check_combinations(given, o, own < argc);
        finish(given, o);
    } catch (const CLI::ParseError &e) {
        outcome.exit_now = true;
        if (e.get_exit_code() == 0) {  // --help, --version
            app.exit(e, out, err);
            outcome.message = out.str() + err.str();
            return outcome;
        }
        outcome.exit_code = 2;  // usage error: one line
        outcome.message = "jmethodtime: " + parse_error_line(e) + "\n";
        return outcome;
    } catch (const std::invalid_argument &e) {
        outcome.exit_now = true;
        outcome.exit_code = 2;
        outcome.message = std::string("jmethodtime: ") + e.what() + "\n";
        return outcome;
    }
    return outcome;
}

}  // namespace jmt
