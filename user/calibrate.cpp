#include "calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "error.h"
#include "jmethodtime.skel.h"
#include "jvm.h"
#include "lifecycle.h"
#include "tracer.h"

// Every probe argument in a register, as in HotSpot's probes, so the
// programs read them the same way (fast_args).
#define STAP_SDT_ARG_CONSTRAINT r
#include <sys/sdt.h>

namespace jmt {

namespace {

// The calibration's method names; only kTracedClass passes the filter.
constexpr char kPackage[] = "jmtcal/traced";
constexpr char kTracedClass[] = "jmtcal/traced/Calibration";
constexpr char kRejectedClass[] = "jmtcal/rejected/Calibration";
constexpr char kMethod[] = "fire";
constexpr char kSignature[] = "()V";

constexpr int kPairsPerBatch = 2000;  // one entry + one return each
constexpr int kBatches = 9;

// One method call as HotSpot announces it: (thread id, class, length, method,
// length, signature, length). Not inlined: the loop times the probes alone.
__attribute__((noinline)) void fire_pair(const char *klass, long klass_len)
{
    const long thread_id = 0, method_len = sizeof(kMethod) - 1, sig_len = sizeof(kSignature) - 1;
    const char *method = kMethod, *sig = kSignature;
    STAP_PROBE7(jmethodtime, method__entry, thread_id, klass, klass_len, method, method_len, sig, sig_len);
    STAP_PROBE7(jmethodtime, method__return, thread_id, klass, klass_len, method, method_len, sig, sig_len);
}

// ns per call of fire_pair, median over the batches.
double pair_ns(const char *klass)
{
    const long len = static_cast<long>(std::char_traits<char>::length(klass));
    std::vector<double> batches;
    for (int b = 0; b < kBatches; b++) {
        const uint64_t start = monotonic_ns();
        for (int i = 0; i < kPairsPerBatch; i++)
            fire_pair(klass, len);
        batches.push_back(static_cast<double>(monotonic_ns() - start) / kPairsPerBatch);
    }
    std::nth_element(batches.begin(), batches.begin() + kBatches / 2, batches.end());
    return batches[kBatches / 2];
}

}  // namespace

ProbeCost calibrate_probe_cost(bool verbose)
{
    const std::string self = "/proc/self/exe";
    LibjvmInfo info = inspect_libjvm(self, "jmethodtime");
    std::optional<std::array<uint8_t, 7>> regs;
    for (const UsdtNote &n : info.notes)
        if (n.name == "method__entry")
            regs = register_args(n.args);
    if (!regs)
        throw Error("the calibration probe of " + self + " is missing or not in registers (a build problem)");

    ProgramConfig config;
    config.pid = static_cast<int>(getpid());
    config.packages = {kPackage};
    config.arg_regs = regs;
    config.verbose = verbose;
    SkeletonPtr skel = load_programs(config);

    // The bare probe sites (a call and two nops), before anything is attached.
    const double bare_traced = pair_ns(kTracedClass);
    const double bare_rejected = pair_ns(kRejectedClass);

    ProbeCost cost;
    {
        LinkPtr entry = attach_usdt(skel->progs.handle_entry, config.pid, self, "jmethodtime", "method__entry");
        LinkPtr ret = attach_usdt(skel->progs.handle_return, config.pid, self, "jmethodtime", "method__return");
        fire_pair(kTracedClass, sizeof(kTracedClass) - 1);  // first sight: names, thread state
        fire_pair(kRejectedClass, sizeof(kRejectedClass) - 1);
        auto per_event = [](double attached, double bare) {
            return static_cast<uint64_t>(std::llround(std::max(0.0, (attached - bare) / 2)));
        };
        cost.traced_event_ns = per_event(pair_ns(kTracedClass), bare_traced);
        cost.rejected_event_ns = per_event(pair_ns(kRejectedClass), bare_rejected);
    }
    return cost;
}

}  // namespace jmt
