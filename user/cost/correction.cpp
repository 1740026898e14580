#include "cost/correction.h"

#include <algorithm>
#include <cmath>

#include <unistd.h>

#include "cost/cost_range.h"
#include "cost/evidence.h"
#include "cost/overhead.h"

namespace jmt {

namespace {

unsigned host_cpus()
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1;
}

}  // namespace

MethodStats without_probe_cost(const MethodStats &stats, const ProbeCost &cost)
{
    // The traps are on-CPU time: at most the on-CPU time is taken out, from
    // elapsed and on-CPU time alike, so that on-CPU + run queue + blocked stays
    // the elapsed time (an on-CPU time of 0 is one not measured: all of it).
    auto taken = [](uint64_t cost_ns, uint64_t cpu_ns) { return cpu_ns ? std::min(cost_ns, cpu_ns) : cost_ns; };
    auto minus = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    const uint64_t incl = taken(events_cost_ns(stats.events_incl, stats.traced_incl, cost), stats.cpu_incl_ns);
    const uint64_t excl = taken(events_cost_ns(stats.events_excl, stats.traced_excl, cost), stats.cpu_excl_ns);
    MethodStats out = stats;
    out.wall_incl_ns = minus(stats.wall_incl_ns, incl);
    out.cpu_incl_ns = minus(stats.cpu_incl_ns, incl);
    out.wall_excl_ns = minus(stats.wall_excl_ns, excl);
    out.cpu_excl_ns = minus(stats.cpu_excl_ns, excl);
    // Within the corrected exclusive times, as the measured ones are.
    const uint64_t foreign =
        taken(events_cost_ns(stats.events_foreign, stats.traced_foreign, cost), stats.cpu_foreign_ns);
    out.wall_foreign_ns = std::min(minus(stats.wall_foreign_ns, foreign), out.wall_excl_ns);
    out.cpu_foreign_ns = std::min(minus(stats.cpu_foreign_ns, foreign), out.cpu_excl_ns);
    return out;
}

int64_t latency_shift_ns(const MethodStats &stats, const ProbeCost &cost, const ProbeCost &kernel_cost)
{
    if (stats.calls == 0)
        return 0;
    const auto diff = [](uint64_t a, uint64_t b) { return static_cast<double>(a) - static_cast<double>(b); };
    const double traced = static_cast<double>(stats.traced_incl);
    const double other = static_cast<double>(stats.events_incl - std::min(stats.traced_incl, stats.events_incl));
    const double total = traced * diff(cost.traced_event_ns, kernel_cost.traced_event_ns) +
                         other * diff(cost.rejected_event_ns, kernel_cost.rejected_event_ns);
    return static_cast<int64_t>(std::llround(total / static_cast<double>(stats.calls)));
}

TimeBounds time_bounds(const MethodStats &raw, const CostRange &range)
{
    const MethodStats low = without_probe_cost(raw, range.hi);
    const MethodStats high = without_probe_cost(raw, range.lo);
    TimeBounds b;
    auto set = [](uint64_t(&out)[2], uint64_t lo, uint64_t hi) {
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

bool probe_dominated(const MethodStats &raw, const ProbeCost &cost)
{
    const uint64_t incl = events_cost_ns(raw.events_incl, raw.traced_incl, cost);
    using wide = unsigned __int128;  // ns sums can exceed 2^64 / 4
    // Against the smaller of elapsed and on-CPU time: each trap is on-CPU time, and a
    // thread waiting for a CPU (or the network) stretches only the elapsed time.
    const uint64_t measured = std::min(raw.wall_incl_ns, raw.cpu_incl_ns);
    return incl > 0 && static_cast<wide>(incl) * 2 > static_cast<wide>(measured);
}

void correct_profile(Profile &profile, std::vector<MethodStats *> path_stats, unsigned cpus)
{
    const TrapEvidence evidence = gather_evidence(profile, cpus ? cpus : host_cpus());
    profile.gaps = evidence.gaps;
    profile.cost_range = cost_range(evidence);
    profile.cost_source = profile.cost_range.likely_from;
    if (profile.corrected) {
        const CostRange &range = profile.cost_range;
        profile.probe_cost = range.likely;
        for (MethodRow &row : profile.methods) {
            row.probe_dominated = probe_dominated(row.stats, range.likely);
            row.bounds = time_bounds(row.stats, range);
            const int64_t shift = latency_shift_ns(row.stats, range.likely, profile.latency_cost);
            const MethodStats corrected = without_probe_cost(row.stats, range.likely);
            row.bounds.wider_than_correction = row.bounds.wall_incl_ns[1] - row.bounds.wall_incl_ns[0] >
                                               row.stats.wall_incl_ns - corrected.wall_incl_ns;
            row.stats = corrected;
            row.stats.latency = row.stats.latency.shifted(shift);
        }
        for (MethodStats *stats : path_stats)
            *stats = without_probe_cost(*stats, range.likely);
    }
    settle_overhead(profile);
}

}  // namespace jmt
