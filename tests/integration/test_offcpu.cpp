// Elapsed time split into on-CPU time, run-queue wait (runnable, no CPU) and
// blocked time, checked against the kernel's own per-thread accounting
// (/proc/self/task/TID/schedstat's run_delay), which the workload reads itself.
#include <unistd.h>

#include <algorithm>

#include "harness.h"

using jmt_it::calls_of;
using jmt_it::method_row;

namespace {

constexpr const char *kClass = "demo/cpu/RunQueue";

uint64_t key(const nlohmann::json &row, const char *k) { return row.at(k).get<uint64_t>(); }

class OffCpu : public jmt_it::BpfTest {};

// Three threads per CPU (at least 4), each ROUNDS times busy for 60 ms of elapsed time and
// asleep for 40 ms.
TEST_F(OffCpu, RunQueueWaitAndBlockedTimeMatchTheKernelsOwnAccounting)
{
    const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const uint64_t threads = static_cast<uint64_t>(std::max(4L, 3 * cpus)), rounds = 5;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.cpu.RunQueue";
    spec.jvm.args = {std::to_string(threads), std::to_string(rounds), "60", "40"};
    spec.jmt_args = {"--package", "demo/cpu"};
    auto r = jmt_it::run_traced(spec);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;

    // Counts stay exact.
    EXPECT_EQ(calls_of(r.report, kClass, "work", "()V"), threads * rounds);
    EXPECT_EQ(calls_of(r.report, kClass, "nap", "()V"), threads * rounds);
    EXPECT_EQ(calls_of(r.report, kClass, "worker", "(I)V"), threads);

    // On-CPU + run-queue + blocked = elapsed, for every row, inclusive and exclusive.
    for (const auto &m : r.report.at("methods")) {
        const std::string name = m.at("method").get<std::string>();
        EXPECT_EQ(key(m, "cpu_incl_ns") + key(m, "runq_incl_ns") + key(m, "blocked_incl_ns"), key(m, "wall_incl_ns"))
            << name;
        EXPECT_EQ(key(m, "cpu_excl_ns") + key(m, "runq_excl_ns") + key(m, "blocked_excl_ns"), key(m, "wall_excl_ns"))
            << name;
        EXPECT_LE(key(m, "runq_excl_ns"), key(m, "runq_incl_ns")) << name;
    }

    // Busy threads three to a CPU wait for one most of the time; sleeping ones are blocked.
    const auto &work = method_row(r.report, kClass, "work", "()V");
    const auto &nap = method_row(r.report, kClass, "nap", "()V");
    const double work_wall = static_cast<double>(key(work, "wall_incl_ns"));
    const double nap_wall = static_cast<double>(key(nap, "wall_incl_ns"));
    std::printf("  work(): elapsed %.0f ms, on a CPU %.0f, waiting for one %.0f, blocked %.0f\n", work_wall / 1e6,
                key(work, "cpu_incl_ns") / 1e6, key(work, "runq_incl_ns") / 1e6, key(work, "blocked_incl_ns") / 1e6);
    std::printf("  nap(): elapsed %.0f ms, on a CPU %.0f, waiting for one %.0f, blocked %.0f\n", nap_wall / 1e6,
                key(nap, "cpu_incl_ns") / 1e6, key(nap, "runq_incl_ns") / 1e6, key(nap, "blocked_incl_ns") / 1e6);
    EXPECT_GT(static_cast<double>(key(work, "runq_incl_ns")), 0.3 * work_wall);
    EXPECT_LT(static_cast<double>(key(work, "blocked_incl_ns")), 0.1 * work_wall);
    EXPECT_GT(static_cast<double>(key(nap, "blocked_incl_ns")), 0.7 * nap_wall);

    // The workers' waits in worker() against what the kernel's scheduler counted for them over
    // their whole lives (a little more: before and after worker()).
    const double kernel_workers = static_cast<double>(jmt_it::done_value(r.done_line, "workers_runq_ns"));
    const double traced_workers =
        static_cast<double>(key(method_row(r.report, kClass, "worker", "(I)V"), "runq_incl_ns"));
    std::printf("  run-queue wait of the workers: %.1f ms in worker() (kernel program), %.1f ms (schedstat)\n",
                traced_workers / 1e6, kernel_workers / 1e6);
    EXPECT_LE(traced_workers, 1.02 * kernel_workers);
    EXPECT_GE(traced_workers, 0.85 * kernel_workers);

    // Every thread of the JVM, from the attach to the end: the header's figure, which holds the
    // workload's window (from GO to the workers' end) and a little more.
    const auto &o = r.report.at("overhead");
    const double jvm = static_cast<double>(jmt_it::done_value(r.done_line, "jvm_runq_ns"));
    const double header = o.at("jvm_runq_ns").get<double>();
    std::printf("  run-queue wait of the JVM: %.1f ms (kernel program, whole trace), %.1f ms (schedstat, the "
                "workload's window); %s\n",
                header / 1e6, jvm / 1e6, o.dump().c_str());
    EXPECT_GE(header, 0.95 * jvm);
    EXPECT_LE(header, 1.2 * jvm + 50e6);
    EXPECT_TRUE(o.at("saturated").get<bool>()) << "three busy threads per CPU saturate it";
    EXPECT_NE(r.jmt_stderr.find("the CPUs were saturated"), std::string::npos) << r.jmt_stderr;
}

}  // namespace
