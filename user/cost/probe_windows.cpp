#include "cost/probe_windows.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "cost/evidence.h"
#include "gaps.h"
#include "jvm/jvm_work.h"
#include "loader/tracer.h"
#include "util/error.h"
#include "util/lifecycle.h"
#include "util/unique_fd.h"

namespace jmt {

namespace {

// One window per traced call: CPU time less the programs' run time (y, ns),
// and its entry and return events.
struct PerCall {
    double y = 0, entries = 0, returns = 0;
};

// w's calls: its traced frames, or its returns over returns_per_call with the
// return probe alone (its returns meet frames out of step); 0 when too few.
double calls_of(const ProbeWindow &w, double returns_per_call)
{
    const double calls = w.kind != ProbeWindowKind::ReturnOnly ? static_cast<double>(w.traced_calls)
                         : returns_per_call > 0                ? static_cast<double>(w.returns) / returns_per_call
                                                               : 0;
    return calls >= static_cast<double>(kMinProbeWindowCalls) ? calls : 0;
}

// The least disturbed of kind's windows with the programs timed, per traced
// call: the one of least y (another tenant, a GC or a slow phase of the host
// only adds CPU time to a window, whose events stay the same); y 0 when none
// held enough traced calls.
PerCall least_disturbed(const std::vector<ProbeWindow> &windows, ProbeWindowKind kind, double returns_per_call)
{
    PerCall least;
    for (const ProbeWindow &w : windows) {
        const double calls = w.kind == kind && w.programs_timed ? calls_of(w, returns_per_call) : 0;
        if (calls <= 0)
            continue;
        const double y =
            (static_cast<double>(w.cpu_ns) - static_cast<double>(w.entry_prog_ns + w.return_prog_ns)) / calls;
        if (least.y <= 0 || y < least.y)
            least = {y, static_cast<double>(w.entries) / calls, static_cast<double>(w.returns) / calls};
    }
    return least;
}

double det3(const double m[3][3])
{
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// w, e, r from y = w + e x entries + r x returns in the three kinds (Cramer's
// rule); false when the windows cannot tell them apart.
bool solve3(const PerCall (&k)[3], double (&out)[3])
{
    double m[3][3], y[3];
    for (int i = 0; i < 3; i++) {
        m[i][0] = 1;
        m[i][1] = k[i].entries;
        m[i][2] = k[i].returns;
        y[i] = k[i].y;
    }
    const double d = det3(m);
    if (std::fabs(d) < 1e-3)
        return false;
    for (int c = 0; c < 3; c++) {
        double mc[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                mc[i][j] = j == c ? y[i] : m[i][j];
        out[c] = det3(mc) / d;
    }
    return true;
}

uint64_t rounded(double ns) { return ns > 0 ? static_cast<uint64_t>(ns + 0.5) : 0; }

// The gaps' edge of the both-probe windows with the programs timed or not (ns; 0: too few gaps).
uint64_t both_probes_edge_ns(const std::vector<ProbeWindow> &windows, bool programs_timed)
{
    std::vector<uint64_t> hist(JMT_GAP_BUCKETS, 0);
    for (const ProbeWindow &w : windows)
        if (w.kind == ProbeWindowKind::Both && w.programs_timed == programs_timed && w.gap_hist.size() == hist.size())
            for (size_t b = 0; b < hist.size(); b++)
                hist[b] += w.gap_hist[b];
    return measured_edge_ns(summarize_gaps(hist));
}

// What timing the programs added to each event outside their run time, into c
// (ns): the timed windows' gaps' edge over the untimed ones' (c.gaps_edge_ns);
// 0 when either is unknown.
double timing_per_event(const std::vector<ProbeWindow> &windows, ProbeWindowsCost &c)
{
    const uint64_t timed = both_probes_edge_ns(windows, true);
    c.programs_timing_ns = timed && c.gaps_edge_ns && timed > c.gaps_edge_ns ? timed - c.gaps_edge_ns : 0;
    return static_cast<double>(c.programs_timing_ns);
}

// The trace's gaps' edge into c, and trace less windows (c.gaps_edge_ns, their
// programs untimed as in the trace) in ns when both are known, else 0.
double to_trace(uint64_t trace_gaps_edge_ns, ProbeWindowsCost &c)
{
    if (c.gaps_edge_ns == 0)
        return 0;
    if (trace_gaps_edge_ns == 0)
        return 0;
    c.trace_gaps_edge_ns = trace_gaps_edge_ns;
    return static_cast<double>(trace_gaps_edge_ns) - static_cast<double>(c.gaps_edge_ns);
}

// The counts so far, as a ProbeWindow from the programs' load (kind and times unset).
bool read_now(const Tracer &tracer, int pid, ProbeWindow &out)
{
    const auto work = read_jvm_work(pid, 0);
    if (!work)
        return false;
    out = {};
    for (const auto &thread : work->threads)
        out.cpu_ns += thread.second.cpu_ns;
    TraceProgress p = tracer.progress();
    out.entries = p.diag.entries;
    out.returns = p.diag.returns;
    out.traced_calls = p.diag.traced_calls;
    std::tie(out.entry_prog_ns, out.return_prog_ns) = tracer.method_program_ns();
    out.gap_hist = std::move(p.gap_hist);
    return true;
}

// The window of kind between two readings, from start_ns to end_ns.
ProbeWindow between(ProbeWindowKind kind, const ProbeWindow &r0, const ProbeWindow &r1, uint64_t start_ns,
                    uint64_t end_ns)
{
    return {kind,
            r1.cpu_ns - r0.cpu_ns,
            r1.entries - r0.entries,
            r1.returns - r0.returns,
            r1.traced_calls - r0.traced_calls,
            r1.entry_prog_ns - r0.entry_prog_ns,
            r1.return_prog_ns - r0.return_prog_ns,
            start_ns,
            end_ns,
            gaps_since(r1.gap_hist, r0.gap_hist)};
}

}  // namespace

ProbeWindowsCost solve_probe_windows(const std::vector<ProbeWindow> &windows, uint64_t trace_gaps_edge_ns,
                                     bool before_trace)
{
    ProbeWindowsCost c;
    c.windows = windows.size();
    c.before_trace = before_trace;
    const std::string when = before_trace ? "before the trace" : "after the trace";
    // The programs' run time per event and the returns per traced call, over every both-probe window.
    double calls = 0, entries = 0, returns = 0, entry_prog = 0, return_prog = 0;
    for (const ProbeWindow &w : windows)
        if (w.kind == ProbeWindowKind::Both && w.programs_timed && calls_of(w, 0) > 0) {
            calls += static_cast<double>(w.traced_calls);
            entries += static_cast<double>(w.entries);
            returns += static_cast<double>(w.returns);
            entry_prog += static_cast<double>(w.entry_prog_ns);
            return_prog += static_cast<double>(w.return_prog_ns);
        }
    const PerCall k[3] = {least_disturbed(windows, ProbeWindowKind::Both, 0),
                          least_disturbed(windows, ProbeWindowKind::ReturnOnly, calls > 0 ? returns / calls : 0),
                          least_disturbed(windows, ProbeWindowKind::EntryOnly, 0)};
    if (windows.size() < 4 || k[0].y <= 0 || k[1].y <= 0 || k[2].y <= 0) {
        c.why = "the JVM made too few traced calls " + when + " (fewer than " + std::to_string(kMinProbeWindowCalls) +
                " in a window)";
        return c;
    }
    double wer[3];
    if (!solve3(k, wer)) {
        c.why = "the windows " + when + " could not tell an entry's cost from a return's";
        return c;
    }
    // The solved e and r hold the programs' timing where they were timed: it goes, as it is not in the trace.
    c.gaps_edge_ns = both_probes_edge_ns(windows, false);
    const double trap = to_trace(trace_gaps_edge_ns, c) - timing_per_event(windows, c);
    const double e = wer[1] + (entries > 0 ? entry_prog / entries : 0) + trap;
    const double r = wer[2] + (returns > 0 ? return_prog / returns : 0) + trap;
    if (wer[0] <= 0 || e <= 0 || r <= 0) {
        c.why = "the JVM's CPU per traced call did not follow its probes in the windows " + when +
                " (its work per call changed)";
        return c;
    }
    c.entry_ns = rounded(e);
    c.return_ns = rounded(r);
    c.per_event_ns = rounded((e * k[0].entries + r * k[0].returns) / (k[0].entries + k[0].returns));
    return c;
}

std::vector<ProbeWindow> run_probe_windows(Tracer &tracer, int pid, const ProbeWindowWait &wait, int cycles,
                                           uint64_t window_ns)
{
    // The programs' run time, while this fd is open (it adds 30 to 100 ns to each run): off in
    // each cycle's first window, whose gaps are then as in the trace.
    UniqueFd stats;
    std::vector<ProbeWindow> windows;
    const ProbeWindowKind cycle[] = {ProbeWindowKind::Both, ProbeWindowKind::ReturnOnly, ProbeWindowKind::Both,
                                     ProbeWindowKind::EntryOnly};
    bool whole = true;
    try {
        for (int i = 0; i < 4 * cycles && whole; i++) {
            const ProbeWindowKind kind = cycle[i % 4];
            if (i % 4 == 0)
                stats.reset();
            else if (stats.get() < 0)
                stats = UniqueFd(bpf_enable_stats(BPF_STATS_RUN_TIME));  // -1 where the kernel refuses: 0 ns read
            tracer.set_method_probes(kind != ProbeWindowKind::ReturnOnly, kind != ProbeWindowKind::EntryOnly);
            ProbeWindow r0, r1;
            uint64_t t0 = 0;
            whole = wait(monotonic_ns() + kProbeWindowSettleNs) && read_now(tracer, pid, r0) &&
                    wait((t0 = monotonic_ns()) + window_ns) && read_now(tracer, pid, r1);
            if (whole) {
                windows.push_back(between(kind, r0, r1, t0, monotonic_ns()));
                windows.back().programs_timed = i % 4 != 0;
            }
            if (whole && i == 0 && windows[0].traced_calls < kMinProbeWindowCalls)
                break;  // the JVM went quiet with the trace's end: nothing to measure
        }
    } catch (const Error &) {
        whole = false;  // a probe could not be attached again: the JVM is gone
    }
    if (!whole)
        windows.clear();
    return windows;
}

ProbeWindowsPlan plan_probe_windows(const Profile &p, const ProbeWindowsFacts &facts)
{
    ProbeWindowsPlan plan;
    std::string io_why;
    if (facts.raw || facts.intervals || paid_per_event(p.untraced_work, p.traced_work, p.overhead.events, io_why) > 0)
        return plan;
    const double calls_per_window = static_cast<double>(p.overhead.traced_events) / 2 *
                                    static_cast<double>(kProbeWindowNs) /
                                    static_cast<double>(std::max<uint64_t>(p.duration_ns, 1));
    if (!facts.at_work)
        plan.why = "not measured after the trace: the JVM exited (--cost-before measures before the trace), or the "
                   "trace stopped on its overhead";
    else if (!facts.own_probes || !p.shared_probes.empty())
        plan.why = "not measured after the trace: its probes are shared (several JVMs, or another tracer)";
    else if (calls_per_window < static_cast<double>(kMinProbeWindowCalls))
        plan.why = "not measured after the trace: too few traced calls per second in it";
    plan.run = plan.why.empty();
    return plan;
}

ProbeWindowsCost probe_windows_cost(const std::vector<ProbeWindow> &windows, uint64_t duration_ns,
                                    const std::vector<uint64_t> &trace_gap_hist, bool before_trace)
{
    ProbeWindowsCost cost;
    if (windows.empty()) {
        cost.why = std::string("the windows ") + (before_trace ? "before" : "after") + " the trace were cut short";
        cost.before_trace = before_trace;
    } else {
        cost = solve_probe_windows(windows, measured_edge_ns(summarize_gaps(trace_gap_hist)), before_trace);
    }
    cost.duration_ns = duration_ns;
    return cost;
}

ProbeWindowsCost measure_probe_windows(Tracer &tracer, int pid, const ProbeWindowWait &wait,
                                       const std::vector<uint64_t> &trace_gap_hist)
{
    const uint64_t start = monotonic_ns();
    const std::vector<ProbeWindow> windows = run_probe_windows(tracer, pid, wait);
    return probe_windows_cost(windows, monotonic_ns() - start, trace_gap_hist, false);
}

}  // namespace jmt
