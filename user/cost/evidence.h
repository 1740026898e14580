// What a trace's window shows one probe event costs its JVM, gathered once,
// before any cost is decided: correct_profile takes the evidence, then the
// range (cost/cost_range.h), then each row's correction and bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

// /proc/PID/stat counts CPU time in 10 ms ticks: a window's CPU time may read
// short by a tick at either end.
constexpr uint64_t kCpuTickNs = 10'000'000;

// Fewer gaps than this say nothing about the JVM's trap: the low end falls
// back on the calibration.
constexpr uint64_t kMinGapSamples = 1000;
// The quantile of the gaps taken as their lower edge (0.5%): below the bulk of
// one-trap gaps, above the odd short read (clock skew across a migration is
// excluded in the kernel, by the switch check); the range starts a bucket's
// width below it.
constexpr double kGapEdgeQuantile = 0.005;

// Summary of a gap histogram (JMT_GAP_BUCKETS counts; an empty one gives zeros).
GapSummary summarize_gaps(const std::vector<uint64_t> &hist);

// The edge where enough gaps measure it (kMinGapSamples), else 0.
uint64_t measured_edge_ns(const GapSummary &gaps);

// The least one trap may cost by a gaps' edge (ns), known to its bucket's width
// (a 1/2^JMT_GAP_SUB_BITS part of its power of two): the edge less that width.
uint64_t edge_low_ns(uint64_t edge_ns);

// hist less an earlier reading of the same histogram (an interval's gaps).
std::vector<uint64_t> gaps_since(const std::vector<uint64_t> &now, const std::vector<uint64_t> &before);

struct TrapEvidence {
    // The JVM's own gaps between traced events: their edge is one trap with
    // next to no Java code between (the low end).
    GapSummary gaps;
    // The tool's own probes timed during the trace: a trap of this kernel in
    // another process (the low end when the gaps are too few, and the ratio of
    // a filtered-out event's cost to a traced one's).
    ProbeCost calibrated;
    // The JVM's CPU time over the window, at most (ticks and an early last
    // reading allowed for), over its probe events: what one event costs the JVM
    // on average is never more, whatever its refill and wherever it lands (the
    // top). When the I/O threads' own CPU time (schedstat, ns) over the events
    // is more, /proc/PID/stat's ticks lagged and that is the top: what the JVM
    // paid is that time less its untraced work. 0: the CPU time was not read.
    uint64_t jvm_ns_per_event = 0;
    bool shared_probes = false;  // another tracer's programs ran on every event too
    // What one event cost the JVM on average, traced and filtered-out alike:
    // its CPU per I/O call over the window less its CPU per I/O call before the
    // probes went on, times the window's I/O calls, over its events (the
    // likely cost). 0: not measured, paid_why says why.
    uint64_t paid_ns_per_event = 0;
    std::string paid_why;
    // Without I/O to measure it by: what one event cost the JVM in the windows
    // after the trace with one probe detached (cost/probe_windows.h), when measured.
    bool paid_by_windows = false;
    // Why the windows' figure would fall outside the range, when it does: what
    // their own gaps show of the host (windows_outside_why).
    std::string windows_outside_why;
    uint64_t events = 0, traced_events = 0;  // the window's probe events, and of them the traced methods'
    // The row with the most on-CPU time (raw): its calls and events, and the
    // untraced CPU time of the JVM's I/O threads for the window's I/O calls
    // (their CPU per I/O call before the probes, times the window's I/O calls; 0: unknown).
    MethodStats widest;
    uint64_t untraced_cpu_ns = 0;
};

// The widest row keeps at least this share of the I/O threads' untraced CPU time
// after what the JVM paid is taken out (when its raw time holds it): the rise in
// CPU per I/O call also holds what is not the traps (code deoptimized by the
// switch and not compiled again, cold caches outside the traced frames), and
// the traced frames' share of the untraced work lies anywhere from none to all.
// A third: the request's own servlet work in Tomcat held about that (JFR's 111
// us of 336 us of CPU per request on JDK 25) and the rise held that much more than
// the traps there (docs/cost-range.md).
constexpr double kWidestUntracedShare = 1.0 / 3;

// The JVM's work is measured this long before its probes go on (the calibration runs meanwhile).
constexpr uint64_t kUntracedWindowNs = 1'000'000'000;
// Each window, untraced and traced, must hold this many I/O calls and this
// much CPU time before its CPU per I/O call says what the traps cost.
constexpr uint64_t kMinWorkIoCalls = 200;
constexpr uint64_t kMinWorkCpuNs = 50'000'000;

// What one probe event cost the JVM, from its work before the probes and over
// the window with events probe events in it; 0 with why set when either window
// holds too little work, or the traced one costs no more per I/O call.
uint64_t paid_per_event(const JvmWork &untraced, const JvmWork &traced, uint64_t events, std::string &why);

// Why windows w whose figure falls outside the cost range did: they put less
// than one trap of their own gaps on an event (the host's pace changed within
// them), or their gaps' edge is over kWindowsPhaseShare off the trace's (the
// host ran at another pace in them), or else the JVM's work per call changed.
constexpr double kWindowsPhaseShare = 0.10;
std::string windows_outside_why(const ProbeWindowsCost &w);

// The evidence of p's window: its gap histogram summarized, its calibration,
// and its JVM CPU time per event. cpus: the host's CPUs, the most the JVM can
// have run on in the time a reading taken early (jvm_cpu_early) missed.
TrapEvidence gather_evidence(const Profile &p, unsigned cpus);

}  // namespace jmt
