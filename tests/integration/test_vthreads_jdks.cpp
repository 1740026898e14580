// Virtual threads on the JDKs fleets run, from the Debian root in containers:
// OpenJDK 21 (its VMStructs do not say where a continuation begins; a monitor
// held pins a virtual thread) under G1, ZGC and generational ZGC, and Debian's
// OpenJDK 25 under ZGC (coloured pointers). Each run checks exact counts and
// times within 10% of the JVM's own timing of the same calls (vt_workload.h).
#include "vt_workload.h"

namespace {

using namespace jmt_it;

constexpr char kClass[] = "demo/vt/VirtualTasks";
constexpr char kStep[] = "(Ljava/lang/Object;)V";

// A suite on one of the root's JDKs (home), its JVMs in containers.
class RootVirtualThreads : public RootTest {
protected:
    explicit RootVirtualThreads(const char *home) : home_(home) {}
    void SetUp() override
    {
        RootTest::SetUp();
        if (!IsSkipped() && !HasFailure())
            root_ = std::make_unique<RootJdk>(home_, RootMode::Container);
    }
    VtJdk jdk() const { return vt_jdk(*root_); }

private:
    const char *home_;
    std::unique_ptr<RootJdk> root_;
};

class VirtualThreadsJdk21 : public RootVirtualThreads {
protected:
    VirtualThreadsJdk21() : RootVirtualThreads(kRootJdk21) {}
};

TEST_F(VirtualThreadsJdk21, SleepUnmountsAndTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(jdk(), t), t, true);
}

TEST_F(VirtualThreadsJdk21, UnderZgcTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(jdk(), t, {}, {"-XX:+UseZGC"}), t, true);
}

TEST_F(VirtualThreadsJdk21, UnderGenerationalZgcTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(jdk(), t, {}, {"-XX:+UseZGC", "-XX:+ZGenerational"}), t, true);
}

TEST_F(VirtualThreadsJdk21, OtherCollectorsAreFollowed)
{
    const Tasks t{"sleep", 8, 3, 10, 200};
    expect_followed(launch(jdk(), t, {}, {"-XX:+UseParallelGC"}), t, true);
    expect_followed(launch(jdk(), t, {}, {"-XX:+UseSerialGC", "-XX:-UseCompressedOops"}), t, true);
    expect_followed(launch(jdk(), t, {}, {"-XX:+UseShenandoahGC"}), t, true);
}

// JDK 21 to 23 do not unmount in Object.wait: the carrier waits, the frames stay, counts stay exact.
TEST_F(VirtualThreadsJdk21, ObjectWaitStaysMountedAndCountsExactly)
{
    const Tasks t{"wait"};
    expect_followed(launch(jdk(), t), t, true, false);
}

// A sleep inside synchronized: the monitor pins the virtual thread, its carrier blocks for the
// sleep. Every such block is counted in step() and its callers, with its time: the carrier's
// time off a CPU inside block() (the JVM's own timing of block() also holds the sleep's code
// on a CPU, each of its calls a trap here).
void expect_pinned(const VtRun &r, const Tasks &t)
{
    expect_followed(r, t, true, false);
    const nlohmann::json &step = method_row(r.report, kClass, "step", kStep);
    const nlohmann::json &block = method_row(r.report, kClass, "block", kStep);
    const nlohmann::json &task = method_row(r.report, kClass, "task", "()V");
    const uint64_t steps = t.steps();
    const double off_cpu = static_cast<double>(u64(block, "wall_incl_ns") - u64(block, "cpu_incl_ns"));
    std::printf("  pinned: %llu of %llu steps, %.2f ms per block; block() off a CPU %.2f ms per call "
                "(the JVM's timing of it: %.2f ms)\n",
                static_cast<unsigned long long>(u64(step, "pinned")), static_cast<unsigned long long>(steps),
                u64(step, "pinned_ns") / 1e6 / std::max<uint64_t>(1, u64(step, "pinned")), off_cpu / 1e6 / steps,
                done_value(r.done, "blocked_ns") / 1e6 / steps);
    // Every step's sleep blocks its carrier once the pinned path is warm (demo.util.PinnedWarmup),
    // unless the carrier waited for a CPU past the sleep's end before it parked. A sleep whose
    // park returns early parks again, a second block in its step (41 blocks in 40 steps, once in
    // a CI run of 2026-11-30): at most 5% more.
    EXPECT_GE(u64(step, "pinned"), steps * 95 / 100) << r.report.at("diagnostics").dump();
    EXPECT_LE(u64(step, "pinned"), steps * 105 / 100);
    EXPECT_EQ(u64(step, "pinned_monitor"), u64(step, "pinned"));
    EXPECT_EQ(u64(block, "pinned"), u64(step, "pinned"));
    EXPECT_LE(static_cast<double>(u64(block, "pinned_ns")), off_cpu);
    // A pinned block lasts from the carrier's blocking switch-out to its switch-in: block()'s
    // blocked time (off a CPU, not waiting for one) and the wait for a CPU after the wake-up, not
    // the waits of a preempted carrier. Its floor: block()'s blocked time of the steps counted.
    const double blocked_counted = static_cast<double>(u64(block, "blocked_incl_ns")) *
                                   static_cast<double>(u64(step, "pinned")) / static_cast<double>(steps);
    EXPECT_GE(static_cast<double>(u64(block, "pinned_ns")), 0.9 * blocked_counted)
        << "block() off a CPU " << off_cpu / 1e6 << " ms, waiting for one " << u64(block, "runq_incl_ns") / 1e6
        << " ms";
    // Armed until the virtual thread next unmounts, a carrier's later block in step() counts too.
    EXPECT_GE(u64(step, "pinned_ns"), u64(block, "pinned_ns"));
    EXPECT_LE(u64(step, "pinned_ns"), u64(step, "wall_incl_ns") - u64(step, "cpu_incl_ns"));
    EXPECT_EQ(u64(task, "pinned"), u64(step, "pinned")) << "inclusive: task() holds its steps' blocks";
    EXPECT_EQ(u64(r.report.at("diagnostics"), "pinned_monitor"), u64(step, "pinned"));
}

TEST_F(VirtualThreadsJdk21, PinnedBlocksAreCountedWithTheirTime)
{
    const Tasks t{"pinned"};
    expect_pinned(launch(jdk(), t), t);
}

TEST_F(VirtualThreadsJdk21, PinnedBlocksUnderZgc)
{
    const Tasks t{"pinned"};
    expect_pinned(launch(jdk(), t, {}, {"-XX:+UseZGC", "-XX:+ZGenerational"}), t);
}

TEST_F(VirtualThreadsJdk21, AttachedMidRunTheNewCallsAreExact)
{
    const Tasks t{"sleep"};
    expect_followed(attach(jdk(), t), t, false);
}

class VirtualThreadsDebianJdk25 : public RootVirtualThreads {
protected:
    VirtualThreadsDebianJdk25() : RootVirtualThreads(kRootJdk25) {}
};

TEST_F(VirtualThreadsDebianJdk25, UnderZgcTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(jdk(), t, {}, {"-XX:+UseZGC"}), t, true);
}

TEST_F(VirtualThreadsDebianJdk25, WaitAndSynchronizedUnmountUnderZgcAndNothingIsPinned)
{
    const Tasks wait{"wait"};
    expect_followed(launch(jdk(), wait, {}, {"-XX:+UseZGC"}), wait, true);
    const Tasks pinned{"pinned"};
    const VtRun r = launch(jdk(), pinned, {}, {"-XX:+UseZGC"});
    expect_followed(r, pinned, true);
    EXPECT_EQ(u64(method_row(r.report, kClass, "step", kStep), "pinned"), 0u);
}

TEST_F(VirtualThreadsDebianJdk25, AttachedMidRunUnderZgcTheNewCallsAreExact)
{
    const Tasks t{"sleep"};
    expect_followed(attach(jdk(), t, {"-XX:+UseZGC"}), t, false);
}

}  // namespace
