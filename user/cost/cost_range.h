// The range of what one probe event costs the traced JVM, decided from a
// window's evidence (cost/evidence.h), and the bounds it gives every
// corrected time.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/evidence.h"
#include "model/profile.h"

namespace jmt {

// Fewer gaps than this say nothing about the JVM's trap: the low end falls
// back on the calibration.
constexpr uint64_t kMinGapSamples = 1000;
// The quantile of the gaps taken as their lower edge (0.5%): below the bulk of
// one-trap gaps, above the odd short read (clock skew across a migration is
// excluded in the kernel, by the switch check); the range starts a bucket's
// width below it.
constexpr double kGapEdgeQuantile = 0.005;
// The refill of caches, TLB and branch predictors after a trap, which the
// Java code after it pays, as a share of the gaps' edge: the likely cost is
// the edge this much higher, where what the JVM paid is not measured (no I/O
// to measure it by: cost/evidence.h). What the JVM paid above the edge on the
// A/B/C flow (1.7 us of Java per event, about 1 us per event) was 22 to 46% in
// nine runs on one day (median 32%), with 4.4 us of Java per event 21% the same
// day and 20 to 31% on another (5 to 57% in all); 3 to 39% at 0.53 us and 7 to
// 11% at 5.4 us (docs/accuracy.md). The
// refill is the caches' and predictors', not the trap's: it does not grow with
// a dearer trap, so it is at most kRefillMaxNs (0.4 us above an 8.5 us edge
// paid 8.9 us; 7 to 11% of 5.4 us is 0.38 to 0.6 us). The range holds whatever it is.
constexpr double kRefillShare = 0.25;
constexpr uint64_t kRefillMaxNs = 400;

// The likely cost of a traced event from the gaps' edge: the edge plus its refill.
uint64_t edge_plus_refill(uint64_t edge_ns);
// The least one trap may cost by a gaps' edge (ns), known to its bucket's width
// (a 1/2^JMT_GAP_SUB_BITS part of its power of two): the edge less that width.
uint64_t edge_low_ns(uint64_t edge_ns);
// The most refill one trap leaves (ns), wherever it lands: the JVM's CPU time per
// event bounds the average event only, and an event in code that refills more
// than the rest costs more than that average (A/B/C beside a sort's cheap JDK
// calls: a()'s events cost the JVM 1.20 to 1.48 us, its average event 0.99 to
// 1.16 us, the edge 1.01 to 1.09 us). The most seen above the edge: 0.64 us (A/B/C, 1 us edge),
// 0.75 us (Tomcat switched, its slower deoptimized code included), 0.6 us at 5.4 us.
constexpr uint64_t kRefillBoundNs = 1000;
// Where the trace cannot measure an end of the range, it widens by this
// factor: the low end without gaps is the calibration divided by it (the tool's
// own process is not the JVM: a narrow Tomcat trace's JVM paid 0.72x the
// calibration); the top without the JVM's CPU time is the low end's likely
// cost times it (twice more with another tracer's programs on every event).
constexpr double kUnmeasuredSpread = 2.0;

// Summary of a gap histogram (JMT_GAP_BUCKETS counts; an empty one gives zeros).
GapSummary summarize_gaps(const std::vector<uint64_t> &hist);

// The edge where enough gaps measure it (kMinGapSamples), else 0.
uint64_t measured_edge_ns(const GapSummary &gaps);

// hist less an earlier reading of the same histogram (an interval's gaps).
std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before);

// The range from the evidence. Low end: the gaps' edge less a bucket's width
// (1/32), or without kMinGapSamples gaps the calibration / kUnmeasuredSpread.
// Top: the JVM's CPU time per event (CostTop::JvmCpu), or where that is less,
// the low end's basis (the edge or the calibration) plus kRefillBoundNs
// (CostTop::TrapAndRefill); without the JVM's CPU time the likely cost x
// kUnmeasuredSpread. Likely: what the JVM paid
// per event (the evidence's paid_ns_per_event, split between traced and
// filtered-out events at the calibration's ratio) when it lies in [lo, hi];
// else the edge plus kRefillShare, or the calibration, within [lo, hi]
// (likely_from says which). A filtered-out event's low
// end and likely cost are a traced one's at the calibration's ratio of the two
// (at most 1: it runs less of the programs); its top is the same.
CostRange cost_range(const TrapEvidence &evidence);

// [lo, hi] of each corrected time of a row measured raw, under range.
TimeBounds time_bounds(const MethodStats &raw, const CostRange &range);

}  // namespace jmt
