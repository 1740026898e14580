#include "overhead.h"

namespace jmt {

void OverheadGuard::start(uint64_t start_ns, const Overhead &totals)
{
    window_start_ns_ = start_ns;
    at_start_ = totals;
    over_ = 0;
}

std::optional<double> OverheadGuard::feed(uint64_t now_ns, const Overhead &totals, const ProbeCost &cost)
{
    Overhead window;
    window.events = totals.events - at_start_.events;
    window.traced_events = totals.traced_events - at_start_.traced_events;
    window.jvm_cpu_ns = totals.jvm_cpu_ns >= at_start_.jvm_cpu_ns ? totals.jvm_cpu_ns - at_start_.jvm_cpu_ns : 0;
    window_start_ns_ = now_ns;
    at_start_ = totals;

    const double share = window.jvm_cpu_ns > 0 ? static_cast<double>(overhead_ns(window, cost)) /
                                                     static_cast<double>(window.jvm_cpu_ns)
                                               : 0;
    if (window.jvm_cpu_ns >= kOverheadMinCpuNs && share > max_share_)
        over_++;
    else
        over_ = 0;
    if (over_ >= kOverheadTripWindows)
        return share;
    return std::nullopt;
}

}  // namespace jmt
