// Virtual threads (JDK 21+) on JDK 25 (jdk25(): Temurin's, else Debian's from the
// root, in a container): calls that
// unmount (sleep, Object.wait, a contended synchronized) and go on on another
// carrier keep exact counts, and their times are their own virtual thread's.
// The workload (demo.vt.VirtualTasks) times itself with System.nanoTime and the
// process's CPU clock in the same traced run.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "vt_workload.h"

using jmt_it::calls_of;
using jmt_it::done_value;
using jmt_it::method_row;

namespace {

using namespace jmt_it;

class VirtualThreads : public jmt_it::Jdk25Test {};

TEST_F(VirtualThreads, SleepUnmountsAndTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(vt_jdk25(), t), t, true);
}

// The compat programs (a kernel without bpf_loop, 5.10) follow them too: their unmount's drop
// steps are global functions, which this kernel's verifier takes as 5.10's does.
TEST_F(VirtualThreads, TheCompatProgramsFollowTheFramesToo)
{
    const Tasks t{"sleep"};
    setenv("JMT_TEST_COMPAT_PROGRAMS", "1", 1);
    const VtRun r = launch(vt_jdk25(), t);
    unsetenv("JMT_TEST_COMPAT_PROGRAMS");
    EXPECT_NE(r.report.at("source").at("kernel").get<std::string>().find("without bpf_loop"), std::string::npos)
        << r.report.at("source").dump();
    expect_followed(r, t, true);
}

TEST_F(VirtualThreads, ObjectWaitInsideSynchronizedUnmountsAndTheFramesFollow)
{
    const Tasks t{"wait"};
    expect_followed(launch(vt_jdk25(), t), t, true);
}

// One lock for all: threads blocked on it unmount (JDK 24+), and a thread woken while the
// lock is taken again goes back to wait without its frames ever reaching the carrier.
TEST_F(VirtualThreads, AContendedSynchronizedUnmountsAndTheFramesFollow)
{
    const Tasks t{"contended", 6, 3, 10, 500};
    expect_followed(launch(vt_jdk25(), t), t, true);
}

// 64 virtual threads on as many carriers as CPUs: most wait unmounted for a carrier.
// HotSpot resolves one freeze and one thaw per GC barrier set and oop size; the hooks are on the
// ones this JVM resolved: with the serial collector's card table and without compressed oops too.
TEST_F(VirtualThreads, OtherCollectorsAndWideOopsAreFollowed)
{
    const Tasks t{"sleep", 8, 3, 10, 200};
    expect_followed(launch(vt_jdk25(), t, {}, {"-XX:+UseSerialGC", "-XX:-UseCompressedOops"}), t, true);
}

TEST_F(VirtualThreads, MoreVirtualThreadsThanCarriers)
{
    const Tasks t{"sleep", 64, 3, 10, 200};
    expect_followed(launch(vt_jdk25(), t), t, true);
}

// --per-thread: a call open across an unmount is its virtual thread's row, whatever its carriers.
TEST_F(VirtualThreads, PerThreadRowsNameTheVirtualThreads)
{
    const Tasks t{"sleep"};
    const VtRun r = launch(vt_jdk25(), t, {"--per-thread"});
    ASSERT_FALSE(r.report.is_null());
    std::set<uint64_t> vthreads;
    uint64_t steps = 0;
    for (const auto &m : r.report.at("methods")) {
        if (m.at("method") != "step")
            continue;
        EXPECT_NE(u64(m, "vthread"), 0u) << "every step() unmounts: " << m.dump();
        EXPECT_EQ(u64(m, "tid"), 0u);
        EXPECT_EQ(m.at("thread").get<std::string>(), "virtual thread " + std::to_string(u64(m, "vthread")));
        EXPECT_EQ(u64(m, "calls"), t.rounds) << "each virtual thread's own steps";
        vthreads.insert(u64(m, "vthread"));
        steps += u64(m, "calls");
    }
    EXPECT_EQ(vthreads.size(), t.threads);
    EXPECT_EQ(steps, t.threads * t.rounds);
}

// ZGC's references are coloured pointers: the hooks take the colour off as the JVM does.
TEST_F(VirtualThreads, UnderZgcTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(vt_jdk25(), t, {}, {"-XX:+UseZGC"}), t, true);
}

// Shenandoah moves objects while the JVM runs: the hooks read only what a copy keeps (the
// continuation's identity and its thread's id).
TEST_F(VirtualThreads, UnderShenandoahTheFramesFollow)
{
    const Tasks t{"sleep", 8, 3, 10, 200};
    expect_followed(launch(vt_jdk25(), t, {}, {"-XX:+UseShenandoahGC"}), t, true);
}

// A fresh virtual thread per task, as a server makes one per request: 17,000 of them, more than
// the kernel's table of parked virtual threads holds at once (16,384), each unmounting once with
// call() open and once without a traced frame. Every park is given back at its mount: no frame
// is lost, however many virtual threads come and go.
TEST_F(VirtualThreads, FreshVirtualThreadsBeyondTheParkedTableKeepEveryFrame)
{
    constexpr uint64_t kThreads = 17000;
    const VtRun r =
        launch_main(vt_jdk25(), "demo.vt.FreshThreads", {std::to_string(kThreads), "64"}, {"--method", "call"}, {});
    ASSERT_FALSE(r.report.is_null());
    ASSERT_EQ(done_value(r.done, "calls"), kThreads);
    const auto &d = r.report.at("diagnostics");
    EXPECT_EQ(calls_of(r.report, "demo/vt/FreshThreads", "call", "()V"), kThreads);
    EXPECT_EQ(u64(d, "vt_frames_lost"), 0u);
    EXPECT_EQ(u64(d, "dropped_frames"), 0u);
    EXPECT_EQ(u64(d, "unmatched_returns"), 0u);
    EXPECT_EQ(u64(d, "vt_unmounts"), kThreads) << "one unmount with call() open per virtual thread";
    EXPECT_EQ(u64(d, "vt_mounts"), kThreads);
}

// A sleep inside synchronized: JDK 24 and later unmount it (every step unmounts, which
// expect_followed checks), so nothing is pinned by the monitor. A freeze may still fail for
// another reason HotSpot gives (a native frame or a critical section on the virtual thread's
// stack, e.g. a class being initialised), none by a monitor. Those are counted, not the property
// under test, and printed.
TEST_F(VirtualThreads, SleepInsideSynchronizedUnmountsAndNothingIsPinned)
{
    const Tasks t{"pinned"};
    const VtRun r = launch(vt_jdk25(), t);
    expect_followed(r, t, true);
    const auto &step = method_row(r.report, "demo/vt/VirtualTasks", "step", "(Ljava/lang/Object;)V");
    std::printf("  step(): pinned %llu times, by a monitor %llu\n",
                static_cast<unsigned long long>(u64(step, "pinned")),
                static_cast<unsigned long long>(u64(step, "pinned_monitor")));
    EXPECT_EQ(u64(step, "pinned_monitor"), 0u);
    EXPECT_EQ(u64(r.report.at("diagnostics"), "pinned_monitor"), 0u);
}

TEST_F(VirtualThreads, AttachedMidRunTheNewCallsAreExact)
{
    const Tasks t{"sleep"};
    expect_followed(attach(vt_jdk25(), t), t, false);
}

}  // namespace
