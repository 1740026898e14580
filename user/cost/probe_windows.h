// What one probe event costs the JVM in its own code, measured after a trace
// (or before it, --cost-before, on programs the trace does not keep): windows
// in which both method probes, the return probe alone and the entry probe
// alone are attached, in turn. A traced call costs the JVM w + e x entries +
// r x returns of CPU time (w: its work; e, r: what one entry and one return
// event cost, trap and refill wherever it landed; entries, returns: the
// events per traced call, filtered-out methods' included); the three kinds of
// window give w, e and r. It holds for a JVM doing the same work per call from
// window to window: a steady loop, steady traffic.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

class Tracer;

enum class ProbeWindowKind { Both, ReturnOnly, EntryOnly };

// One window's readings, differences over it.
struct ProbeWindow {
    ProbeWindowKind kind = ProbeWindowKind::Both;
    uint64_t cpu_ns = 0;                // the JVM's threads' CPU time, its JIT compilers' left out
    uint64_t entries = 0, returns = 0;  // probe events, filtered-out methods' included
    uint64_t traced_calls = 0;          // traced frames pushed (none with the return probe alone)
    uint64_t entry_prog_ns = 0;         // the entry program's run time (kernel.bpf_stats; 0: off)
    uint64_t return_prog_ns = 0;        // the return program's
    uint64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC
    std::vector<uint64_t> gap_hist;     // the gaps between the JVM's probe events (bpf/gaps.h buckets)
    // The programs' run time on (kernel.bpf_stats, which adds to the CPU time and the gaps): a
    // window that solves; off in each cycle's first, whose gaps compare with the trace's.
    bool programs_timed = true;
};

// A window's length, and the time after a probe goes on or off before it starts.
constexpr uint64_t kProbeWindowNs = 120'000'000;
constexpr uint64_t kProbeWindowSettleNs = 20'000'000;
// Cycles of four windows: both, the return probe alone, both, the entry probe alone. Each kind
// speaks through its least disturbed window of all cycles, so more cycles over-read less often
// (the measurements: docs/accuracy-measurements.md).
constexpr int kProbeWindowCycles = 8;
// The windows' wall time, about: a detach waits ~0.1 s for the kernel (two per cycle).
constexpr double kProbeWindowsSeconds =
    4 * kProbeWindowCycles * double(kProbeWindowNs + kProbeWindowSettleNs) / 1e9 + 2 * kProbeWindowCycles * 0.1;
// Each window must hold this many traced calls.
constexpr uint64_t kMinProbeWindowCalls = 500;

// e, r and their average over the both-probe windows' events, programs included, ns, from each
// kind's least disturbed windows (a slow phase of the host, another tenant or a GC only adds CPU
// time to a window); per_event_ns 0 with why when they do not tell. Each figure is the trace's
// gaps' edge (trace_gaps_edge_ns; 0: unknown) plus what the windows measured above their own edge
// (the refill): a slow phase of the host in the trace and not in the windows, or the reverse,
// moves the traps' cost with the edge. before_trace: the windows ran before the trace
// (--cost-before), which the reasons say.
ProbeWindowsCost solve_probe_windows(const std::vector<ProbeWindow> &windows, uint64_t trace_gaps_edge_ns = 0,
                                     bool before_trace = false);

// Waits until a CLOCK_MONOTONIC deadline (ns); false when cut short (a signal, the JVM gone).
using ProbeWindowWait = std::function<bool(uint64_t deadline_ns)>;

// What the trace's end knows besides its profile.
struct ProbeWindowsFacts {
    bool raw = false;         // --raw: times as measured
    bool intervals = false;   // -i: every report alike
    bool at_work = false;     // stopped by a signal or -d, the JVM running
    bool own_probes = false;  // one JVM, its probes attached by its pid (Tracer::can_switch_method_probes)
};
struct ProbeWindowsPlan {
    bool run = false;
    std::string why;  // why not, where the windows would have been the cost's measure
};
// Whether to run the windows after p's trace: not where the cost is not wanted
// (--raw, -i) or what the JVM paid is measured by its I/O; else not, with why,
// where they cannot measure (the JVM gone, shared probes, too few traced calls
// per window in the trace).
ProbeWindowsPlan plan_probe_windows(const Profile &p, const ProbeWindowsFacts &facts);

// windows solved on the edge of the trace's gaps (trace_gap_hist), duration_ns
// their wall time; why they were cut short when empty.
ProbeWindowsCost probe_windows_cost(const std::vector<ProbeWindow> &windows, uint64_t duration_ns,
                                    const std::vector<uint64_t> &trace_gap_hist, bool before_trace);

// The windows run after the trace and solved, on the edge of the trace's gaps (trace_gap_hist), their wall time set.
ProbeWindowsCost measure_probe_windows(Tracer &tracer, int pid, const ProbeWindowWait &wait,
                                       const std::vector<uint64_t> &trace_gap_hist);

// cycles cycles of window_ns windows on tracer's one JVM, pid; empty when the
// wait was cut short or a probe could not be attached again (the JVM gone);
// the first alone when it held fewer than kMinProbeWindowCalls traced calls
// (the JVM went quiet). The probes stay as the last window left them: destroy
// the tracer next.
std::vector<ProbeWindow> run_probe_windows(Tracer &tracer, int pid, const ProbeWindowWait &wait,
                                           int cycles = kProbeWindowCycles, uint64_t window_ns = kProbeWindowNs);

}  // namespace jmt
