#include "options.h"

#include <CLI/CLI.hpp>

#include <map>
#include <sstream>
#include <stdexcept>

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

ParseOutcome parse_options(int argc, const char *const argv[])
{
    ParseOutcome outcome;
    Options &o = outcome.options;
    std::vector<std::string> packages;
    std::string sort = "excl";

    CLI::App app{"jmethodtime: exact per-method call counts and inclusive/exclusive elapsed and\n"
                 "on-CPU time of a running JVM, from HotSpot's method probes (eBPF).\n"
                 "The JVM must run with -XX:+DTraceMethodProbes.",
                 "jmethodtime"};
    app.set_version_flag("-V,--version", "jmethodtime " JMT_VERSION);
    app.add_option("-p,--pid", o.pid, "Process id of the JVM to trace")
        ->required()
        ->check(CLI::PositiveNumber);
    app.add_option("--package", packages,
                   "Trace only classes under this package prefix (org/postgresql or org.postgresql; "
                   "whole segments; repeatable). Default: every method")
        ->take_all();
    app.add_option("-d,--duration", o.duration_s, "Stop after SECONDS (default: until Ctrl-C, SIGTERM or the JVM exits)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--top", o.top, "Rows in the table (0: all)")->capture_default_str();
    app.add_option("--sort", sort, "Table order: calls, incl, excl, cpu-incl, cpu-excl")
        ->check(CLI::IsMember({"calls", "incl", "excl", "cpu-incl", "cpu-excl"}))
        ->capture_default_str();
    auto *json = app.add_flag("--json", o.json, "Print one JSON document with every method instead of the table");
    app.add_flag("--csv", o.csv, "Print CSV (a header, then every method) instead of the table")->excludes(json);
    app.add_option("--min-calls", o.min_calls, "Leave out methods with fewer calls (every output)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("-o,--output", o.output, "Write the report to FILE instead of standard output");
    app.add_flag("--raw", o.raw,
                 "Show times as measured, without taking out the calibrated cost of the probe events "
                 "inside each call");
    app.add_flag("-v,--verbose", o.verbose, "Show libbpf's messages");

    std::ostringstream out, err;
    try {
        app.parse(argc, argv);
        if (packages.size() > JMT_MAX_PREFIXES)
            throw CLI::ValidationError("--package", "at most " + std::to_string(JMT_MAX_PREFIXES) +
                                                        " prefixes: use a common parent package");
        for (const auto &p : packages)
            o.packages.push_back(normalize_package(p));
    } catch (const CLI::ParseError &e) {
        outcome.exit_now = true;
        outcome.exit_code = app.exit(e, out, err) == 0 ? 0 : 2;  // 2: usage error
        outcome.message = out.str() + err.str();
        return outcome;
    } catch (const std::invalid_argument &e) {
        outcome.exit_now = true;
        outcome.exit_code = 2;
        outcome.message = std::string("jmethodtime: ") + e.what() + "\n";
        return outcome;
    }
    static const std::map<std::string, SortKey> sort_keys = {
        {"calls", SortKey::Calls}, {"incl", SortKey::Incl}, {"excl", SortKey::Excl},
        {"cpu-incl", SortKey::CpuIncl}, {"cpu-excl", SortKey::CpuExcl}};
    o.sort = sort_keys.at(sort);
    return outcome;
}

}  // namespace jmt
