#include "cost/cost_range.h"

#include <algorithm>

#include "cost/correction.h"
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

ProbeCost times(const ProbeCost &c, double f)
{
    return {static_cast<uint64_t>(static_cast<double>(c.traced_event_ns) * f),
            static_cast<uint64_t>(static_cast<double>(c.rejected_event_ns) * f)};
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

std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before)
{
    if (before.size() != now.size())
        return now;
    std::vector<uint64_t> out(now.size());
    for (size_t b = 0; b < now.size(); b++)
        out[b] = now[b] > before[b] ? now[b] - before[b] : 0;
    return out;
}

CostRange cost_range(const GapSummary &gaps, const ProbeCost &calibrated)
{
    CostRange r;
    if (gaps.samples >= kMinGapSamples && gaps.edge_ns > 0) {
        r.basis = CostBasis::Gaps;
        // A filtered-out event costs what a traced one does less the work it skips.
        const double rejected_ratio =
            calibrated.traced_event_ns ? std::min(1.0, static_cast<double>(calibrated.rejected_event_ns) /
                                                           static_cast<double>(calibrated.traced_event_ns))
                                       : 1.0;
        // The edge is known to a bucket's width (a 1/2^JMT_GAP_SUB_BITS part of its power of
        // two): the range starts one width below it.
        auto rejected = [rejected_ratio](uint64_t traced) {
            return static_cast<uint64_t>(static_cast<double>(traced) * rejected_ratio);
        };
        const uint64_t low = gaps.edge_ns - (gaps.edge_ns >> JMT_GAP_SUB_BITS);
        r.lo = {low, rejected(low)};
        // The top is the edge plus the refill margin, for both kinds of event: a filtered-out
        // event is the same trap and refill and runs less of the programs, so it costs at most
        // as much. The calibration times the tool's own process, not the JVM: it does not move
        // the top (measurements in docs/accuracy.md).
        const uint64_t top = static_cast<uint64_t>(static_cast<double>(gaps.edge_ns) * (1 + kRefillMargin));
        r.hi = {top, top};
    } else {
        r.basis = CostBasis::Calibration;
        r.lo = times(calibrated, 1 / kCalibrationSpread);
        r.hi = times(calibrated, kCalibrationSpread);
    }
    return r;
}

ProbeCost likely_cost(const CostRange &range)
{
    return {range.lo.traced_event_ns + (range.hi.traced_event_ns - range.lo.traced_event_ns) / 10,
            range.lo.rejected_event_ns + (range.hi.rejected_event_ns - range.lo.rejected_event_ns) / 10};
}

TimeBounds time_bounds(const MethodStats &raw, const CostRange &range)
{
    const MethodStats low = without_probe_cost(raw, range.hi);
    const MethodStats high = without_probe_cost(raw, range.lo);
    TimeBounds b;
    auto set = [](uint64_t (&out)[2], uint64_t lo, uint64_t hi) {
        out[0] = std::min(lo, hi);
        out[1] = std::max(lo, hi);
    };
    set(b.wall_incl_ns, low.wall_incl_ns, high.wall_incl_ns);
    set(b.wall_excl_ns, low.wall_excl_ns, high.wall_excl_ns);
    set(b.cpu_incl_ns, low.cpu_incl_ns, high.cpu_incl_ns);
    set(b.cpu_excl_ns, low.cpu_excl_ns, high.cpu_excl_ns);
    set(b.wall_foreign_ns, low.wall_foreign_ns, high.wall_foreign_ns);
    set(b.cpu_foreign_ns, low.cpu_foreign_ns, high.cpu_foreign_ns);
    return b;
}

}  // namespace jmt
