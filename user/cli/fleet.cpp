#include "cli/fleet.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/option_checks.h"
#include "cli/options.h"
#include "cli/sink.h"
#include "cli/subcommand.h"
#include "model/diff.h"
#include "model/merge.h"
#include "report/flamegraph.h"
#include "report/folded.h"
#include "report/merge_report.h"
#include "report/pprof.h"
#include "report/report.h"
#include "report/report_json.h"
#include "util/error.h"

namespace jmt {

namespace {

const std::map<std::string, SortKey> &kSortKeys = sort_keys();
const std::map<std::string, PathMetric> &kMetrics = path_metrics();

MergeInput load(const std::string &file)
{
    LoadedReport r = read_report(file);
    return MergeInput{file, std::move(r.profile), std::move(r.tree)};
}

// The inputs' trees merged; throws when a path output is asked for and no input has paths.
CallTree merged_tree(const std::vector<MergeInput> &inputs, bool needed, const char *what)
{
    std::vector<const CallTree *> trees;
    for (const MergeInput &in : inputs) {
        if (in.tree)
            trees.push_back(&*in.tree);
        else if (needed)
            std::cerr << "jmethodtime: warning: " << in.file << " has no call paths (\"paths\"): " << what
                      << " leaves it out (jmethodtime --json writes them)\n";
    }
    if (needed && trees.empty())
        throw Error(std::string("no report has call paths (\"paths\"), which ") + what +
                    " needs: write the reports with this jmethodtime's --json");
    return merge_trees(trees);
}

std::string pid_list(const Profile &p)
{
    std::string s;
    for (const ReportSource &src : p.sources)
        s += (s.empty() ? "" : ", ") + source_text(src);
    return s;
}

// CLI11's error as the tool's one line.
// merge's options as given.
struct MergeArgs {
    std::vector<std::string> files;
    bool json = false, csv = false, folded = false, tree = false, by_source = false;
    std::string flamegraph, pprof, output, sort = "excl", metric = "wall", top_s = "20", min_percent_s = "0.5";
    std::string factor_s = "2", outlier_calls_s = "100", min_calls_s = "0";
};

void add_merge_options(CLI::App &app, MergeArgs &a)
{
    app.add_option("FILE", a.files, "JSON reports (jmethodtime --json), or merges of them")->required();
    auto *j = app.add_flag("--json", a.json, "One JSON document: the summed report, its sources and outliers");
    auto *c = app.add_flag("--csv", a.csv, "CSV instead of the table")->excludes(j);
    auto *f = app.add_flag("--folded", a.folded, "The merged call paths as collapsed stacks")->excludes(j)->excludes(c);
    app.add_flag("--tree", a.tree, "The merged call tree")->excludes(j)->excludes(c)->excludes(f);
    app.add_flag("--by-source", a.by_source, "Rows per source (table, --json's by_source, --csv's source column)");
    app.add_option("--flamegraph", a.flamegraph, "Also write the merged call paths as a flame graph to FILE.html");
    app.add_option("--pprof", a.pprof, "Also write a gzipped pprof profile, each sample labelled host and pid");
    app.add_option("--top", a.top_s, "Rows in the table (0: all)")->capture_default_str();
    app.add_option("--sort", a.sort, "Table order: " + names_of(kSortKeys))
        ->check(one_of(kSortKeys, "a sort key"))
        ->capture_default_str();
    app.add_option("--metric", a.metric, "--folded's value and the flame graph's first metric: " + names_of(kMetrics))
        ->check(one_of(kMetrics, "a metric"))
        ->capture_default_str();
    app.add_option("--min-percent", a.min_percent_s, "--tree: leave out paths under this % of the total")
        ->capture_default_str();
    app.add_option("--min-calls", a.min_calls_s, "Leave out methods with fewer calls (after summing)");
    app.add_option("--outlier-factor", a.factor_s,
                   "Outliers: per-call times over F times the median or under 1/F of it")
        ->capture_default_str();
    app.add_option("--outlier-min-calls", a.outlier_calls_s,
                   "Outliers: compare only sources with at least N calls of the method")
        ->capture_default_str();
    app.add_option("-o,--output", a.output, "Write the report to FILE instead of standard output");
}

// Each input's call paths, labelled with its hosts and pids ("a+b" for an input that is a merge).
std::vector<PprofSource> pprof_sources(const std::vector<MergeInput> &inputs)
{
    std::vector<PprofSource> sources;
    for (const MergeInput &in : inputs) {
        if (!in.tree)
            continue;
        std::string host, pid;
        for (const ReportSource &s : in.profile.sources) {
            host += (host.empty() ? "" : "+") + s.hostname;
            pid += (pid.empty() ? "" : "+") + std::to_string(s.pid);
        }
        sources.push_back(PprofSource{&*in.tree, {{"host", host}, {"pid", pid}}});
    }
    return sources;
}

int run_merge(int argc, const char *const argv[])
{
    CLI::App app{"jmethodtime merge: one report over the JSON reports of many hosts or JVMs (jmethodtime --json):\n"
                 "counts and times summed exactly, one source per report, and the sources whose time per call\n"
                 "is far from the others' (outliers).\n\n  jmethodtime merge [OPTIONS] FILE.json...\n",
                 "jmethodtime merge"};
    MergeArgs args;
    add_merge_options(app, args);
    auto &[files, json, csv, folded, tree, by_source, flamegraph, pprof, output, sort, metric, top_s, min_percent_s,
           factor_s, outlier_calls_s, min_calls_s] = args;
    if (std::optional<int> done = parse_subcommand(app, argc, argv, "merge"))
        return *done;
    TableOptions table;
    OutlierOptions oopts;
    double min_percent = 0.5;
    uint64_t min_calls = 0;
    try {
        table.top = static_cast<size_t>(checked_integer(kTopRule, top_s));
        min_percent = checked_number(kMinPercentRule, min_percent_s);
        min_calls = checked_integer(kMinCallsRule, min_calls_s);
        oopts.factor = std::stod(factor_s);
        oopts.min_calls = std::stoull(outlier_calls_s);
        if (!(oopts.factor > 1))
            throw std::invalid_argument("--outlier-factor: '" + factor_s + "' must be a number above 1");
    } catch (const std::exception &e) {
        return usage_error("merge", e.what());
    }
    table.sort = kSortKeys.at(sort);

    std::vector<MergeInput> inputs;
    for (const std::string &file : files)
        inputs.push_back(load(file));
    const std::vector<std::string> warnings = merge_differences(inputs);
    for (const std::string &w : warnings)
        std::cerr << "jmethodtime merge: warning: " << w << "; merged all the same\n";
    Profile merged = merge_profiles(inputs);
    merged.methods = rows_with_min_calls(merged.methods, min_calls);
    const std::vector<Outlier> outliers = find_outliers(inputs, oopts);
    const bool paths_needed = folded || tree || !flamegraph.empty() || !pprof.empty();
    const CallTree paths = merged_tree(inputs, paths_needed, "--folded, --tree, --flamegraph and --pprof");
    const bool any_paths =
        std::any_of(inputs.begin(), inputs.end(), [](const MergeInput &in) { return bool(in.tree); });

    ReportSink sink(output, "-o");
    ReportSink pprof_sink(pprof, "--pprof");
    ReportSink flame_sink(flamegraph, "--flamegraph");
    if (!pprof.empty()) {
        write_pprof(pprof_sink.stream(), pprof_sources(inputs), merged.duration_ns);
        pprof_sink.flush();
    }
    if (!flamegraph.empty()) {
        write_flamegraph_html(flame_sink.stream(), paths,
                              "jmethodtime merge of " + std::to_string(inputs.size()) +
                                  " reports: " + pid_list(merged) + "; " +
                                  filter_text(merged.packages, merged.class_globs, merged.method_globs),
                              kMetrics.at(metric), merged.methods);
        flame_sink.flush();
    }
    std::ostream &out = sink.stream();
    if (folded)
        write_folded(out, paths, kMetrics.at(metric));
    else if (tree)
        write_merge_tree(out, merged, inputs.size(), paths, min_percent);
    else if (json)
        out << merge_json(merged, any_paths ? &paths : nullptr, inputs, outliers, warnings, by_source)
                   .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
    else if (csv)
        write_merge_csv(out, merged, inputs, table.sort, by_source);
    else
        write_merge_table(out, merged, inputs, outliers, oopts, table, by_source);
    sink.flush();
    return 0;
}

int run_diff(int argc, const char *const argv[])
{
    CLI::App app{"jmethodtime diff: two JSON reports (jmethodtime --json or jmethodtime merge --json) compared\n"
                 "method by method: calls and times per call before and after, sorted by the change.\n\n"
                 "  jmethodtime diff [OPTIONS] BASE.json NEW.json\n",
                 "jmethodtime diff"};
    std::string base_file, new_file, flamegraph, output, metric = "wall", top_s = "20", min_calls_s = "0";
    bool json = false, folded = false;
    app.add_option("BASE", base_file, "The report before")->required();
    app.add_option("NEW", new_file, "The report after")->required();
    auto *j = app.add_flag("--json", json, "One JSON document: methods[] with base and new");
    app.add_flag("--folded", folded, "Call paths in FlameGraph's difffolded format: STACK BASE NEW per line")
        ->excludes(j);
    app.add_option("--flamegraph", flamegraph,
                   "Also write a differential flame graph to FILE.html (widths from NEW, colour from the change)");
    app.add_option("--metric", metric, "--folded's value and the flame graph's widths: " + names_of(kMetrics))
        ->check(one_of(kMetrics, "a metric"))
        ->capture_default_str();
    app.add_option("--top", top_s, "Rows in the table (0: all)")->capture_default_str();
    app.add_option("--min-calls", min_calls_s, "Leave out methods with fewer calls in both reports");
    app.add_option("-o,--output", output, "Write the report to FILE instead of standard output");
    if (std::optional<int> done = parse_subcommand(app, argc, argv, "diff"))
        return *done;
    size_t top = 20;
    uint64_t min_calls = 0;
    try {
        top = static_cast<size_t>(checked_integer(kTopRule, top_s));
        min_calls = checked_integer(kMinCallsRule, min_calls_s);
    } catch (const std::exception &e) {
        return usage_error("diff", e.what());
    }
    LoadedReport base = read_report(base_file), now = read_report(new_file);
    const std::string arch_note = architecture_difference(base.profile, now.profile, base_file, new_file);
    if (!arch_note.empty())
        std::cerr << "jmethodtime diff: warning: " << arch_note << "\n";
    std::vector<DiffRow> rows = diff_methods(base.profile.methods, now.profile.methods);
    if (min_calls)
        rows.erase(std::remove_if(rows.begin(), rows.end(),
                                  [min_calls](const DiffRow &r) {
                                      return (!r.base || r.base->calls < min_calls) &&
                                             (!r.now || r.now->calls < min_calls);
                                  }),
                   rows.end());
    const bool paths_needed = folded || !flamegraph.empty();
    if (paths_needed && (!base.tree || !now.tree))
        throw Error((!base.tree ? base_file : new_file) +
                    " has no call paths (\"paths\"), which --folded and --flamegraph need: write it with this "
                    "jmethodtime's --json");
    ReportSink sink(output, "-o");
    ReportSink flame_sink(flamegraph, "--flamegraph");
    if (!flamegraph.empty()) {
        write_diff_flamegraph_html(flame_sink.stream(), *base.tree, *now.tree,
                                   "jmethodtime diff: " + base_file + " -> " + new_file, kMetrics.at(metric));
        flame_sink.flush();
    }
    std::ostream &out = sink.stream();
    if (folded)
        write_diff_folded(out, *base.tree, *now.tree, kMetrics.at(metric));
    else if (json)
        out << diff_json(rows, base.profile, now.profile).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
    else
        write_diff_table(out, rows, base_file + " (" + pid_list(base.profile) + ")",
                         new_file + " (" + pid_list(now.profile) + ")", top);
    sink.flush();
    return 0;
}

}  // namespace

bool is_fleet_command(int argc, const char *const argv[])
{
    if (argc < 2)
        return false;
    const std::string cmd = argv[1];
    return cmd == "merge" || cmd == "diff";
}

int run_fleet(int argc, const char *const argv[])
{
    const std::string cmd = argv[1];
    try {
        return cmd == "merge" ? run_merge(argc, argv) : run_diff(argc, argv);
    } catch (const Error &e) {
        std::cerr << "jmethodtime " << cmd << ": " << e.what() << std::endl;
        return 1;
    }
}

}  // namespace jmt
