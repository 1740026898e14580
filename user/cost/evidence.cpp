#include "cost/evidence.h"

#include "cost/cost_range.h"
#include "cost/overhead.h"

namespace jmt {

namespace {

// ns per event of the JVM's CPU time over the window, rounded up, with what
// the readings may have missed added: a tick at either end, and the time
// after an early last reading on every CPU.
uint64_t jvm_ceiling_ns(const Overhead &o, unsigned cpus)
{
    if (o.jvm_cpu_ns == 0 || o.events == 0)
        return 0;
    uint64_t missed = 2 * kCpuTickNs;
    if (o.jvm_cpu_early)
        missed += kCpuReadPeriodNs * (cpus ? cpus : 1);
    return (o.jvm_cpu_ns + missed + o.events - 1) / o.events;
}

}  // namespace

TrapEvidence gather_evidence(const Profile &p, unsigned cpus)
{
    TrapEvidence e;
    e.gaps = summarize_gaps(p.gap_hist);
    e.calibrated = p.calibrated_cost;
    e.jvm_ns_per_event = jvm_ceiling_ns(p.overhead, cpus);
    e.shared_probes = !p.shared_probes.empty();
    return e;
}

}  // namespace jmt
