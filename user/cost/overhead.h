// --max-overhead: when the probes' traps take too much of the JVM's CPU time.
#pragma once

#include <cstdint>
#include <optional>

#include "model/profile.h"

namespace jmt {

// Windows over which the share is measured, and how many in a row must be
// over the limit: one burst (class loading, a call site's first linkage)
// does not end a trace.
constexpr uint64_t kOverheadWindowNs = 1'000'000'000;
constexpr int kOverheadTripWindows = 2;
// A window counts only when the JVM was on a CPU for this long in it: an idle
// JVM's share says little and its traps harm nothing.
constexpr uint64_t kOverheadMinCpuNs = 100'000'000;

// Fed with totals (events since attach, the JVM's CPU time); trips when the traps' share
// of the JVM's CPU time is over max_percent in kOverheadTripWindows windows in a row.
class OverheadGuard {
public:
    explicit OverheadGuard(double max_percent) : max_share_(max_percent / 100) {}

    // Whether a window has ended by now_ns (the caller then calls feed).
    bool due(uint64_t now_ns) const { return now_ns >= window_start_ns_ + kOverheadWindowNs; }

    // Closes the window at now_ns with the totals so far; returns the share of
    // the last window when this one trips the guard.
    std::optional<double> feed(uint64_t now_ns, const OverheadTotals &totals, const ProbeCost &cost);

    // The first window starts at start_ns with these totals.
    void start(uint64_t start_ns, const OverheadTotals &totals);

private:
    double max_share_;
    uint64_t window_start_ns_ = 0;
    OverheadTotals at_start_;
    int over_ = 0;  // windows over the limit in a row
};

}  // namespace jmt
