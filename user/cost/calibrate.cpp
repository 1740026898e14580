#include "cost/calibrate.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/error.h"
#include "jmethodtime.skel.h"
#include "jvm/jvm.h"
#include "util/lifecycle.h"
#include "loader/tracer.h"

// Every probe argument in a register, as in HotSpot's probes, so the
// programs read them the same way (fast_args).
#define STAP_SDT_ARG_CONSTRAINT r
#include <sys/sdt.h>

namespace jmt {

namespace {

constexpr char kOuterClass[] = "jmtcal/traced/Outer";
constexpr char kTracedClass[] = "jmtcal/traced/Calibration";
constexpr char kRejectedClass[] = "jmtcal/rejected/Calibration";
constexpr char kHolderClass[] = "jmtcal/rejected/Holder";  // an untraced call the rejected pairs nest in
constexpr char kMethod[] = "fire";
constexpr char kSignature[] = "()V";
constexpr int kCalibrationBatches = 9;
// Methods, call paths and method table entries the self-probe's programs may hold.
constexpr uint32_t kSelfProbeIds = 16;
constexpr int kPairsPerBatch = 2000;

// HotSpot announces a call as (thread id, class, length, method, length,
// signature, length). One probe site per function, both compiled alike, so
// entry and return share one register layout (arg_regs() checks it). Like
// HotSpot's probe functions they keep a frame pointer (using its address
// forces one even in a leaf), so the entry program's read of a call site at
// bp + 8 is the same valid read as in a JVM.
__attribute__((noinline)) void fire_entry(const char *klass, long klass_len)
{
    asm volatile("" : : "r"(__builtin_frame_address(0)));
    const long thread_id = 0, method_len = sizeof(kMethod) - 1, sig_len = sizeof(kSignature) - 1;
    const char *method = kMethod, *sig = kSignature;
    STAP_PROBE7(jmethodtime, method__entry, thread_id, klass, klass_len, method, method_len, sig, sig_len);
}

__attribute__((noinline)) void fire_return(const char *klass, long klass_len)
{
    asm volatile("" : : "r"(__builtin_frame_address(0)));
    const long thread_id = 0, method_len = sizeof(kMethod) - 1, sig_len = sizeof(kSignature) - 1;
    const char *method = kMethod, *sig = kSignature;
    STAP_PROBE7(jmethodtime, method__return, thread_id, klass, klass_len, method, method_len, sig, sig_len);
}

// One call of a method without inlining: its probes fire one frame deeper than
// the caller's, as a JVM's traced callee does (not inlined, so no call-site read).
__attribute__((noinline)) void call(const char *klass, long klass_len)
{
    fire_entry(klass, klass_len);
    fire_return(klass, klass_len);
}

// Work between calls, as a program has: loops, branches and loads over 16 KiB.
// After each trap the CPU refills what the kernel displaced (caches, branch
// predictors); that refill is part of what a probe event costs a program.
__attribute__((noinline)) void work_between_calls()
{
    static volatile uint32_t data[4096];
    static uint32_t cursor = 1;
    uint32_t acc = 0;
    for (int i = 0; i < 64; i++) {
        cursor = cursor * 1103515245u + 12345u;
        const uint32_t v = data[(cursor >> 8) & 4095];
        acc += (v & 1) ? v * 3 : v + i;
        data[(cursor >> 12) & 4095] = acc;
    }
}

// This thread's CPU time (ns). The trap and the programs run in the thread's
// context, so they count; time the thread waits while other tasks run does
// not, which keeps the calibration right on a busy host.
uint64_t thread_cpu_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// CPU ns per call() and its work, median of the batches.
__attribute__((noinline)) double median_call_ns(const char *klass, long len, int batches, int pairs)
{
    std::vector<double> per_call;
    for (int b = 0; b < batches; b++) {
        const uint64_t start = thread_cpu_ns();
        for (int i = 0; i < pairs; i++) {
            call(klass, len);
            work_between_calls();
        }
        per_call.push_back(static_cast<double>(thread_cpu_ns() - start) / pairs);
    }
    std::nth_element(per_call.begin(), per_call.begin() + batches / 2, per_call.end());
    return per_call[batches / 2];
}

long length_of(const char *s) { return static_cast<long>(std::char_traits<char>::length(s)); }

}  // namespace

namespace self_probe {

std::array<uint8_t, 7> arg_regs()
{
    LibjvmInfo info = inspect_libjvm(kBinary, kProvider);
    std::optional<std::string> layout;
    bool consistent = !info.notes.empty();
    for (const UsdtNote &n : info.notes) {
        if (layout && *layout != n.args)
            consistent = false;
        layout = n.args;
    }
    std::optional<std::array<uint8_t, 7>> regs;
    if (consistent)
        regs = register_args(*layout, info.machine);
    if (!regs)
        throw Error(std::string("the calibration probes of ") + kBinary +
                    " are missing, differ, or are not in registers (a build problem)");
    return *regs;
}

double pair_ns(bool traced_class, int batches, bool nested, int pairs)
{
    const char *klass = traced_class ? kTracedClass : kRejectedClass;
    call(klass, length_of(klass));  // first sight (method table, names, thread state) is not timed
    // Inside an open traced frame, as most events of a JVM are.
    fire_entry(kOuterClass, length_of(kOuterClass));
    if (nested)
        fire_entry(kHolderClass, length_of(kHolderClass));
    const double ns = median_call_ns(klass, length_of(klass), batches, pairs);
    if (nested)
        fire_return(kHolderClass, length_of(kHolderClass));
    fire_return(kOuterClass, length_of(kOuterClass));
    return ns;
}

}  // namespace self_probe

namespace {

double interquartile_mean(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t cut = v.size() >= 4 ? v.size() / 4 : 0;
    double sum = 0;
    for (size_t i = cut; i < v.size() - cut; i++)
        sum += v[i];
    return sum / static_cast<double>(v.size() - 2 * cut);
}

}  // namespace

ProbeCost start_up_cost(const std::vector<CostSample> &samples)
{
    if (samples.empty())
        return {};
    return {static_cast<uint64_t>(std::llround(samples.front().traced_event_ns)),
            static_cast<uint64_t>(std::llround(samples.front().rejected_event_ns))};
}

CostEstimate estimate_probe_cost(const std::vector<CostSample> &samples, uint64_t from_ns, uint64_t to_ns)
{
    std::vector<double> traced, rejected;
    auto take = [&](bool window_only) {
        traced.clear();
        rejected.clear();
        for (const CostSample &s : samples) {
            if (window_only && (s.at_ns < from_ns || s.at_ns > to_ns))
                continue;
            traced.push_back(s.traced_event_ns);
            rejected.push_back(s.rejected_event_ns);
        }
    };
    take(true);
    if (traced.size() < kMinWindowSamples)
        take(false);
    CostEstimate e;
    e.samples = traced.size();
    if (traced.empty())
        return e;
    auto whole_ns = [](double ns) { return static_cast<uint64_t>(std::llround(std::max(0.0, ns))); };
    e.cost.traced_event_ns = whole_ns(interquartile_mean(traced));
    e.cost.rejected_event_ns = whole_ns(interquartile_mean(rejected));
    return e;
}

struct CostSampler::State {
    SkeletonPtr skel;
    SkeletonTotals totals;       // the few ids of the self-probe
    std::vector<LinkPtr> links;  // entry, return
    bool foreign = false;
    double bare_traced = 0, bare_rejected = 0;  // ns per pair with nothing attached

    mutable std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
    std::vector<CostSample> samples;
    std::thread thread;

    // ns per event of `pairs` pairs (median of `batches` batches).
    CostSample sample(int batches, int pairs) const
    {
        auto per_event = [](double attached, double bare) { return std::max(0.0, (attached - bare) / 2); };
        CostSample s;
        s.traced_event_ns = per_event(self_probe::pair_ns(true, batches, false, pairs), bare_traced);
        s.rejected_event_ns = per_event(self_probe::pair_ns(false, batches, foreign, pairs), bare_rejected);
        s.at_ns = monotonic_ns();
        return s;
    }

    void run()
    {
        std::unique_lock<std::mutex> lock(mutex);
        for (;;) {
            wake.wait_for(lock, std::chrono::nanoseconds(kSamplePeriodNs), [this] { return stopping; });
            if (stopping)
                return;
            lock.unlock();
            const CostSample s = sample(1, kSamplePairs);
            lock.lock();
            samples.push_back(s);
        }
    }
};

CostSampler::CostSampler(const CalibrationConfig &calibration) : state_(std::make_unique<State>())
{
    ProgramConfig config;
    config.pid = static_cast<int>(getpid());
    config.packages = {self_probe::kTracedPackage};
    config.per_thread = calibration.per_thread;
    config.call_paths = calibration.call_paths;
    config.foreign = calibration.foreign;
    config.arg_regs = self_probe::arg_regs();
    config.verbose = calibration.verbose;
    // The self-probe's few methods and paths: small tables, the same programs.
    config.max_methods = kSelfProbeIds;
    config.max_paths = kSelfProbeIds;
    config.method_keys = kSelfProbeIds;
    config.cache_slots = JMT_MIN_CACHE_SLOTS;  // a hit costs the same in any size of cache
    state_->skel = load_programs(config);
    state_->totals = cover_totals(state_->skel.get());
    state_->foreign = calibration.foreign;

    state_->bare_traced = self_probe::pair_ns(true, kCalibrationBatches);
    state_->bare_rejected = self_probe::pair_ns(false, kCalibrationBatches, calibration.foreign);
    state_->links = attach_entry_return(state_->skel->progs.handle_entry, return_program(state_->skel.get()),
                                        config.pid, self_probe::kBinary, self_probe::kProvider);
    state_->samples.push_back(state_->sample(kCalibrationBatches, kPairsPerBatch));
}

CostSampler::~CostSampler() { stop(); }

void CostSampler::start()
{
    if (state_->thread.joinable())
        return;
    // Signals stay with the thread that waits for them (lifecycle.h's StopSignals).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    state_->thread = std::thread([state = state_.get()] { state->run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void CostSampler::stop()
{
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->stopping = true;
    }
    state_->wake.notify_all();
    if (state_->thread.joinable())
        state_->thread.join();
}

std::vector<CostSample> CostSampler::samples() const
{
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->samples;
}

}  // namespace jmt
