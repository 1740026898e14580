#include "report/merge_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "report/report_json.h"

namespace jmt {

using nlohmann::json;

namespace {

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        out.push_back(line);
    return out;
}

// text from its first line for which starts(line) holds (all of it when none does).
void write_from(std::ostream &out, const std::string &text, const std::function<bool(const std::string &)> &starts)
{
    const std::vector<std::string> lines = lines_of(text);
    size_t first = 0;
    while (first < lines.size() && !starts(lines[first]))
        first++;
    if (first == lines.size())
        first = 0;
    for (size_t i = first; i < lines.size(); i++)
        out << lines[i] << "\n";
}

// The table of profile without write_table's single-trace header.
void write_table_body(std::ostream &out, const Profile &profile, const TableOptions &opts)
{
    std::ostringstream table;
    write_table(table, profile, opts);
    write_from(out, table.str(), [](const std::string &l) {
        return l.find(" calls; top ") != std::string::npos || l.rfind("No traced method", 0) == 0;
    });
}

std::string factor_text(double f)
{
    char buf[32];
    snprintf(buf, sizeof buf, f >= 10 ? "%.0fx" : "%.2fx", f);
    return buf;
}

std::string csv_field(const std::string &s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string source_key(const MergeInput &in)
{
    std::string s;
    for (const ReportSource &src : in.profile.sources)
        s += (s.empty() ? "" : "+") + src.hostname + ":" + std::to_string(src.pid);
    return s.empty() ? in.file : s;
}

json sources_json(const Profile &p)
{
    json a = json::array();
    for (const ReportSource &s : p.sources)
        a.push_back(source_json(s));
    return a;
}

}  // namespace

std::string merge_header(const Profile &merged, size_t reports)
{
    std::string s = "Merged " + std::to_string(reports) + (reports == 1 ? " report: " : " reports: ");
    for (size_t i = 0; i < merged.sources.size(); i++)
        s += (i ? ", " : "") + source_text(merged.sources[i]);
    s += "; " + filter_text(merged.packages, merged.class_globs, merged.method_globs) + "; traces of up to " +
         format_duration(merged.duration_ns) + "\n";
    s += merged.corrected ? "Times exclude each source's probe cost, as calibrated where it was traced; counts and "
                            "times are the sources' sums"
                          : "Times as measured (--raw): each probe event inside a call adds its cost to it; counts and "
                            "times are the sources' sums";
    return s;
}

void write_outliers(std::ostream &out, const std::vector<MergeInput> &inputs, const std::vector<Outlier> &outliers,
                    const OutlierOptions &o)
{
    const std::string rule = "inclusive elapsed time per call against the median of the sources with at least " +
                             std::to_string(o.min_calls) + " calls; over " + factor_text(o.factor) + " or under " +
                             factor_text(1 / o.factor);
    if (inputs.size() < o.min_sources) {
        out << "Outliers: none looked for (" << inputs.size() << (inputs.size() == 1 ? " report" : " reports")
            << "; the median needs at least " << o.min_sources << ")\n";
        return;
    }
    if (outliers.empty()) {
        out << "Outliers: none (" << rule << ")\n";
        return;
    }
    out << "Outliers (" << rule << "):\n";
    std::vector<std::vector<std::string>> cells;
    for (const Outlier &x : outliers)
        cells.push_back({input_label(inputs[x.input]), factor_text(x.factor),
                         format_duration(static_cast<uint64_t>(std::llround(x.per_call_ns))) + "/call",
                         "median " + format_duration(static_cast<uint64_t>(std::llround(x.median_ns))) + " of " +
                             std::to_string(x.compared),
                         std::to_string(x.calls) + " calls", x.klass + "." + x.method + x.signature});
    std::vector<size_t> w(cells.front().size(), 0);
    for (const auto &row : cells)
        for (size_t c = 0; c < row.size(); c++)
            w[c] = std::max(w[c], row[c].size());
    for (const auto &row : cells) {
        out << "  ";
        for (size_t c = 0; c < row.size(); c++) {
            const bool left = c == 0 || c + 1 == row.size();
            const std::string pad(w[c] - row[c].size(), ' ');
            out << (left ? row[c] + (c + 1 == row.size() ? "" : pad) : pad + row[c])
                << (c + 1 == row.size() ? "" : "  ");
        }
        out << "\n";
    }
}

void write_merge_table(std::ostream &out, const Profile &merged, const std::vector<MergeInput> &inputs,
                       const std::vector<Outlier> &outliers, const OutlierOptions &oopts, const TableOptions &opts,
                       bool by_source)
{
    out << merge_header(merged, inputs.size()) << "\n";
    if (!by_source) {
        write_table_body(out, merged, opts);
    } else {
        for (const MergeInput &in : inputs) {
            out << "\n== " << input_label(in) << ": " << in.file << " ==\n";
            write_table_body(out, in.profile, opts);
        }
    }
    out << "\n";
    write_outliers(out, inputs, outliers, oopts);
}

void write_merge_tree(std::ostream &out, const Profile &merged, size_t reports, const CallTree &tree,
                      double min_percent)
{
    out << merge_header(merged, reports) << "\n";
    std::ostringstream text;
    write_tree(text, merged, tree, min_percent);
    write_from(out, text.str(), [](const std::string &l) {
        return l.find(" call paths, ") != std::string::npos || l.rfind("No call path was recorded", 0) == 0;
    });
}

json merge_json(const Profile &merged, const CallTree *tree, const std::vector<MergeInput> &inputs,
                const std::vector<Outlier> &outliers, const std::vector<std::string> &warnings, bool by_source)
{
    std::ostringstream text;
    write_json(text, merged, tree);
    json doc = json::parse(text.str());
    doc.erase("source");
    doc["sources"] = sources_json(merged);
    json files = json::array();
    for (const MergeInput &in : inputs)
        files.push_back(in.file);
    doc["files"] = std::move(files);
    doc["warnings"] = warnings;
    json o = json::array();
    for (const Outlier &x : outliers) {
        const MergeInput &in = inputs[x.input];
        json row = {{"class", x.klass},         {"method", x.method},
                    {"signature", x.signature}, {"file", in.file},
                    {"calls", x.calls},         {"per_call_ns", x.per_call_ns},
                    {"median_ns", x.median_ns}, {"factor", x.factor},
                    {"compared", x.compared},   {"sources", sources_json(in.profile)}};
        o.push_back(std::move(row));
    }
    doc["outliers"] = std::move(o);
    if (by_source) {
        json rows = json::array();
        for (const MergeInput &in : inputs) {
            std::ostringstream one;
            write_json(one, in.profile);
            rows.push_back({{"file", in.file},
                            {"sources", sources_json(in.profile)},
                            {"methods", json::parse(one.str()).at("methods")}});
        }
        doc["by_source"] = std::move(rows);
    }
    return doc;
}

void write_merge_csv(std::ostream &out, const Profile &merged, const std::vector<MergeInput> &inputs, SortKey sort,
                     bool by_source)
{
    if (!by_source) {
        write_csv(out, merged, sort);
        return;
    }
    bool header = true;
    for (const MergeInput &in : inputs) {
        std::ostringstream text;
        write_csv(text, in.profile, sort);
        const std::vector<std::string> lines = lines_of(text.str());
        for (size_t i = 0; i < lines.size(); i++) {
            std::string line = lines[i];
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            if (i == 0) {
                if (header)
                    out << "source," << line << "\r\n";
                header = false;
                continue;
            }
            out << csv_field(source_key(in)) << "," << line << "\r\n";
        }
    }
}

std::string change_text(const DiffRow &row)
{
    if (!row.base)
        return "new";
    if (!row.now)
        return "gone";
    if (std::isinf(row.change))
        return "+inf";
    char buf[32];
    snprintf(buf, sizeof buf, "%+.1f%%", row.change * 100);
    return buf;
}

void write_diff_table(std::ostream &out, const std::vector<DiffRow> &rows, const std::string &base_label,
                      const std::string &new_label, size_t top)
{
    out << "Base: " << base_label << "\nNew:  " << new_label << "\n";
    const size_t shown = top && rows.size() > top ? top : rows.size();
    out << rows.size() << " methods; top " << shown
        << " by the change of their exclusive elapsed time per call (methods in one report only first)\n\n";
    const std::vector<std::string> header = {"Calls Base", "Calls New",      "Excl/Call Base", "Excl/Call New",
                                             "Change",     "Incl/Call Base", "Incl/Call New",  "p50 Base",
                                             "p50 New",    "p99 Base",       "p99 New"};
    // A percentile, "-" without a histogram; a p99 that moved beyond the histograms' resolution ends in " !".
    auto pct = [](const std::optional<MethodStats> &s, double q, bool moved) {
        if (!s || s->latency.empty())
            return std::string("-");
        return format_duration(s->latency.percentile_ns(q)) + (moved ? " !" : "");
    };
    auto count = [](const std::optional<MethodStats> &s) { return s ? std::to_string(s->calls) : std::string("-"); };
    auto time = [](const std::optional<MethodStats> &s, bool excl) {
        if (!s)
            return std::string("-");
        return format_duration(
            static_cast<uint64_t>(std::llround(per_call(excl ? s->wall_excl_ns : s->wall_incl_ns, s->calls))));
    };
    std::vector<std::vector<std::string>> body;
    for (size_t i = 0; i < shown; i++) {
        const DiffRow &r = rows[i];
        body.push_back({count(r.base), count(r.now), time(r.base, true), time(r.now, true), change_text(r),
                        time(r.base, false), time(r.now, false), pct(r.base, 0.5, false), pct(r.now, 0.5, false),
                        pct(r.base, 0.99, false), pct(r.now, 0.99, r.p99_moved)});
    }
    std::vector<size_t> w;
    for (const std::string &h : header)
        w.push_back(h.size());
    for (const auto &cells : body)
        for (size_t c = 0; c < cells.size(); c++)
            w[c] = std::max(w[c], cells[c].size());
    auto line = [&](const std::vector<std::string> &cells, const std::string &last) {
        for (size_t c = 0; c < cells.size(); c++)
            out << std::string(w[c] - cells[c].size(), ' ') << cells[c] << "  ";
        out << last << "\n";
    };
    line(header, "Method");
    for (size_t i = 0; i < shown; i++)
        line(body[i], rows[i].klass + "." + rows[i].method + rows[i].signature);
    if (std::any_of(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown),
                    [](const DiffRow &r) { return r.p99_moved; }))
        out << "\n! p99 moved by more than the histograms' resolution (both sides over " << kP99MinCalls << " calls)\n";
}

json diff_json(const std::vector<DiffRow> &rows, const Profile &base, const Profile &now)
{
    auto side = [](const DiffRow &r, const std::optional<MethodStats> &s) -> json {
        if (!s)
            return nullptr;
        json j = stats_json(*s, false);
        j["class"] = r.klass;
        j["method"] = r.method;
        j["signature"] = r.signature;
        return j;
    };
    json methods = json::array();
    for (const DiffRow &r : rows) {
        json row = {{"class", r.klass},        {"method", r.method},    {"signature", r.signature},
                    {"base", side(r, r.base)}, {"new", side(r, r.now)}, {"change", nullptr},
                    {"p99_moved", r.p99_moved}};
        if (r.base && r.now && std::isfinite(r.change))
            row["change"] = r.change;
        methods.push_back(std::move(row));
    }
    auto report = [](const Profile &p) {
        return json{
            {"sources", sources_json(p)}, {"duration_ns", p.duration_ns}, {"times", p.corrected ? "corrected" : "raw"}};
    };
    return {{"schema_version", kReportSchemaVersion},
            {"kind", "diff"},
            {"change", "exclusive elapsed time per call, new / base - 1"},
            {"base", report(base)},
            {"new", report(now)},
            {"methods", std::move(methods)}};
}

}  // namespace jmt
