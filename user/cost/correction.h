// Taking the probes' cost out of measured times: the cost a trace's rows
// decide (one-event leaves, rows that bound it), each time less its events'
// cost, and the correction of a whole profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

// stats with the probe events' cost taken out of its four times (clamped at 0):
// each time loses traced events x traced cost + other events x rejected cost.
MethodStats without_probe_cost(const MethodStats &stats, const ProbeCost &cost);

// Events a row's exclusive time must hold before it can lower the calibrated cost.
constexpr uint64_t kMinBoundEvents = 10000;
// One-event leaves (below): calls each of at least kMinLeafRows rows must have.
constexpr uint64_t kMinLeafCalls = 10000;
constexpr size_t kMinLeafRows = 3;
// How far (a factor either way) the leaves' cost may be from the calibration's
// for the cheapest leaf to be taken as one event's cost: beyond it, the leaves
// do real work besides their trap.
constexpr double kMaxLeafFactor = 1.35;

// The cost to take out of a trace's rows, decided from the rows themselves
// where they tell more than the calibration (which times the tool's own
// probes, not the JVM's code):
// - Leaves: a row whose every call is a leaf making exactly one probe event
//   (its own return: traced, no callee) measures, per call, one traced
//   event's cost plus its body. With at least kMinLeafRows such rows of
//   kMinLeafCalls calls each, the cheapest (a getter's body is a few ns) is
//   taken as the traced cost, when it is within kMaxLeafFactor of the
//   calibration or, above that, at most top_traced_ns, the most the gaps let
//   one event cost (else the leaves do real work); the filtered-out cost
//   scales with it.
// - Bounded: each trap runs on a CPU inside the frame's exclusive time, so a
//   method's exclusive time (the smaller of elapsed and on-CPU) holds at least
//   its events' real cost: a row with kMinBoundEvents events or more that
//   measured less than its events' cost lowers both costs until it fits.
struct CostBound {
    ProbeCost cost;      // what to take out
    double scale = 1;    // cost / calibrated
    CostSource source = CostSource::Calibrated;
    std::string method;  // class.method(signature) of the row that decided (not Calibrated)
};
CostBound bounded_probe_cost(const std::vector<MethodRow> &rows, const ProbeCost &calibrated,
                             uint64_t top_traced_ns = 0);

// True when the probe events inside the calls cost more than half of their
// measured inclusive time (the smaller of elapsed and on-CPU): the corrected
// times are then mostly the probes' cost taken out, and inherit the cost's
// uncertainty at twice its relative size or more.
bool probe_dominated(const MethodStats &raw, const ProbeCost &cost);

// Decides the cost range of a profile whose rows are raw, from its gaps and
// its calibration, and with corrected the cost taken out (rows and call
// paths: the range's likely cost, or the trace's one-event leaves within it)
// and every row's bounds; a row whose exclusive time holds less than its
// events at the range's top lowers the top (bounded_probe_cost). Without
// corrected (--raw) only the range is set: probe_cost stays zero.
void correct_profile(Profile &profile, std::vector<MethodStats *> path_stats);

}  // namespace jmt
