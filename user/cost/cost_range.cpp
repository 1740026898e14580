#include "cost/cost_range.h"

#include <algorithm>
#include <string>

#include "gaps.h"

namespace jmt {

namespace {

uint64_t times(uint64_t ns, double f) { return static_cast<uint64_t>(static_cast<double>(ns) * f); }

// A filtered-out event's cost over a traced one's, from the calibration (1 without one).
double rejected_ratio(const ProbeCost &cal)
{
    if (cal.traced_event_ns == 0)
        return 1.0;
    return std::min(1.0, static_cast<double>(cal.rejected_event_ns) / static_cast<double>(cal.traced_event_ns));
}

ProbeCost clamped(const ProbeCost &c, const ProbeCost &lo, const ProbeCost &hi)
{
    return {std::clamp(c.traced_event_ns, lo.traced_event_ns, hi.traced_event_ns),
            std::clamp(c.rejected_event_ns, lo.rejected_event_ns, hi.rejected_event_ns)};
}

// The likely cost lowered (not below the range's low end) until the widest
// row keeps kWidestUntracedShare of the untraced CPU time, or its raw time if less.
void cap_by_widest(CostRange &r, const TrapEvidence &e)
{
    const MethodStats &w = e.widest;
    const double taken = static_cast<double>(events_cost_ns(w.events_incl, w.traced_incl, r.likely));
    const double keep =
        std::min(static_cast<double>(w.cpu_incl_ns), kWidestUntracedShare * static_cast<double>(e.untraced_cpu_ns));
    const double allowed = static_cast<double>(w.cpu_incl_ns) - keep;
    if (taken <= 0 || taken <= allowed)
        return;
    const double f = allowed / taken;
    r.likely = {std::max(r.lo.traced_event_ns, times(r.likely.traced_event_ns, f)),
                std::max(r.lo.rejected_event_ns, times(r.likely.rejected_event_ns, f))};
    r.paid_capped = true;
}

// The likely cost from what the JVM paid per event on average, when the range
// holds it: split between traced and filtered-out events at the calibration's
// ratio (traced x t + rejected x ratio x t), a traced event's share at most the
// top, the filtered-out ones' the rest of the average.
void take_paid(CostRange &r, const TrapEvidence &e, double ratio)
{
    r.paid_ns_per_event = e.paid_ns_per_event;
    const uint64_t top = r.hi.traced_event_ns;
    const uint64_t traced_events = std::min(e.traced_events, e.events);
    const uint64_t rejected_events = e.events - traced_events;
    const double weight = static_cast<double>(traced_events) + ratio * static_cast<double>(rejected_events);
    uint64_t traced = std::min(top, weight > 0 ? times(e.paid_ns_per_event, static_cast<double>(e.events) / weight)
                                               : e.paid_ns_per_event);
    const double rest = static_cast<double>(e.paid_ns_per_event) * static_cast<double>(e.events) -
                        static_cast<double>(traced) * static_cast<double>(traced_events);
    uint64_t rejected = rejected_events
                            ? static_cast<uint64_t>(std::max(0.0, rest) / static_cast<double>(rejected_events))
                            : times(traced, ratio);
    // The windows' figure also rests on their own two gaps' edges (programs timed and not), each
    // known to a bucket: that far under the low end, it is the low end.
    const uint64_t lo = r.lo.traced_event_ns;
    if (e.paid_by_windows && traced < lo && traced >= lo - 2 * (lo >> JMT_GAP_SUB_BITS)) {
        traced = lo;
        rejected = std::max(rejected, r.lo.rejected_event_ns);
    }
    if (e.paid_ns_per_event > top || traced < lo || rejected < r.lo.rejected_event_ns) {
        r.paid_why =
            (e.paid_by_windows ? "the windows with one probe detached put " : "the JVM's CPU per I/O call put ") +
            std::to_string(e.paid_ns_per_event) + " ns on an event, outside the range: " +
            (e.paid_by_windows ? e.windows_outside_why : std::string("its I/O does not follow its work"));
        return;
    }
    r.likely = {traced, std::min(rejected, top)};
    r.likely_from = e.paid_by_windows ? CostSource::Windows : CostSource::Paid;
    cap_by_widest(r, e);
}

}  // namespace

uint64_t edge_plus_refill(uint64_t edge_ns)
{
    return edge_ns + std::min(times(edge_ns, kRefillShare), std::max(kRefillMaxNs, times(edge_ns, kRefillDearShare)));
}

uint64_t refill_bound_ns(uint64_t edge_ns) { return std::max(kRefillBoundNs, times(edge_ns, kRefillBoundShare)); }

uint64_t events_cost_ns(uint64_t events, uint64_t traced, const ProbeCost &cost)
{
    const uint64_t rejected = events > traced ? events - traced : 0;
    return traced * cost.traced_event_ns + rejected * cost.rejected_event_ns;
}

CostRange cost_range(const TrapEvidence &e)
{
    CostRange r;
    const double ratio = rejected_ratio(e.calibrated);
    if (measured_edge_ns(e.gaps) > 0) {
        r.basis = CostBasis::Gaps;
        const uint64_t low = edge_low_ns(e.gaps.edge_ns);
        const uint64_t likely = edge_plus_refill(e.gaps.edge_ns);
        r.lo = {low, times(low, ratio)};
        r.likely = {likely, times(likely, ratio)};
    } else {
        r.basis = CostBasis::Calibration;
        r.lo = {times(e.calibrated.traced_event_ns, 1 / kUnmeasuredSpread),
                times(e.calibrated.rejected_event_ns, 1 / kUnmeasuredSpread)};
        r.likely = e.calibrated;
    }
    uint64_t top = 0;
    if (e.jvm_ns_per_event > 0) {
        const uint64_t basis_ns = r.basis == CostBasis::Gaps ? e.gaps.edge_ns : e.calibrated.traced_event_ns;
        const uint64_t one_event = basis_ns + refill_bound_ns(basis_ns);
        r.top = e.jvm_ns_per_event >= one_event ? CostTop::JvmCpu : CostTop::TrapAndRefill;
        r.jvm_ns_per_event = e.jvm_ns_per_event;
        top = std::max(e.jvm_ns_per_event, one_event);
    } else {
        r.top = CostTop::Unmeasured;
        top = times(r.likely.traced_event_ns, kUnmeasuredSpread * (e.shared_probes ? 2 : 1));
    }
    top = std::max(top, r.lo.traced_event_ns);
    r.hi = {top, top};
    r.likely = clamped(r.likely, r.lo, r.hi);
    r.likely_from = r.basis == CostBasis::Gaps ? CostSource::Gaps : CostSource::Calibrated;
    r.paid_why = e.paid_why;
    if (e.paid_ns_per_event > 0)
        take_paid(r, e, ratio);
    return r;
}

bool range_wider_than_likely(const CostRange &range)
{
    return range.hi.traced_event_ns - range.lo.traced_event_ns > range.likely.traced_event_ns;
}

}  // namespace jmt
