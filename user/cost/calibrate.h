// Cost of one probe event as the traced thread feels it, measured on the
// running kernel with the tool's own programs, so it can be taken out of the
// frames' times.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

// The tool's own jmethodtime:method__entry/method__return probes: the same
// 7 arguments as HotSpot's (thread id, class, length, method, length,
// signature, length), every one in a register.
namespace self_probe {

constexpr char kProvider[] = "jmethodtime";
constexpr char kBinary[] = "/proc/self/exe";
// The package whose class the traced calibration method has; the rejected
// calibration method is outside it.
constexpr char kTracedPackage[] = "jmtcal/traced";

// The probes' argument registers (enum jmt_reg); throws jmt::Error when the
// notes are missing or not plain registers (a build problem).
std::array<uint8_t, 7> arg_regs();

// ns per entry+return pair of the traced (or rejected) calibration method on
// this thread: the median of `batches` batches of `pairs` pairs, inside an open
// traced frame and, with nested, inside an untraced call within it.
double pair_ns(bool traced_class, int batches, bool nested = false, int pairs = 2000);

}  // namespace self_probe

// One timing of the tool's own probes: ns per event of a traced method and of
// a method the filter rejects, taken at at_ns (CLOCK_MONOTONIC).
struct CostSample {
    uint64_t at_ns = 0;
    double traced_event_ns = 0;
    double rejected_event_ns = 0;
};

// The start-up sample's costs in whole ns (zero without samples): what the
// kernel takes out of each call's histogram time (bpf lat_*_event_ns).
ProbeCost start_up_cost(const std::vector<CostSample> &samples);

// Samples a window needs before its estimate stops using all the samples.
constexpr size_t kMinWindowSamples = 5;

struct CostEstimate {
    ProbeCost cost;
    size_t samples = 0;  // samples behind cost
};

// One event's cost over [from_ns, to_ns]: the interquartile mean of the samples
// taken in it, or of all samples when the window holds fewer than
// kMinWindowSamples. The mean, because the trace pays the trap's average cost
// over its window; without the outer quartiles, which hold the batches an
// interrupt or a page fault hit.
CostEstimate estimate_probe_cost(const std::vector<CostSample> &samples, uint64_t from_ns, uint64_t to_ns);

// What the calibration's programs are loaded with: the tracer's options that
// change a probe event's cost.
struct CalibrationConfig {
    bool verbose = false;     // libbpf's messages
    bool per_thread = false;  // --per-thread: a traced return also adds to its thread's row (its cached id)
    bool call_paths = false;  // per-path totals: a traced entry costs one more hash lookup
    // --foreign's accounting; the filtered-out events are then timed nested
    // inside an untraced call, as most of a JVM's are (the first and last of a
    // run of untraced calls also read the clock: about 50 ns more each).
    bool foreign = false;
};

// Times the tool's own probes under a private instance of the tracer's
// programs against the bare probe sites, for a traced method and for one the
// package filter rejects (ns per event): once at start-up (median of 9
// batches of 2000 pairs each, about 0.3 s), then, after start(), on a
// background thread every kSamplePeriodNs (one batch of kSamplePairs pairs
// each, about 1.5 ms of CPU: 1.5% of one CPU) until stop().
// estimate_probe_cost over the samples of a trace's time follows the trap's
// cost as it moves during the trace. RAII: destruction stops the thread and
// detaches. The background thread blocks every signal.
class CostSampler {
public:
    static constexpr uint64_t kSamplePeriodNs = 100'000'000;
    static constexpr int kSamplePairs = 300;

    // Throws jmt::Error when the programs cannot load or attach.
    explicit CostSampler(const CalibrationConfig &config);
    ~CostSampler();
    CostSampler(const CostSampler &) = delete;
    CostSampler &operator=(const CostSampler &) = delete;

    void start();
    void stop();
    std::vector<CostSample> samples() const;  // the start-up sample first

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace jmt
