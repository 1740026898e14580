#include "cost/correction.h"

#include <algorithm>
#include <optional>

#include "cost/cost_range.h"
#include "cost/overhead.h"

namespace jmt {

namespace {

// ns the events inside a frame (traced of them traced) added to it.
uint64_t events_cost_ns(uint64_t events, uint64_t traced, const ProbeCost &cost)
{
    const uint64_t rejected = events > traced ? events - traced : 0;
    return traced * cost.traced_event_ns + rejected * cost.rejected_event_ns;
}

}  // namespace

MethodStats without_probe_cost(const MethodStats &stats, const ProbeCost &cost)
{
    auto minus = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    const uint64_t incl = events_cost_ns(stats.events_incl, stats.traced_incl, cost);
    const uint64_t excl = events_cost_ns(stats.events_excl, stats.traced_excl, cost);
    MethodStats out = stats;
    out.wall_incl_ns = minus(stats.wall_incl_ns, incl);
    out.cpu_incl_ns = minus(stats.cpu_incl_ns, incl);
    out.wall_excl_ns = minus(stats.wall_excl_ns, excl);
    out.cpu_excl_ns = minus(stats.cpu_excl_ns, excl);
    // Within the corrected exclusive times, as the measured ones are.
    const uint64_t foreign = events_cost_ns(stats.events_foreign, stats.traced_foreign, cost);
    out.wall_foreign_ns = std::min(minus(stats.wall_foreign_ns, foreign), out.wall_excl_ns);
    out.cpu_foreign_ns = std::min(minus(stats.cpu_foreign_ns, foreign), out.cpu_excl_ns);
    return out;
}

namespace {

// Both costs times scale, rounded down (so a row that fits the scale fits the cost).
ProbeCost scaled_cost(const ProbeCost &cost, double scale)
{
    return {static_cast<uint64_t>(static_cast<double>(cost.traced_event_ns) * scale),
            static_cast<uint64_t>(static_cast<double>(cost.rejected_event_ns) * scale)};
}

// ns per call of a one-event leaf row (see CostBound), or nullopt.
std::optional<double> leaf_ns(const MethodStats &s)
{
    if (s.calls < kMinLeafCalls || s.events_incl != s.calls || s.events_excl != s.calls ||
        s.traced_excl != s.calls)
        return std::nullopt;
    return static_cast<double>(std::min(s.wall_excl_ns, s.cpu_excl_ns)) / static_cast<double>(s.calls);
}

}  // namespace

CostBound bounded_probe_cost(const std::vector<MethodRow> &rows, const ProbeCost &calibrated,
                             uint64_t top_traced_ns)
{
    CostBound bound;
    bound.cost = calibrated;
    if (calibrated.traced_event_ns == 0)
        return bound;
    size_t leaves = 0;
    double cheapest = 0;
    const MethodRow *cheapest_row = nullptr;
    for (const MethodRow &r : rows) {
        const std::optional<double> ns = leaf_ns(r.stats);
        if (!ns)
            continue;
        leaves++;
        if (!cheapest_row || *ns < cheapest) {
            cheapest = *ns;
            cheapest_row = &r;
        }
    }
    const double leaf_scale = cheapest / static_cast<double>(calibrated.traced_event_ns);
    const bool within_top = leaf_scale <= kMaxLeafFactor || cheapest <= static_cast<double>(top_traced_ns);
    if (leaves >= kMinLeafRows && within_top && leaf_scale >= 1 / kMaxLeafFactor) {
        bound.scale = leaf_scale;
        bound.source = CostSource::Leaves;
        bound.method = qualified_name(*cheapest_row);
    }
    const double base = bound.scale;  // the scale the rows are checked at
    const ProbeCost scaled = scaled_cost(calibrated, base);
    for (const MethodRow &r : rows) {
        const MethodStats &s = r.stats;
        if (s.events_excl < kMinBoundEvents)
            continue;
        const uint64_t cost = events_cost_ns(s.events_excl, s.traced_excl, scaled);
        const uint64_t measured = std::min(s.wall_excl_ns, s.cpu_excl_ns);
        if (cost == 0 || measured >= cost)
            continue;
        const double scale = static_cast<double>(measured) / static_cast<double>(cost) * base;
        if (scale < bound.scale) {
            bound.scale = scale;
            bound.source = CostSource::Bounded;
            bound.method = qualified_name(r);
        }
    }
    // Rounded down: every row that set or passed the bound still fits it.
    bound.cost = scaled_cost(calibrated, bound.scale);
    return bound;
}

bool probe_dominated(const MethodStats &raw, const ProbeCost &cost)
{
    const uint64_t incl = events_cost_ns(raw.events_incl, raw.traced_incl, cost);
    using wide = unsigned __int128;  // ns sums can exceed 2^64 / 4
    // Against the smaller of elapsed and on-CPU time: each trap is on-CPU time, and a
    // thread waiting for a CPU (or the network) stretches only the elapsed time.
    const uint64_t measured = std::min(raw.wall_incl_ns, raw.cpu_incl_ns);
    return incl > 0 && static_cast<wide>(incl) * 2 > static_cast<wide>(measured);
}

namespace {

ProbeCost lower_of(const ProbeCost &a, const ProbeCost &b)
{
    return {std::min(a.traced_event_ns, b.traced_event_ns), std::min(a.rejected_event_ns, b.rejected_event_ns)};
}

ProbeCost clamped(const ProbeCost &c, const CostRange &r)
{
    return {std::clamp(c.traced_event_ns, r.lo.traced_event_ns, r.hi.traced_event_ns),
            std::clamp(c.rejected_event_ns, r.lo.rejected_event_ns, r.hi.rejected_event_ns)};
}

}  // namespace

void correct_profile(Profile &profile, std::vector<MethodStats *> path_stats)
{
    profile.gaps = summarize_gaps(profile.gap_hist);
    CostRange range = cost_range(profile.gaps, profile.calibrated_cost);
    if (!profile.shared_probes.empty()) {
        // Another tracer's programs ran on every event too, which our calibration
        // did not time: the cost may be up to twice its high end.
        range.hi.traced_event_ns *= 2;
        range.hi.rejected_event_ns *= 2;
    }
    if (!profile.corrected) {
        profile.cost_range = range;
        settle_overhead(profile);
        return;
    }
    // The rows tell more where they can: a one-event leaf's time per call is
    // one event's cost to this JVM plus a getter's few ns, and a row's
    // exclusive time holds at least its events' cost. Both are ceilings.
    CostBound bound = bounded_probe_cost(profile.methods, likely_cost(range), range.hi.traced_event_ns);
    ProbeCost cost = likely_cost(range);
    // The gaps' edge is one trap, measured over thousands of gaps: a row that says an event costs
    // less measured its own time short (an on-CPU slice taken by a switch the programs did not
    // see), and is not believed.
    if (bound.source == CostSource::Bounded && range.basis == CostBasis::Gaps &&
        bound.cost.traced_event_ns < range.lo.traced_event_ns)
        bound = CostBound{cost, 1, CostSource::Calibrated, ""};
    if (bound.source != CostSource::Calibrated) {
        range.hi = lower_of(range.hi, bound.cost);
        range.lo = lower_of(range.lo, range.hi);
        cost = bound.source == CostSource::Leaves ? clamped(bound.cost, range) : likely_cost(range);
    }
    profile.cost_range = range;
    profile.probe_cost = cost;
    profile.cost_source = bound.source != CostSource::Calibrated ? bound.source
                          : range.basis == CostBasis::Gaps      ? CostSource::Gaps
                                                                : CostSource::Calibrated;
    profile.cost_method = bound.method;
    for (MethodRow &row : profile.methods) {
        row.probe_dominated = probe_dominated(row.stats, cost);
        row.bounds = time_bounds(row.stats, range);
        row.stats = without_probe_cost(row.stats, cost);
    }
    for (MethodStats *stats : path_stats)
        *stats = without_probe_cost(*stats, cost);
    settle_overhead(profile);
}

}  // namespace jmt
