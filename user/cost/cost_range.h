// The range of what one probe event costs the traced JVM, decided from a
// window's evidence (cost/evidence.h): its low end, top and likely cost.
#pragma once

#include <cstdint>

#include "cost/evidence.h"
#include "model/profile.h"

namespace jmt {

// The refill of caches, TLB and branch predictors after a trap, which the
// Java code after it pays, as a share of the gaps' edge: the likely cost is
// the edge this much higher, where what the JVM paid is not measured (no I/O
// to measure it by: cost/evidence.h). What the JVM paid above the edge on the
// A/B/C flow (1.7 us of Java per event, about 1 us per event) was 22 to 46% in
// nine runs on one day (median 32%), with 4.4 us of Java per event 21% the same
// day and 20 to 31% on another (5 to 57% in all); 3 to 39% at 0.53 us and 7 to
// 11% at 5.4 us (docs/cost-range.md). Up to about 8 us it was at most
// kRefillMaxNs (0.4 us above an 8.5 us edge paid 8.9 us; 7 to 11% of 5.4 us is
// 0.38 to 0.6 us); above, it grows with the trap, by 5 to 16% of the edge from
// one host to the next: a 13.1 us edge (a host's 6 us trap with mitigations, and
// 7.5 us of the slow-trap tests' spin) paid 0.75 to 0.8 us above it on average
// (6%), and an 8.2 us edge (another host's 1.1 us trap and 6.9 us of spin) 1.29
// to 1.33 us (16%, three runs of a CI run of 2026-11-30). kRefillDearShare of the
// edge lies between. The range holds whatever it is.
constexpr double kRefillShare = 0.25;
constexpr uint64_t kRefillMaxNs = 400;
constexpr double kRefillDearShare = 0.10;

// The likely cost of a traced event from the gaps' edge: the edge plus its
// refill, min(kRefillShare of it, max(kRefillMaxNs, kRefillDearShare of it)).
uint64_t edge_plus_refill(uint64_t edge_ns);
// The most refill one trap leaves (ns), wherever it lands: the JVM's CPU time per
// event bounds the average event only, and an event in code that refills more
// than the rest costs more than that average (A/B/C beside a sort's cheap JDK
// calls: a()'s events cost the JVM 1.20 to 1.48 us, its average event 0.99 to
// 1.16 us, the edge 1.01 to 1.09 us). The most seen above the edge: 0.64 us (A/B/C, 1 us edge),
// 0.75 us (Tomcat switched, its slower deoptimized code included), 0.6 us at 5.4 us,
// 1.34 us at 13.1 us (a()'s events there: 1.0 to 1.34 us, 8 to 10% of the edge),
// 1.33 us at 8.2 us (16% of the edge, a()'s events on average).
// refill_bound_ns: the larger of kRefillBoundNs and kRefillBoundShare of the edge.
constexpr uint64_t kRefillBoundNs = 1000;
constexpr double kRefillBoundShare = 0.18;
uint64_t refill_bound_ns(uint64_t edge_ns);
// Where the trace cannot measure an end of the range, it widens by this
// factor: the low end without gaps is the calibration divided by it (the tool's
// own process is not the JVM: a narrow Tomcat trace's JVM paid 0.72x the
// calibration); the top without the JVM's CPU time is the low end's likely
// cost times it (twice more with another tracer's programs on every event).
constexpr double kUnmeasuredSpread = 2.0;

// ns that events probe events (traced of them traced methods') cost at cost.
uint64_t events_cost_ns(uint64_t events, uint64_t traced, const ProbeCost &cost);

// The range from the evidence. Low end: the gaps' edge less a bucket's width
// (1/32), or without kMinGapSamples gaps the calibration / kUnmeasuredSpread.
// Top: the JVM's CPU time per event (CostTop::JvmCpu), or where that is less,
// the low end's basis (the edge or the calibration) plus refill_bound_ns
// (CostTop::TrapAndRefill); without the JVM's CPU time the likely cost x
// kUnmeasuredSpread. Likely: what the JVM paid
// per event (the evidence's paid_ns_per_event, split between traced and
// filtered-out events at the calibration's ratio) when it lies in [lo, hi];
// else the edge plus kRefillShare, or the calibration, within [lo, hi]
// (likely_from says which). A filtered-out event's low
// end and likely cost are a traced one's at the calibration's ratio of the two
// (at most 1: it runs less of the programs); its top is the same.
CostRange cost_range(const TrapEvidence &evidence);

// True when the range of a traced event's cost is wider than the likely cost
// taken out: every row's bounds are then wider than its correction.
bool range_wider_than_likely(const CostRange &range);

}  // namespace jmt
