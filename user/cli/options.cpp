#include "cli/options.h"

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
        throw std::invalid_argument("package '" + spec + "' is longer than " +
                                    std::to_string(JMT_PREFIX_LEN) + " bytes: give a shorter prefix");
    for (char c : p) {
        if (c == ';' || c == '[' || c == ' ' || c == '\t' || c == '\n' || c == '*')
            throw std::invalid_argument("package '" + spec + "' contains '" + std::string(1, c) +
                                        "': give a plain prefix such as org/postgresql");
    }
    if (p.find("//") != std::string::npos)
        throw std::invalid_argument("package '" + spec + "' has an empty segment: give a prefix such as org/postgresql");
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
            throw std::invalid_argument(std::string(what) + " pattern '" + spec + "' contains '" +
                                        std::string(1, c) + "': " +
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

bool wants_call_paths(const Options &o)
{
    // --json too (issue 18): its "paths" let jmethodtime merge rebuild flame graphs (about 30 ns per event).
    return o.folded || o.tree || !o.flamegraph.empty() || !o.pprof.empty() || o.json;
}

ParseOutcome parse_options(int argc, const char *const argv[])
{
    ParseOutcome outcome;
    Options &o = outcome.options;
    std::vector<std::string> packages, classes, methods;
    std::string sort = "excl", metric = "wall";
    // Numeric values as given: checked by cli/option_checks after parsing, one line per bad value.
    std::string pid_s, duration_s, max_overhead_s, interval_s, top_s = std::to_string(o.top), max_paths_s,
                                                                  min_calls_s, min_percent_s = "0.5";

    CLI::App app{"jmethodtime: exact per-method call counts and inclusive/exclusive elapsed and\n"
                 "on-CPU time of a running JVM, from HotSpot's method probes (eBPF).\n"
                 "The JVM must run with -XX:+DTraceMethodProbes; in launch mode (-- java ...)\n"
                 "jmethodtime adds the flag itself and traces from the first Java method.\n\n"
                 "  jmethodtime -p PID [OPTIONS]                  trace a running JVM\n"
                 "  jmethodtime [OPTIONS] -- java [JAVA ARGS...]  run a JVM and trace it from its start\n"
                 "  jmethodtime --list                            show the JVMs on this host\n",
                 "jmethodtime"};
    app.set_version_flag("-V,--version", "jmethodtime " JMT_VERSION);
    auto *pid = app.add_option("-p,--pid", pid_s, "Process id of the JVM to trace")->type_name("PID");
    auto *list = app.add_flag("--list", o.list,
                              "List the JVMs on this host (pid, command, JDK version, libjvm, whether the "
                              "probes exist and are enabled) and exit");
    app.add_option("--package", packages,
                   "Trace only classes under this package prefix (org/postgresql or org.postgresql; "
                   "whole segments; repeatable). Default: every method")
        ->take_all();
    app.add_option("--class", classes,
                   "Trace only classes matching this glob ('*' any run, '?' one character; "
                   "org.postgresql.jdbc.PgResultSet or '*ResultSet'; repeatable, with --package both must match)")
        ->take_all();
    app.add_option("--method", methods,
                   "Trace only methods whose name matches this glob ('get*', '<init>'; repeatable)")
        ->take_all();
    auto *duration = app.add_option("-d,--duration", duration_s,
                   "Stop after SECONDS (default: until Ctrl-C, SIGTERM or the JVM exits; in launch mode the "
                   "command runs on untraced)")
                         ->type_name("SECONDS");
    auto *max_overhead = app.add_option("--max-overhead", max_overhead_s,
                   "Detach when the probes' traps take more than PERCENT of the JVM's CPU time in two "
                   "1 s windows in a row (default: never); the report covers the trace until then")
                             ->type_name("PERCENT");
    auto *interval = app.add_option("-i,--interval", interval_s,
                   "Print a report every SECONDS with the calls that completed in that interval, with a "
                   "timestamp")
                         ->type_name("SECONDS");
    app.add_flag("--per-thread", o.per_thread, "Split the rows by thread (thread id and name)");
    app.add_flag("--foreign", o.foreign,
                 "Also measure the part of each method's exclusive time spent inside untraced callees "
                 "(JDK code, the socket): Foreign and CPU Foreign columns. Costs a little on every untraced method's call");
    auto *top = app.add_option("--top", top_s, "Rows in the table (0: all)")->type_name("N")->capture_default_str();
    app.add_option("--sort", sort, "Table order: calls, incl, excl, cpu-incl, cpu-excl, foreign (with --foreign)")
        ->check(CLI::IsMember({"calls", "incl", "excl", "cpu-incl", "cpu-excl", "foreign"}))
        ->capture_default_str();
    auto *json = app.add_flag("--json", o.json, "Print one JSON document with every method instead of the table");
    auto *csv = app.add_flag("--csv", o.csv, "Print CSV (a header, then every method) instead of the table")
                    ->excludes(json);
    auto *folded = app.add_flag("--folded", o.folded,
                                "Print the call paths as collapsed stacks (a;b;c VALUE per line: FlameGraph, "
                                "speedscope, inferno) instead of the table; VALUE per --metric")
                       ->excludes(json)
                       ->excludes(csv);
    app.add_flag("--tree", o.tree, "Print the call tree (calls and times per call path, indented) instead of the table")
        ->excludes(json)
        ->excludes(csv)
        ->excludes(folded);
    app.add_option("--metric", metric, "Value of --folded: calls, wall (exclusive elapsed ns) or cpu (exclusive on-CPU ns)")
        ->check(CLI::IsMember({"calls", "wall", "cpu"}))
        ->capture_default_str();
    auto *min_percent = app.add_option("--min-percent", min_percent_s,
                   "--tree: leave out call paths under this percentage of the total elapsed time")
                            ->type_name("PERCENT")
                            ->capture_default_str();
    app.add_option("--flamegraph", o.flamegraph,
                   "Also write the call paths as a flame graph to FILE.html (self-contained, offline)");
    auto *max_paths = app.add_option("--max-paths", max_paths_s,
                   "Call paths the kernel keeps before counting new ones under [truncated] (default: up to "
                   "65534, fewer on hosts with very many CPUs)")
                          ->type_name("N");
    app.add_option("--pprof", o.pprof,
                   "Also write the call paths as a gzipped pprof profile to FILE.pb.gz (go tool pprof, "
                   "Pyroscope, Parca)");
    auto *min_calls = app.add_option("--min-calls", min_calls_s, "Leave out methods with fewer calls (every output)")
                          ->type_name("N");
    app.add_option("-o,--output", o.output, "Write the report to FILE instead of standard output");
    app.add_flag("--raw", o.raw,
                 "Show times as measured, without taking out the calibrated cost of the probe events "
                 "inside each call");
    app.add_flag("-v,--verbose", o.verbose, "Show libbpf's messages");
    pid->excludes(list);

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
        // Every numeric value, strictly (cli/option_checks.h); before the checks below that use them.
        if (pid->count())
            o.pid = static_cast<int>(checked_integer(kPidRule, pid_s));
        if (duration->count())
            o.duration_s = checked_number(kDurationRule, duration_s);
        if (max_overhead->count())
            o.max_overhead_percent = checked_number(kMaxOverheadRule, max_overhead_s);
        if (interval->count())
            o.interval_s = checked_number(kIntervalRule, interval_s);
        if (top->count())
            o.top = static_cast<size_t>(checked_integer(kTopRule, top_s));
        if (min_percent->count())
            o.min_percent = checked_number(kMinPercentRule, min_percent_s);
        if (max_paths->count())
            o.max_paths = static_cast<uint32_t>(checked_integer(kMaxPathsRule, max_paths_s));
        if (min_calls->count())
            o.min_calls = checked_integer(kMinCallsRule, min_calls_s);
        if (own < argc && o.command.empty())
            throw CLI::ValidationError("no command after --: give one, e.g. -- java -cp app.jar Main");
        if (!o.command.empty() && (o.pid || o.list))
            throw CLI::ValidationError(std::string(o.pid ? "--pid" : "--list") +
                                       " excludes a command after --: trace a running JVM or launch one");
        if (packages.size() > JMT_MAX_PREFIXES)
            throw CLI::ValidationError("--package", "at most " + std::to_string(JMT_MAX_PREFIXES) +
                                                        " prefixes: use a common parent package");
        if (o.pid == 0 && !o.list && o.command.empty())
            throw CLI::ValidationError("no JVM to trace: give -p/--pid PID, a command after -- "
                                       "(jmethodtime -- java ...), or --list");
        if (sort == "foreign" && !o.foreign)
            throw CLI::ValidationError("--sort foreign needs --foreign (the time inside untraced callees is "
                                       "measured only then): add --foreign");
        if (o.max_overhead_percent > 0 && o.raw)
            throw CLI::ValidationError("--max-overhead needs the calibrated cost of a probe event, which --raw "
                                       "skips: drop one of them");
        if (o.interval_s > 0 && (o.folded || o.tree))
            throw CLI::ValidationError("--interval reports the table, --json or --csv; --folded and --tree "
                                       "cover the whole trace: drop one of them");
        if (classes.size() > JMT_MAX_GLOBS || methods.size() > JMT_MAX_GLOBS)
            throw CLI::ValidationError("--class/--method", "at most " + std::to_string(JMT_MAX_GLOBS) +
                                                               " patterns each: combine them with '*'");
        for (const auto &p : packages)
            o.packages.push_back(normalize_package(p));
        for (const auto &g : classes)
            o.class_globs.push_back(normalize_glob(g, true));
        for (const auto &g : methods)
            o.method_globs.push_back(normalize_glob(g, false));
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
    static const std::map<std::string, SortKey> sort_keys = {
        {"calls", SortKey::Calls}, {"incl", SortKey::Incl}, {"excl", SortKey::Excl},
        {"cpu-incl", SortKey::CpuIncl}, {"cpu-excl", SortKey::CpuExcl}, {"foreign", SortKey::Foreign}};
    o.sort = sort_keys.at(sort);
    static const std::map<std::string, PathMetric> metrics = {
        {"calls", PathMetric::Calls}, {"wall", PathMetric::Wall}, {"cpu", PathMetric::Cpu}};
    o.metric = metrics.at(metric);
    return outcome;
}

}  // namespace jmt
