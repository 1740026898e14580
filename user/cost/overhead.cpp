#include "cost/overhead.h"

#include <algorithm>

namespace jmt {

Overhead overhead_since(const OverheadTotals &now, const OverheadTotals &then)
{
    Overhead o;
    o.events = now.events - then.events;
    o.traced_events = now.traced_events - then.traced_events;
    if (now.jvm_cpu_ns && then.jvm_cpu_ns && *now.jvm_cpu_ns >= *then.jvm_cpu_ns)
        o.jvm_cpu_ns = *now.jvm_cpu_ns - *then.jvm_cpu_ns;
    if (now.jvm_runq_ns && then.jvm_runq_ns && *now.jvm_runq_ns >= *then.jvm_runq_ns)
        o.jvm_runq_ns = *now.jvm_runq_ns - *then.jvm_runq_ns;
    return o;
}

std::optional<double> runq_share(const Overhead &overhead)
{
    if (!overhead.jvm_runq_ns || overhead.jvm_cpu_ns == 0)
        return std::nullopt;
    const double runq = static_cast<double>(*overhead.jvm_runq_ns);
    return runq / (runq + static_cast<double>(overhead.jvm_cpu_ns));
}

uint64_t overhead_ns(const Overhead &overhead, const ProbeCost &cost)
{
    const uint64_t traced = std::min(overhead.traced_events, overhead.events);
    return traced * cost.traced_event_ns + (overhead.events - traced) * cost.rejected_event_ns;
}

std::optional<double> trap_share(const Overhead &overhead, const ProbeCost &cost)
{
    const uint64_t trap_ns = overhead_ns(overhead, cost);
    if (overhead.jvm_cpu_ns == 0 || trap_ns == 0)
        return std::nullopt;
    return static_cast<double>(trap_ns) / static_cast<double>(overhead.jvm_cpu_ns);
}

ProbeCost trap_cost(const Profile &profile)
{
    return profile.corrected ? profile.probe_cost : profile.cost_range.likely;
}

void OverheadGuard::start(uint64_t start_ns, const OverheadTotals &totals)
{
    window_start_ns_ = start_ns;
    at_start_ = totals;
    over_ = 0;
}

std::optional<double> OverheadGuard::feed(uint64_t now_ns, const OverheadTotals &totals, const ProbeCost &cost)
{
    const Overhead window = overhead_since(totals, at_start_);
    window_start_ns_ = now_ns;
    at_start_ = totals;
    const double share = trap_share(window, cost).value_or(0);
    if (window.jvm_cpu_ns >= kOverheadMinCpuNs && share > max_share_)
        over_++;
    else
        over_ = 0;
    if (over_ >= kOverheadTripWindows)
        return share;
    return std::nullopt;
}

void settle_overhead(Profile &profile)
{
    const ProbeCost cost = trap_cost(profile);
    Overhead &o = profile.overhead;
    o.trap_ns = overhead_ns(o, cost);
    o.trap_share = trap_share(o, cost);
    o.runq_share = runq_share(o);
    o.saturated = o.runq_share && *o.runq_share >= kSaturatedRunqShare;
}

}  // namespace jmt
