// What a trace's window shows one probe event costs its JVM, gathered once,
// before any cost is decided: correct_profile takes the evidence, then the
// range (cost/cost_range.h), then each row's correction and bounds.
#pragma once

#include <cstdint>

#include "model/profile.h"

namespace jmt {

// /proc/PID/stat counts CPU time in 10 ms ticks: a window's CPU time may read
// short by a tick at either end.
constexpr uint64_t kCpuTickNs = 10'000'000;

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
    // top). 0: the CPU time was not read.
    uint64_t jvm_ns_per_event = 0;
    bool shared_probes = false;  // another tracer's programs ran on every event too
};

// The evidence of p's window: its gap histogram summarized, its calibration,
// and its JVM CPU time per event. cpus: the host's CPUs, the most the JVM can
// have run on in the time a reading taken early (jvm_cpu_early) missed.
TrapEvidence gather_evidence(const Profile &p, unsigned cpus);

}  // namespace jmt
