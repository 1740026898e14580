#include <algorithm>
#include <unordered_map>
#include <set>
#include <tuple>
#include <vector>

#include "util/printable.h"
#include "util/time_text.h"
#include "cost/cost_range.h"
#include "report/cost_lines.h"
#include "report/report.h"

namespace jmt {

namespace {

// Separates columns; the Method column follows the last numeric column.
constexpr const char *kGap = "  ";
// The numeric columns of a line: calls and the four times, then with offcpu
// the time off a CPU split into run-queue wait and blocked time, then with
// --foreign the part of the exclusive times inside untraced callees.
using Cells = std::vector<std::string>;
using Widths = std::vector<size_t>;

struct Columns {
    bool offcpu = false;
    bool foreign = false;
    bool latency = false;  // p50, p99 and Max of each call's own elapsed time
};

Cells header_cells(Columns cols)
{
    Cells h = {"Calls", "Elapsed Incl", "Elapsed Excl", "CPU Incl", "CPU Excl"};
    if (cols.latency)
        h.insert(h.end(), {"p50", "p99", "Max"});
    if (cols.offcpu)
        h.insert(h.end(), {"RunQ Incl", "RunQ Excl", "Blocked Incl", "Blocked Excl"});
    if (cols.foreign) {
        h.push_back("Foreign");
        h.push_back("CPU Foreign");
    }
    return h;
}

const char *sort_description(SortKey key)
{
    switch (key) {
    case SortKey::Calls: return "calls";
    case SortKey::Incl: return "inclusive elapsed time";
    case SortKey::Excl: return "exclusive elapsed time";
    case SortKey::CpuIncl: return "inclusive on-CPU time";
    case SortKey::CpuExcl: return "exclusive on-CPU time";
    case SortKey::Foreign: return "elapsed time in untraced callees";
    case SortKey::RunqIncl: return "inclusive run-queue wait";
    case SortKey::RunqExcl: return "exclusive run-queue wait";
    case SortKey::BlockedIncl: return "inclusive blocked time";
    case SortKey::BlockedExcl: return "exclusive blocked time";
    }
    return "";
}

// A row's cells; corrected times show their bounds ("121 us ±18%"), or in a
// row whose bounds are wider than its correction the likely figure ("≈ 121 us").
// Run-queue and blocked times take no correction (the probes' cost is on-CPU time).
Cells cells_of(const MethodRow &r, Columns cols, bool corrected)
{
    const MethodStats &s = r.stats;
    const TimeBounds &b = r.bounds;
    const bool likely_only = corrected && b.wider_than_correction;
    auto time = [corrected, likely_only](uint64_t ns, const uint64_t(&bounds)[2]) {
        if (likely_only)
            return "\u2248 " + format_duration(ns);
        return corrected ? format_bounded(ns, bounds) : format_duration(ns);
    };
    Cells c = {std::to_string(s.calls), time(s.wall_incl_ns, b.wall_incl_ns), time(s.wall_excl_ns, b.wall_excl_ns),
               time(s.cpu_incl_ns, b.cpu_incl_ns), time(s.cpu_excl_ns, b.cpu_excl_ns)};
    if (cols.latency) {
        // Elapsed time mostly probe cost (its bounds over 2x apart): each call's is at most what is shown.
        const bool unsure = corrected && b.wall_incl_ns[0] * 2 < b.wall_incl_ns[1];
        const std::string mark = likely_only ? "\u2248 " : unsure ? "\u2264 " : "";
        if (s.latency.empty())
            c.insert(c.end(), {"-", "-", "-"});
        else
            c.insert(c.end(), {mark + format_duration(s.latency.percentile_ns(0.50)),
                               mark + format_duration(s.latency.percentile_ns(0.99)),
                               mark + format_duration(s.latency.max_ns())});
    }
    if (cols.offcpu)
        c.insert(c.end(), {format_duration(s.runq_incl_ns), format_duration(s.runq_excl_ns),
                           format_duration(blocked_incl_ns(s)), format_duration(blocked_excl_ns(s))});
    if (cols.foreign) {
        c.push_back(time(s.wall_foreign_ns, b.wall_foreign_ns));
        c.push_back(time(s.cpu_foreign_ns, b.cpu_foreign_ns));
    }
    return c;
}

// Columns a cell takes on a terminal: its UTF-8 code points ("±" is one).
size_t display_width(const std::string &cell)
{
    return static_cast<size_t>(std::count_if(cell.begin(), cell.end(),
                                             [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

// "class.method(signature)", never truncated: it is the last column.
// A trailing " *" marks a row whose times are mostly probe cost, " \u2020" one whose
// bounds are wider than its correction (see the footnotes).
std::string method_text(const MethodRow &r)
{
    return printable(qualified_name(r)) + (r.probe_dominated ? " *" : "") +
           (r.bounds.wider_than_correction ? " \u2020" : "");
}

// Each numeric column is as wide as its widest cell, header included.
Widths widths_of(const Cells &header, const std::vector<Cells> &body)
{
    Widths w(header.size());
    for (size_t c = 0; c < header.size(); c++)
        w[c] = display_width(header[c]);
    for (const Cells &cells : body)
        for (size_t c = 0; c < header.size(); c++)
            w[c] = std::max(w[c], display_width(cells[c]));
    return w;
}

// Right-aligns each cell to its column; every line's last column starts at sum(w) + columns * gap.
void write_line(std::ostream &out, const Cells &cells, const Widths &w, const std::string &last)
{
    for (size_t c = 0; c < w.size(); c++)
        out << std::string(w[c] - display_width(cells[c]), ' ') << cells[c] << kGap;
    out << last << "\n";
}

// --per-thread: "worker-1 (4242)", "virtual thread 21"; the row of the calls
// not split by thread (tid 0) shows its name alone.
std::string thread_text(const MethodRow &r)
{
    if (r.vthread)
        return "virtual thread " + std::to_string(r.vthread);
    if (r.tid == 0)
        return r.thread;
    return (r.thread.empty() ? "?" : r.thread) + " (" + std::to_string(r.tid) + ")";
}

// Split by thread, a left-aligned Thread column (as wide as its widest cell)
// comes between the numeric columns and Method.
// Split by JVM (several JVMs, --per-jvm), a left-aligned JVM column ("pid 1234")
// comes next, then split by thread a Thread column, each as wide as its widest cell.
void write_rows(std::ostream &out, const std::vector<MethodRow> &rows, bool per_thread, bool per_jvm, Columns cols,
                bool corrected)
{
    const Cells header = header_cells(cols);
    std::vector<Cells> body;
    body.reserve(rows.size());
    for (const MethodRow &r : rows)
        body.push_back(cells_of(r, cols, corrected));
    const Widths w = widths_of(header, body);
    // The text columns before Method: their header, and each row's cell.
    std::vector<std::pair<std::string, Cells>> text;
    if (per_jvm) {
        text.push_back({"JVM", {}});
        for (const MethodRow &r : rows)
            text.back().second.push_back(r.pid ? "pid " + std::to_string(r.pid) : "all");
    }
    if (per_thread) {
        text.push_back({"Thread", {}});
        for (const MethodRow &r : rows)
            text.back().second.push_back(thread_text(r));
    }
    auto last = [&](size_t row, const std::string &method) {
        std::string line;
        for (const auto &[name, cells] : text) {
            size_t width = name.size();
            for (const std::string &c : cells)
                width = std::max(width, c.size());
            const std::string &cell = row == SIZE_MAX ? name : cells[row];
            line += cell + std::string(width - cell.size(), ' ') + kGap;
        }
        return line + method;
    };
    write_line(out, header, w, last(SIZE_MAX, "Method"));
    for (size_t i = 0; i < rows.size(); i++)
        write_line(out, body[i], w, last(i, method_text(rows[i])));
}

// Whether s spent at least 1% of its elapsed time off a CPU.
bool off_cpu_a_while(const MethodStats &s)
{
    return s.wall_incl_ns > 0 && (s.runq_incl_ns + blocked_incl_ns(s)) * 100 >= s.wall_incl_ns;
}

// The run-queue and blocked columns: asked for, sorted by, or where a row spent
// at least 1% of its elapsed time off a CPU (a CPU-bound trace stays narrow).
// --slower-than: the slowest calls (at most top, 0: all) under the rows, each
// with its times, start, thread and traced callers.
void write_slow_calls(std::ostream &out, const Profile &profile, size_t top)
{
    if (!profile.slower_than_ns)
        return;
    const std::vector<SlowCall> &calls = profile.slow_calls;
    const size_t shown = top && calls.size() > top ? top : calls.size();
    out << "\nCalls of " << format_duration(profile.slower_than_ns) << " or more (--slower-than): " << calls.size()
        << " kept";
    if (profile.diag.slow_calls_dropped || profile.diag.slow_calls_lost)
        out << ", " << profile.diag.slow_calls_dropped + profile.diag.slow_calls_lost << " more not kept";
    out << (shown < calls.size() ? ", the " + std::to_string(shown) + " slowest shown" : std::string()) << "\n";
    for (size_t i = 0; i < shown; i++) {
        const SlowCall &c = calls[i];
        out << "  " << format_duration(c.wall_ns) << " (CPU " << format_duration(c.cpu_ns) << ", run queue "
            << format_duration(c.runq_ns) << ", blocked " << format_duration(c.blocked_ns) << ")  "
            << format_utc(c.start_unix_ns) << "  " << printable(c.thread.empty() ? "?" : c.thread) << " (" << c.tid
            << ")";
        if (c.vthread)
            out << " virtual thread " << c.vthread;
        if (!c.host.empty())
            out << "  " << printable(c.host);
        out << "\n    ";
        if (c.path_cut)
            out << "[" << c.path_cut << " callers] > ";
        for (size_t f = 0; f < c.path.size(); f++)
            out << (f ? " > " : "") << printable(c.path[f]);
        out << "\n";
    }
}

bool shows_offcpu(const std::vector<MethodRow> &rows, const TableOptions &opts)
{
    if (opts.offcpu || opts.sort == SortKey::RunqIncl || opts.sort == SortKey::RunqExcl ||
        opts.sort == SortKey::BlockedIncl || opts.sort == SortKey::BlockedExcl)
        return true;
    return std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return off_cpu_a_while(r.stats); });
}

void write_methods(std::ostream &out, const Profile &profile, const TableOptions &opts)
{
    uint64_t calls = 0;
    for (const MethodRow &m : profile.methods)
        calls += m.stats.calls;
    std::vector<MethodRow> rows = sorted_rows(profile.methods, opts.sort);
    if (opts.top != 0 && rows.size() > opts.top)
        rows.resize(opts.top);
    const bool per_thread = per_thread_profile(profile);
    if (per_thread) {
        std::set<std::tuple<std::string, std::string, std::string>> methods;
        std::set<uint64_t> threads;
        for (const MethodRow &m : profile.methods) {
            methods.emplace(m.klass, m.method, m.signature);
            if (row_thread(m))
                threads.insert(row_thread(m));
        }
        out << profile.methods.size() << " rows: " << methods.size()
            << (methods.size() == 1 ? " method in " : " methods in ") << threads.size()
            << (threads.size() == 1 ? " thread, " : " threads, ") << calls << " calls; top " << rows.size() << " by "
            << sort_description(opts.sort) << "\n\n";
    } else {
        out << profile.methods.size() << " methods, " << calls << " calls; top " << rows.size() << " by "
            << sort_description(opts.sort) << "\n\n";
    }
    const bool latency =
        std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return !r.stats.latency.empty(); });
    write_rows(out, rows, per_thread, per_jvm_rows(profile.methods),
               Columns{shows_offcpu(rows, opts), profile.foreign, latency}, profile.corrected);
    const bool dominated = std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return r.probe_dominated; });
    if (dominated)
        out << "\n* The probes' own cost was over half of these calls' measured time: their times are known only "
               "within their \u00b1 bounds (\u2264: at most), from the per-event cost range above (trace fewer, "
               "larger methods to see into them)\n";
    if (profile.corrected &&
        std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return r.bounds.wider_than_correction; }))
        out << (dominated ? "" : "\n")
            << "\u2020 The bounds of these rows are wider than the probes' cost taken out of them: \u2248 marks "
               "the likely figure, an estimate its bounds do not confirm (JSON has them; the header says why)\n";
    write_slow_calls(out, profile, opts.top);
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

// What was traced, for how long, and how the times were corrected.
void write_header(std::ostream &out, const Profile &profile)
{
    out << traced_text(profile) << "\n";
    write_probe_cost(out, profile);
    if (const std::string vt = virtual_threads_text(profile); !vt.empty())
        out << vt << "\n";
    if (const std::string pinned = pinned_text(profile); !pinned.empty())
        out << pinned << "\n";
    if (profile.overhead.events > 0)
        out << overhead_text(profile) << "\n";
    if (const std::string probes = probes_text(profile); !probes.empty())
        out << probes << "\n";
    if (const std::string runq = run_queue_text(profile); !runq.empty())
        out << runq << "\n";
    if (!profile.shared_probes.empty()) {
        out << "Probes shared with";
        for (size_t i = 0; i < profile.shared_probes.size(); i++)
            out << (i ? ", " : " ") << profile.shared_probes[i];
        out << ": every event also ran its programs, which the calibration did not time; the bounds allow up to "
               "twice the probe cost\n";
    }
    if (profile.kernel_memory_bytes > 0) {
        char line[160];
        std::snprintf(line, sizeof(line), "Kernel memory: %.1f MB of BPF maps and programs (%u method id%s)\n",
                      static_cast<double>(profile.kernel_memory_bytes) / (1 << 20), profile.method_ids,
                      profile.method_ids == 1 ? "" : "s");
        out << line;
    }
}

// Depth-first lines of the call tree under parent (0: the roots), children by
// inclusive elapsed time, pruned below min_ns; hidden counts what was left out.
void collect_tree(const std::unordered_map<uint32_t, std::vector<const PathNode *>> &children, uint32_t parent,
                  size_t depth, uint64_t min_ns, std::vector<std::pair<size_t, const PathNode *>> &lines,
                  size_t &hidden)
{
    auto it = children.find(parent);
    if (it == children.end())
        return;
    std::vector<const PathNode *> kids = it->second;
    std::stable_sort(kids.begin(), kids.end(), [](const PathNode *a, const PathNode *b) {
        return a->stats.wall_incl_ns > b->stats.wall_incl_ns;
    });
    for (const PathNode *k : kids) {
        if (k->stats.wall_incl_ns < min_ns || (k->stats.calls == 0 && !children.count(k->id))) {
            hidden++;
            continue;
        }
        lines.emplace_back(depth, k);
        // Depth is bounded by the kernel's stack (JMT_MAX_DEPTH) and ids only grow along a path.
        if (k->id > parent)
            collect_tree(children, k->id, depth + 1, min_ns, lines, hidden);
    }
}

}  // namespace

void write_tree(std::ostream &out, const Profile &profile, const CallTree &tree, double min_percent)
{
    write_header(out, profile);
    std::unordered_map<uint32_t, std::vector<const PathNode *>> children;
    uint64_t total = 0, calls = 0;
    for (const PathNode &n : tree.nodes) {
        children[n.parent].push_back(&n);
        calls += n.stats.calls;
        if (n.parent == 0)
            total += n.stats.wall_incl_ns;
    }
    const uint64_t min_ns = static_cast<uint64_t>(static_cast<long double>(total) * min_percent / 100.0L);
    std::vector<std::pair<size_t, const PathNode *>> lines;
    size_t hidden = 0;
    collect_tree(children, 0, 0, min_ns, lines, hidden);
    if (tree.nodes.empty()) {
        out << "No call path was recorded. Check --package (org/postgresql or org.postgresql), that the code "
               "ran while tracing, and that the JVM runs with -XX:+DTraceMethodProbes.\n";
    } else {
        out << tree.nodes.size() << " call paths, " << calls << " calls; " << lines.size() << " shown";
        if (min_percent > 0)
            out << " (paths under " << min_percent << "% of the elapsed total left out: --min-percent)";
        out << "\n\n";
        // With --foreign the time in untraced callees is in "[untraced callees]" lines (with_untraced_nodes).
        Columns cols;
        for (const auto &line : lines)
            cols.offcpu = cols.offcpu || off_cpu_a_while(line.second->stats);
        const Cells header = header_cells(cols);
        std::vector<Cells> body;
        // Call paths carry no bounds: their times are shown as corrected.
        for (const auto &line : lines) {
            MethodRow path_row;
            path_row.stats = line.second->stats;
            body.push_back(cells_of(path_row, cols, false));
        }
        const Widths w = widths_of(header, body);
        write_line(out, header, w, "Call tree");
        for (size_t i = 0; i < lines.size(); i++)
            write_line(out, body[i], w, std::string(2 * lines[i].first, ' ') + frame_label(*lines[i].second));
        if (hidden)
            out << "(" << hidden << " smaller call paths and their callees not shown)\n";
    }
    write_diagnostics(out, profile.diag);
}

std::string filter_text(const std::vector<std::string> &packages, const std::vector<std::string> &class_globs,
                        const std::vector<std::string> &method_globs)
{
    std::string s;
    auto add = [&s](const char *one, const char *many, const std::vector<std::string> &items) {
        if (items.empty())
            return;
        s += s.empty() ? "" : "; ";
        s += items.size() == 1 ? one : many;
        for (size_t i = 0; i < items.size(); i++)
            s += (i ? ", " : " ") + items[i];
    };
    add("package", "packages", packages);
    add("class", "classes", class_globs);
    add("method", "methods", method_globs);
    return s.empty() ? "all methods" : s;
}

namespace {

// "pid 12", or with several JVMs "3 JVMs (pids 12, 34, 56)".
std::string jvms_text(const Profile &profile)
{
    if (profile.jvm_pids.size() <= 1)
        return "pid " + std::to_string(profile.pid);
    std::string pids;
    for (int pid : profile.jvm_pids)
        pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    return std::to_string(profile.jvm_pids.size()) + " JVMs (pids " + pids + ")";
}

}  // namespace

std::string traced_text(const Profile &profile)
{
    const std::string filter = filter_text(profile.packages, profile.class_globs, profile.method_globs);
    if (profile.interval)
        return "Interval " + std::to_string(profile.interval) + " ending " + format_utc(profile.end_unix_ns) + " (" +
               format_duration(profile.duration_ns) + "), " + jvms_text(profile) + ": " + filter;
    return "Traced " + jvms_text(profile) + " for " + format_duration(profile.duration_ns) + ": " + filter;
}

void write_table(std::ostream &out, const Profile &profile, const TableOptions &opts)
{
    write_header(out, profile);
    if (profile.methods.empty())
        out << nothing_traced_text(profile) << "\n";
    else
        write_methods(out, profile, opts);
    write_diagnostics(out, profile.diag);
}

}  // namespace jmt
