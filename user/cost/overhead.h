// What the probes' traps cost the JVM over a window (the overhead line, JSON
// overhead, the status line), and --max-overhead: when they take too much of
// the JVM's CPU time.
#pragma once

#include <cstdint>
#include <optional>

#include "model/profile.h"

namespace jmt {

// The JVM's CPU time is read this often (about 20 us a reading), so that a JVM
// reaped by its parent before the end of the trace still has a recent figure.
constexpr uint64_t kCpuReadPeriodNs = 25'000'000;

// The window between two totals: its events, and the JVM's CPU time (0,
// unknown, when either reading is missing) and run-queue wait between them.
Overhead overhead_since(const OverheadTotals &now, const OverheadTotals &then);

// The JVM's threads' run-queue wait as a share of their runnable time (on a
// CPU or waiting for one) over the window; nullopt when either is unknown.
std::optional<double> runq_share(const Overhead &overhead);
// From this share of their runnable time spent waiting, the JVM's threads
// waited for a CPU enough to stretch every elapsed time: the header says the
// host was saturated.
constexpr double kSaturatedRunqShare = 0.10;

// ns the window's events cost the JVM at cost (0 when cost is zero).
uint64_t overhead_ns(const Overhead &overhead, const ProbeCost &cost);

// The traps' share of the JVM's CPU time over the window at cost; nullopt
// when the CPU time is unknown or the cost is zero.
std::optional<double> trap_share(const Overhead &overhead, const ProbeCost &cost);

// What one probe event cost this trace: the cost taken out of corrected
// times, or with --raw the range's likely cost (the traps cost the JVM all
// the same).
ProbeCost trap_cost(const Profile &profile);

// Sets profile.overhead's trap_ns, trap_share, runq_share and saturated from
// its events, CPU and run-queue times at trap_cost(profile): called once the
// probe cost is decided (correct_profile), before any output reads them.
void settle_overhead(Profile &profile);

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
