#include <algorithm>
#include <array>

#include "report.h"

namespace jmt {

namespace {

// Separates columns; the Method column follows the last numeric column.
constexpr const char *kGap = "  ";
constexpr size_t kNumericColumns = 5;
using Cells = std::array<std::string, kNumericColumns>;
using Widths = std::array<size_t, kNumericColumns>;

const Cells kHeader = {"Calls", "Elapsed Incl", "Elapsed Excl", "CPU Incl", "CPU Excl"};

const char *sort_description(SortKey key)
{
    switch (key) {
    case SortKey::Calls: return "calls";
    case SortKey::Incl: return "inclusive elapsed time";
    case SortKey::Excl: return "exclusive elapsed time";
    case SortKey::CpuIncl: return "inclusive on-CPU time";
    case SortKey::CpuExcl: return "exclusive on-CPU time";
    }
    return "";
}

// "all methods", "package a/b" or "packages a/b, c/d".
std::string packages_text(const std::vector<std::string> &packages)
{
    if (packages.empty())
        return "all methods";
    std::string s = packages.size() == 1 ? "package " : "packages ";
    for (size_t i = 0; i < packages.size(); i++)
        s += (i ? ", " : "") + packages[i];
    return s;
}

Cells cells_of(const MethodStats &s)
{
    return {std::to_string(s.calls), format_duration(s.wall_incl_ns), format_duration(s.wall_excl_ns),
            format_duration(s.cpu_incl_ns), format_duration(s.cpu_excl_ns)};
}

// "class.method(signature)", never truncated: it is the last column.
std::string method_text(const MethodRow &r) { return r.klass + "." + r.method + r.signature; }

// Each numeric column is as wide as its widest cell, header included.
Widths widths_of(const std::vector<Cells> &body)
{
    Widths w{};
    for (size_t c = 0; c < kNumericColumns; c++)
        w[c] = kHeader[c].size();
    for (const Cells &cells : body)
        for (size_t c = 0; c < kNumericColumns; c++)
            w[c] = std::max(w[c], cells[c].size());
    return w;
}

// Right-aligns each cell to its column; every line's last column starts at sum(w) + 5 * gap.
void write_line(std::ostream &out, const Cells &cells, const Widths &w, const std::string &last)
{
    for (size_t c = 0; c < kNumericColumns; c++)
        out << std::string(w[c] - cells[c].size(), ' ') << cells[c] << kGap;
    out << last << "\n";
}

void write_rows(std::ostream &out, const std::vector<MethodRow> &rows)
{
    std::vector<Cells> body;
    body.reserve(rows.size());
    for (const MethodRow &r : rows)
        body.push_back(cells_of(r.stats));
    const Widths w = widths_of(body);
    write_line(out, kHeader, w, "Method");
    for (size_t i = 0; i < rows.size(); i++)
        write_line(out, body[i], w, method_text(rows[i]));
}

void write_methods(std::ostream &out, const Profile &profile, const TableOptions &opts)
{
    uint64_t calls = 0;
    for (const MethodRow &m : profile.methods)
        calls += m.stats.calls;
    std::vector<MethodRow> rows = sorted_rows(profile.methods, opts.sort);
    if (opts.top != 0 && rows.size() > opts.top)
        rows.resize(opts.top);
    out << profile.methods.size() << " methods, " << calls << " calls; top " << rows.size() << " by "
        << sort_description(opts.sort) << "\n\n";
    write_rows(out, rows);
}

// The probe cost behind the times: taken out, or left in with --raw.
void write_probe_cost(std::ostream &out, const Profile &profile)
{
    const ProbeCost &c = profile.probe_cost;
    if (profile.corrected)
        out << "Times exclude the probes' own cost, calibrated at start-up: "
            << format_duration(c.traced_event_ns) << " per traced event, "
            << format_duration(c.rejected_event_ns)
            << " per filtered-out event (--raw to keep it)\n";
    else
        out << "Times as measured (--raw): each probe event inside a call adds its cost to it\n";
}

void write_diagnostics(std::ostream &out, const Diagnostics &diag)
{
    const std::vector<std::string> lines = diagnostic_lines(diag);
    if (lines.empty())
        return;
    out << "\nDiagnostics:\n";
    for (const std::string &line : lines)
        out << "  " << line << "\n";
}

}  // namespace

void write_table(std::ostream &out, const Profile &profile, const TableOptions &opts)
{
    out << "Traced pid " << profile.pid << " for " << format_duration(profile.duration_ns) << ": "
        << packages_text(profile.packages) << "\n";
    write_probe_cost(out, profile);
    if (profile.methods.empty())
        out << "No traced method completed a call during the trace. Check --package (org/postgresql or "
               "org.postgresql), that the code ran while tracing, and that the JVM runs with "
               "-XX:+DTraceMethodProbes.\n";
    else
        write_methods(out, profile, opts);
    write_diagnostics(out, profile.diag);
}

}  // namespace jmt
