#include "cost/probe_windows.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "cost/evidence.h"
#include "jvm/jvm_work.h"
#include "loader/tracer.h"
#include "util/error.h"
#include "util/lifecycle.h"

namespace jmt {

namespace {

// One kind of window, its windows summed, per traced call: CPU time less the
// programs' run time (y, ns), entry and return events, and the programs' run
// time per event (ns).
struct PerCall {
    double y = 0, entries = 0, returns = 0, entry_prog = 0, return_prog = 0, calls = 0;
};

PerCall per_call(const std::vector<ProbeWindow> &windows, ProbeWindowKind kind, double returns_per_call)
{
    double cpu = 0, calls = 0, entries = 0, returns = 0, entry_prog = 0, return_prog = 0;
    for (const ProbeWindow &w : windows)
        if (w.kind == kind) {
            cpu += static_cast<double>(w.cpu_ns);
            calls += static_cast<double>(w.traced_calls);
            entries += static_cast<double>(w.entries);
            returns += static_cast<double>(w.returns);
            entry_prog += static_cast<double>(w.entry_prog_ns);
            return_prog += static_cast<double>(w.return_prog_ns);
        }
    if (kind == ProbeWindowKind::ReturnOnly)
        calls = returns_per_call > 0 ? returns / returns_per_call : 0;
    PerCall k;
    k.calls = calls;
    if (calls <= 0)
        return k;
    k.y = (cpu - entry_prog - return_prog) / calls;
    k.entries = entries / calls;
    k.returns = returns / calls;
    k.entry_prog = entries > 0 ? entry_prog / entries : 0;
    k.return_prog = returns > 0 ? return_prog / returns : 0;
    return k;
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

// One cycle's (or all windows') e and r, programs included; per_event_ns 0 with why when they do not tell.
ProbeWindowsCost solve_windows(const std::vector<ProbeWindow> &windows)
{
    ProbeWindowsCost c;
    const PerCall both = per_call(windows, ProbeWindowKind::Both, 0);
    const PerCall k[3] = {both, per_call(windows, ProbeWindowKind::ReturnOnly, both.returns),
                          per_call(windows, ProbeWindowKind::EntryOnly, 0)};
    for (const PerCall &kind : k)
        if (kind.calls < static_cast<double>(kMinProbeWindowCalls)) {
            c.why = "too few traced calls after the trace (fewer than " + std::to_string(kMinProbeWindowCalls) +
                    " in a window)";
            return c;
        }
    double wer[3];
    if (!solve3(k, wer)) {
        c.why = "the windows after the trace could not tell an entry's cost from a return's";
        return c;
    }
    const double e = wer[1] + both.entry_prog, r = wer[2] + both.return_prog;
    if (wer[0] <= 0 || e <= 0 || r <= 0) {
        c.why = "the JVM's CPU per traced call did not follow its probes in the windows after the trace (its "
                "work per call changed)";
        return c;
    }
    c.entry_ns = rounded(e);
    c.return_ns = rounded(r);
    c.per_event_ns = rounded((e * both.entries + r * both.returns) / (both.entries + both.returns));
    return c;
}

uint64_t median(std::vector<uint64_t> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2] + 1) / 2;
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
    const TraceProgress p = tracer.progress();
    out.entries = p.diag.entries;
    out.returns = p.diag.returns;
    out.traced_calls = p.diag.traced_calls;
    std::tie(out.entry_prog_ns, out.return_prog_ns) = tracer.method_program_ns();
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
            end_ns};
}

}  // namespace

ProbeWindowsCost solve_probe_windows(const std::vector<ProbeWindow> &windows)
{
    ProbeWindowsCost c;
    std::vector<uint64_t> entry, ret, per_event;
    for (size_t i = 0; i + 4 <= windows.size(); i += 4) {
        const ProbeWindowsCost cycle = solve_windows({windows.begin() + i, windows.begin() + i + 4});
        if (cycle.per_event_ns == 0) {
            c.why = cycle.why;
            continue;
        }
        entry.push_back(cycle.entry_ns);
        ret.push_back(cycle.return_ns);
        per_event.push_back(cycle.per_event_ns);
    }
    c.windows = windows.size();
    if (windows.size() < 4) {
        c.why = "the JVM made too few traced calls after the trace";
        return c;
    }
    if (2 * per_event.size() <= windows.size() / 4)  // a majority of the cycles must tell
        return c;
    c.why.clear();
    c.entry_ns = median(entry);
    c.return_ns = median(ret);
    c.per_event_ns = median(per_event);
    return c;
}

std::vector<ProbeWindow> run_probe_windows(Tracer &tracer, int pid, const ProbeWindowWait &wait, int cycles,
                                           uint64_t window_ns)
{
    // The programs' run time, while this fd is open (it adds ~20 ns to each run, in every window alike).
    const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    std::vector<ProbeWindow> windows;
    const ProbeWindowKind cycle[] = {ProbeWindowKind::Both, ProbeWindowKind::ReturnOnly, ProbeWindowKind::Both,
                                     ProbeWindowKind::EntryOnly};
    bool whole = true;
    try {
        for (int i = 0; i < 4 * cycles && whole; i++) {
            const ProbeWindowKind kind = cycle[i % 4];
            tracer.set_method_probes(kind != ProbeWindowKind::ReturnOnly, kind != ProbeWindowKind::EntryOnly);
            ProbeWindow r0, r1;
            uint64_t t0 = 0;
            whole = wait(monotonic_ns() + kProbeWindowSettleNs) && read_now(tracer, pid, r0) &&
                    wait((t0 = monotonic_ns()) + window_ns) && read_now(tracer, pid, r1);
            if (whole)
                windows.push_back(between(kind, r0, r1, t0, monotonic_ns()));
            if (whole && i == 0 && windows[0].traced_calls < kMinProbeWindowCalls)
                break;  // the JVM went quiet with the trace's end: nothing to measure
        }
    } catch (const Error &) {
        whole = false;  // a probe could not be attached again: the JVM is gone
    }
    if (stats_fd >= 0)
        close(stats_fd);
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
        plan.why = "not measured after the trace: the JVM exited, or the trace stopped on its overhead";
    else if (!facts.own_probes || !p.shared_probes.empty())
        plan.why = "not measured after the trace: its probes are shared (several JVMs, or another tracer)";
    else if (calls_per_window < static_cast<double>(kMinProbeWindowCalls))
        plan.why = "not measured after the trace: too few traced calls per second in it";
    plan.run = plan.why.empty();
    return plan;
}

ProbeWindowsCost measure_probe_windows(Tracer &tracer, int pid, const ProbeWindowWait &wait)
{
    const uint64_t start = monotonic_ns();
    const std::vector<ProbeWindow> windows = run_probe_windows(tracer, pid, wait);
    ProbeWindowsCost cost;
    if (windows.empty())
        cost.why = "the windows after the trace were cut short";
    else
        cost = solve_probe_windows(windows);
    cost.duration_ns = monotonic_ns() - start;
    return cost;
}

}  // namespace jmt
