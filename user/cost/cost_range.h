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
// Java code after it pays. The range's top is the edge this much higher. Seen:
// 3-5% with ~0.1-0.3 us of Java code per event, 16-39% with ~4 us (edge
// 0.53 us), 7-11% at 5.4 us per event (docs/accuracy.md).
constexpr double kRefillMargin = 0.45;
// Without enough gaps the range is the calibration divided and multiplied by this.
constexpr double kCalibrationSpread = 1.2;

// Summary of a gap histogram (JMT_GAP_BUCKETS counts; an empty one gives zeros).
GapSummary summarize_gaps(const std::vector<uint64_t> &hist);

// hist less an earlier reading of the same histogram (an interval's gaps).
std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before);

// The range from the gaps (their edge for a traced event; a filtered-out
// event at the calibration's ratio of the two) and the calibration: lo is the
// edge less a bucket's width (1/32), hi the edge plus kRefillMargin; the range is then
// 0.48 x the edge wide, under half of what its likely cost takes out. Without
// enough gaps: lo = calibration / kCalibrationSpread, hi = calibration x kCalibrationSpread.
CostRange cost_range(const GapSummary &gaps, const ProbeCost &calibrated);

// [lo, hi] of each corrected time of a row measured raw, under range.
TimeBounds time_bounds(const MethodStats &raw, const CostRange &range);

// The cost a range's times are corrected with: its low end plus a tenth of
// its width; the range's top allows for hosts whose refill after a trap costs more.
ProbeCost likely_cost(const CostRange &range);

}  // namespace jmt
