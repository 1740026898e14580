// Taking the probes' cost out of measured times, in one pass over a
// profile's window: the evidence of what a trap costs its JVM
// (cost/evidence.h), then the range and the likely cost (cost/cost_range.h),
// then each row's correction and bounds.
#pragma once

#include <vector>

#include "model/profile.h"

namespace jmt {

// stats with the probe events' cost taken out of its four times: each time
// loses traced events x traced cost + other events x rejected cost, at most
// the on-CPU time (the traps run on a CPU), from elapsed and on-CPU time alike.
MethodStats without_probe_cost(const MethodStats &stats, const ProbeCost &cost);

// ns each call of stats' histogram (measured less its events at kernel_cost)
// is to move shorter for its events at cost: the difference over a call's
// average events (outermost frames'), negative when cost is the lower.
int64_t latency_shift_ns(const MethodStats &stats, const ProbeCost &cost, const ProbeCost &kernel_cost);

// [lo, hi] of each corrected time of a row measured raw, under range: the
// row corrected with the range's top, and with its low end.
TimeBounds time_bounds(const MethodStats &raw, const CostRange &range);

// True when the probe events inside the calls cost more than half of their
// measured inclusive time (the smaller of elapsed and on-CPU): the corrected
// times are then mostly the probes' cost taken out, and inherit the cost's
// uncertainty at twice its relative size or more.
bool probe_dominated(const MethodStats &raw, const ProbeCost &cost);

// Decides the cost range of a profile whose rows are raw (probe_cost,
// cost_range, gaps, cost_source, the overhead's figures), and with corrected
// takes the range's likely cost out of its rows and call paths and sets every
// row's bounds; without (--raw) the rows stay raw and probe_cost zero. cpus:
// the host's CPUs (0: read from the system), for a JVM CPU time read early.
void correct_profile(Profile &profile, std::vector<MethodStats *> path_stats, unsigned cpus = 0);

}  // namespace jmt
