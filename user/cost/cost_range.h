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
// The percentile of the gaps taken as their lower edge: below the bulk of
// one-trap gaps, above the odd short read (clock skew across a migration is
// excluded in the kernel, by the switch check).
constexpr double kGapEdgeQuantile = 0.01;
// What the JVM pays per event above the lower edge: the refill of its caches,
// TLB and branch predictors after each trap, which the Java code after it
// pays. Measured from the JVM's own timing of traced and untraced calls: 7 to
// 11% above the edge at 5.4 us per event, up to 27% above the calibration at
// 0.9 us per event. The range's top is the edge (or the calibration, when
// higher) this much higher.
constexpr double kRefillMargin = 0.35;

struct GapSummary {
    uint64_t samples = 0;   // gaps counted (the overflow bucket left out)
    uint64_t edge_ns = 0;   // their kGapEdgeQuantile, a bucket's lower end (3% buckets)
    uint64_t median_ns = 0;
};

// Summary of a gap histogram (JMT_GAP_BUCKETS counts; an empty one gives zeros).
GapSummary summarize_gaps(const std::vector<uint64_t> &hist);

// hist less an earlier reading of the same histogram (an interval's gaps).
std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before);

enum class CostBasis {
    Gaps,         // the range starts at the JVM's own lower edge
    Calibration,  // too few gaps: the range is around the calibration
};

// Per-event costs of a trace: every corrected time lies between the times
// corrected with hi (its low end) and with lo (its high end).
struct CostRange {
    ProbeCost lo, hi;
    ProbeCost point;  // the middle of the range: the corrected times shown
    CostBasis basis = CostBasis::Calibration;
};

// The range from the gaps (their edge for a traced event; a filtered-out
// event at the calibration's ratio of the two) and the calibration: lo is the
// edge, hi the larger of edge and calibration plus kRefillMargin. Without
// enough gaps: lo = calibration / (1 + kRefillMargin), hi = calibration x (1 + kRefillMargin).
CostRange cost_range(const GapSummary &gaps, const ProbeCost &calibrated);

// [lo, hi] of each corrected time of a row measured raw, under range.
struct TimeBounds {
    uint64_t wall_incl_ns[2] = {0, 0};
    uint64_t wall_excl_ns[2] = {0, 0};
    uint64_t cpu_incl_ns[2] = {0, 0};
    uint64_t cpu_excl_ns[2] = {0, 0};
    uint64_t wall_foreign_ns[2] = {0, 0};
    uint64_t cpu_foreign_ns[2] = {0, 0};
};
TimeBounds time_bounds(const MethodStats &raw, const CostRange &range);

}  // namespace jmt
