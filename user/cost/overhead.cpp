#include "cost/overhead.h"

namespace jmt {

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

}  // namespace jmt
