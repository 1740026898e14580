#include "cost/evidence.h"

#include <algorithm>
#include <cmath>

#include "cost/overhead.h"
#include "gaps.h"

namespace jmt {

namespace {

// Lower end (ns) of the bucket holding quantile q of the counted gaps.
uint64_t gap_quantile(const std::vector<uint64_t> &hist, uint64_t total, double q)
{
    const double target = q * static_cast<double>(total);
    uint64_t acc = 0;
    for (size_t b = 0; b + 1 < hist.size(); b++) {
        acc += hist[b];
        if (static_cast<double>(acc) >= target && acc > 0)
            return jmt_gap_bucket_low_ns(static_cast<uint32_t>(b));
    }
    return 0;
}

// ns per event of the JVM's CPU time over the window, rounded up, with what
// the readings may have missed added: a tick at either end, and the time
// after an early last reading on every CPU. The I/O threads' own CPU time
// (schedstat, to the ns; traced) is part of it: when /proc/PID/stat's ticks
// read less, they lagged, and that time per event is the ceiling (what the JVM
// paid per event is that time less its untraced work, whatever the traps cost).
uint64_t jvm_ceiling_ns(const Overhead &o, const JvmWork &traced, unsigned cpus)
{
    if (o.jvm_cpu_ns == 0 || o.events == 0)
        return 0;
    uint64_t missed = 2 * kCpuTickNs;
    if (o.jvm_cpu_early)
        missed += kCpuReadPeriodNs * (cpus ? cpus : 1);
    const uint64_t cpu = std::max(o.jvm_cpu_ns + missed, traced.cpu_ns);
    return (cpu + o.events - 1) / o.events;
}

}  // namespace

GapSummary summarize_gaps(const std::vector<uint64_t> &hist)
{
    GapSummary s;
    if (hist.size() != JMT_GAP_BUCKETS)
        return s;
    for (size_t b = 0; b + 1 < hist.size(); b++)
        s.samples += hist[b];
    if (s.samples == 0)
        return s;
    s.edge_ns = gap_quantile(hist, s.samples, kGapEdgeQuantile);
    s.median_ns = gap_quantile(hist, s.samples, 0.5);
    return s;
}

uint64_t measured_edge_ns(const GapSummary &gaps) { return gaps.samples >= kMinGapSamples ? gaps.edge_ns : 0; }

uint64_t edge_low_ns(uint64_t edge_ns) { return edge_ns - (edge_ns >> JMT_GAP_SUB_BITS); }

std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before)
{
    if (before.size() != now.size())
        return now;
    std::vector<uint64_t> out(now.size());
    for (size_t b = 0; b < now.size(); b++)
        out[b] = now[b] > before[b] ? now[b] - before[b] : 0;
    return out;
}

uint64_t paid_per_event(const JvmWork &untraced, const JvmWork &traced, uint64_t events, std::string &why)
{
    why.clear();
    if (untraced.duration_ns == 0) {
        why = "the JVM was not measured before its probes went on";
        return 0;
    }
    for (const JvmWork *w : {&untraced, &traced}) {
        if (w->io_calls < kMinWorkIoCalls || w->cpu_ns < kMinWorkCpuNs) {
            why = std::string("too little I/O or CPU time ") + (w == &untraced ? "before the trace" : "in the trace") +
                  " to compare the JVM's CPU per I/O call";
            return 0;
        }
    }
    if (events == 0) {
        why = "no probe events";
        return 0;
    }
    const double paid = (cpu_per_io_call(traced) - cpu_per_io_call(untraced)) * static_cast<double>(traced.io_calls) /
                        static_cast<double>(events);
    if (paid < 1) {
        why = "the JVM's CPU per I/O call did not grow with its probes on (its I/O does not follow its work)";
        return 0;
    }
    return static_cast<uint64_t>(paid + 0.5);
}

std::string windows_outside_why(const ProbeWindowsCost &w)
{
    const double edge = static_cast<double>(w.gaps_edge_ns);
    const double trace_edge = w.trace_gaps_edge_ns ? static_cast<double>(w.trace_gaps_edge_ns) : edge;
    // Their own figure, before the trace's edge took the place of theirs.
    const double own = static_cast<double>(w.per_event_ns) - (trace_edge - edge);
    if (w.gaps_edge_ns && own < static_cast<double>(edge_low_ns(w.gaps_edge_ns)))
        return "their own reading, " + std::to_string(static_cast<int64_t>(own)) +
               " ns, is under one trap of their gaps (" + std::to_string(w.gaps_edge_ns) +
               " ns): the host's pace changed from one window to the next";
    if (w.gaps_edge_ns && std::abs(trace_edge - edge) > kWindowsPhaseShare * edge)
        return "the host ran at another pace in them than in the trace (their gaps' edge " +
               std::to_string(w.gaps_edge_ns) + " ns, the trace's " + std::to_string(w.trace_gaps_edge_ns) + " ns)";
    return "its work per call changed";
}

TrapEvidence gather_evidence(const Profile &p, unsigned cpus)
{
    TrapEvidence e;
    e.gaps = summarize_gaps(p.gap_hist);
    e.calibrated = p.calibrated_cost;
    e.jvm_ns_per_event = jvm_ceiling_ns(p.overhead, p.traced_work, cpus);
    e.shared_probes = !p.shared_probes.empty();
    e.events = p.overhead.events;
    e.traced_events = p.overhead.traced_events;
    e.paid_ns_per_event = paid_per_event(p.untraced_work, p.traced_work, e.events, e.paid_why);
    const ProbeWindowsCost &windows = p.probe_windows;
    if (e.paid_ns_per_event == 0 && windows.per_event_ns > 0) {
        e.paid_ns_per_event = windows.per_event_ns;
        e.paid_by_windows = true;
        e.windows_outside_why = windows_outside_why(windows);
        e.paid_why.clear();
    } else if (e.paid_ns_per_event == 0 && !windows.why.empty()) {
        e.paid_why += "; " + windows.why;
    }
    for (const MethodRow &row : p.methods)
        if (row.stats.cpu_incl_ns > e.widest.cpu_incl_ns)
            e.widest = row.stats;
    if (e.paid_ns_per_event > 0 && !e.paid_by_windows)  // the untraced CPU per I/O call is known
        e.untraced_cpu_ns =
            static_cast<uint64_t>(cpu_per_io_call(p.untraced_work) * static_cast<double>(p.traced_work.io_calls));
    return e;
}

}  // namespace jmt
