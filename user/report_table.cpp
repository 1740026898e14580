#include <algorithm>
#include <array>
#include <iomanip>

#include "report.h"

namespace jmt {

namespace {

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

std::string packages_text(const std::vector<std::string> &packages)
{
    if (packages.empty())
        return "all methods";
    std::string s = packages.size() == 1 ? "package " : "packages ";
    for (size_t i = 0; i < packages.size(); i++)
        s += (i ? ", " : "") + packages[i];
    return s;
}

constexpr size_t kNumericColumns = 5;
using Cells = std::array<std::string, kNumericColumns>;

Cells cells_of(const MethodStats &s)
{
    return {std::to_string(s.calls), format_duration(s.wall_incl_ns), format_duration(s.wall_excl_ns),
            format_duration(s.cpu_incl_ns), format_duration(s.cpu_excl_ns)};
}

}  // namespace

void write_table(std::ostream &out, const Profile &profile, const TableOptions &opts)
{
    uint64_t calls = 0;
    for (const auto &m : profile.methods)
        calls += m.stats.calls;
    out << "Traced pid " << profile.pid << " for " << format_duration(profile.duration_ns) << ": "
        << packages_text(profile.packages) << "\n";
    if (profile.methods.empty()) {
        out << "No traced method completed a call during the trace. Check --package (JVM form "
               "org/postgresql or org.postgresql) and that the code ran while tracing.\n";
    } else {
        std::vector<MethodRow> rows = sorted_rows(profile.methods, opts.sort);
        size_t shown = opts.top == 0 ? rows.size() : std::min(opts.top, rows.size());
        out << profile.methods.size() << " methods, " << calls << " calls; top " << shown << " by "
            << sort_description(opts.sort) << "\n\n";

        const Cells header = {"Calls", "Elapsed Incl", "Elapsed Excl", "CPU Incl", "CPU Excl"};
        std::vector<Cells> body;
        std::array<size_t, kNumericColumns> width{};
        for (size_t c = 0; c < kNumericColumns; c++)
            width[c] = header[c].size();
        for (size_t i = 0; i < shown; i++) {
            body.push_back(cells_of(rows[i].stats));
            for (size_t c = 0; c < kNumericColumns; c++)
                width[c] = std::max(width[c], body.back()[c].size());
        }
        auto print_cells = [&](const Cells &cells) {
            for (size_t c = 0; c < kNumericColumns; c++)
                out << std::setw(static_cast<int>(width[c])) << cells[c] << "  ";
        };
        print_cells(header);
        out << "Method\n";
        for (size_t i = 0; i < shown; i++) {
            print_cells(body[i]);
            out << rows[i].klass << "." << rows[i].method << rows[i].signature << "\n";
        }
    }
    std::vector<std::string> diag = diagnostic_lines(profile.diag);
    if (!diag.empty()) {
        out << "\nDiagnostics:\n";
        for (const auto &line : diag)
            out << "  " << line << "\n";
    }
}

}  // namespace jmt
