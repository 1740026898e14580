// The probe events' cost as the traced JVM pays it, from the gaps between
// consecutive probe events of one thread on one CPU (bpf/gaps.h), and the
// range of costs every corrected time is bounded with.
#pragma once

#include <cstdint>
#include <vector>

#include "model/profile.h"

namespace jmt {

// Fewer gaps than this say nothing about the JVM's cost: the range falls back
// on the calibration.
constexpr uint64_t kMinGapSamples = 1000;
// The quantile of the gaps taken as their lower edge (0.5%): below the bulk of
// one-trap gaps, above the odd short read (clock skew across a migration is
// excluded in the kernel, by the switch check); the range starts a bucket's
// width below it (docs/accuracy.md has what these rest on).
constexpr double kGapEdgeQuantile = 0.005;
// What the JVM pays per event above the lower edge, as a fraction of it: the
// refill of its caches, TLB and branch predictors after each trap, which the
// Java code after it pays. The range's top is the edge (or the calibration,
// when higher) this much higher.
constexpr double kRefillMargin = 0.25;

// Summary of a gap histogram (JMT_GAP_BUCKETS counts; an empty one gives zeros).
GapSummary summarize_gaps(const std::vector<uint64_t> &hist);

// hist less an earlier reading of the same histogram (an interval's gaps).
std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before);

// The range from the gaps (their edge for a traced event; a filtered-out
// event at the calibration's ratio of the two) and the calibration: lo is the
// edge less a bucket's width (1/32), hi the larger of edge and calibration plus kRefillMargin. Without
// enough gaps: lo = calibration / (1 + kRefillMargin), hi = calibration x (1 + kRefillMargin).
CostRange cost_range(const GapSummary &gaps, const ProbeCost &calibrated);

// [lo, hi] of each corrected time of a row measured raw, under range.
TimeBounds time_bounds(const MethodStats &raw, const CostRange &range);

// The cost a range's times are corrected with: its low end plus a tenth of
// its width; the range's top allows for hosts whose refill after a trap costs more.
ProbeCost likely_cost(const CostRange &range);

}  // namespace jmt
