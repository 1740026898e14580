// The live status line on a terminal's stderr, rewritten in place once a second:
// "12 s: 1.23M probe events, 45 methods traced, traps 23% of the JVM's CPU; paths_full 120".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loader/tracer.h"
#include "model/profile.h"

namespace jmt {

struct StatusFacts {
    uint64_t elapsed_ns = 0;
    uint64_t events = 0;               // probe events since attach
    uint64_t methods = 0;              // methods traced so far
    std::optional<double> trap_share;  // the traps' share of the JVM's CPU time over the last second
    std::vector<std::pair<std::string, uint64_t>> losses;  // non-zero counters of lost data (loss_counts)
};

// The line's text (no "\r", no newline), cut to width characters when width > 0
// so that it never wraps (a wrapped line is not rewritten in place).
std::string status_line(const StatusFacts &facts, size_t width = 0);

// The non-zero diagnostic counters that count lost or overflowing data
// (depth_overflow, dropped_frames, paths_full, ...), by name and count; not the
// ones that are expected (unmatched_returns, returns_unjudged: calls entered before attach) or
// only about clocks (cpu_clamped, switch_unseen).
std::vector<std::pair<std::string, uint64_t>> loss_counts(const Diagnostics &diag);

// The line on stderr when enabled (stderr is a terminal): show() once a second, clear() before other output.
class ProgressLine {
public:
    explicit ProgressLine(bool enabled) : enabled_(enabled) {}
    ~ProgressLine() { clear(); }
    // The first window (for the trap share) starts at these totals (with the JVM's CPU time).
    void start(const OverheadTotals &totals) { window_start_ = totals; }
    // p.events.jvm_cpu_ns: the JVM's CPU time now (nullopt: unknown); cost: one
    // event's calibrated cost over the last second (nullopt with --raw).
    void show(uint64_t elapsed_ns, const TraceProgress &p, std::optional<ProbeCost> cost);
    void clear();

private:
    bool enabled_;
    bool shown_ = false;
    OverheadTotals window_start_;
};

}  // namespace jmt
