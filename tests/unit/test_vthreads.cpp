// Virtual threads in the kernel's frame logic (bpf/vthread_frames.h), run as the
// programs run it: which frames leave a carrier at an unmount, and how their clocks
// go on on another.

#include "../common/callstack_driver.h"

namespace {

using callstack_driver::Thread;

enum : uint32_t { CarrierRun = 1, Task = 2, Step = 3, Work = 4 };
constexpr uint64_t kVthread = 77;  // the virtual thread's id

// Two carriers with clocks of their own. The carrier's run() is entered above the
// continuation entry (its Java frame at sp 0x9000, the entry at 0x8000); the
// virtual thread's task() and step() below it.
struct TwoCarriers : ::testing::Test {
    Thread k1, k2;
    static constexpr uint64_t kEntry = 0x8000;
    void SetUp() override
    {
        for (Thread *k : {&k1, &k2})
            k->exact_cpu = true;
        k2.cpu = 5'000'000;  // k2 has run other work before: none of it is the virtual thread's
        k2.events = 900;
        k2.t->traced_total = 300;
        k2.runq = 70'000;
        k2.sink.store = k1.sink.store;  // one pair of maps for the JVM
    }
    ParkedStore &store() { return *k1.sink.store; }
    static void enter_at(Thread &k, uint32_t id, uint64_t now, uint64_t sp)
    {
        k.sp = sp;
        ASSERT_EQ(k.enter(id, now), 0);
    }
};

// task() runs 10 on k1, step() 20 more, then the virtual thread unmounts for 1000 (k1 runs
// 300 of another thread's work meanwhile, k2 400), mounts on k2, runs 30 and returns twice.
TEST_F(TwoCarriers, FramesFollowTheVirtualThreadWithItsOwnCpuAndEvents)
{
    enter_at(k1, CarrierRun, 0, 0x9000);
    enter_at(k1, Task, 0, 0x7000);
    k1.cpu += 10;
    enter_at(k1, Step, 10, 0x6f00);
    k1.cpu += 20;
    EXPECT_EQ(jmt_vt_split(k1.t.get(), kEntry), 2u) << "task() and step(), not the carrier's run()";
    ASSERT_EQ(k1.unmount(kVthread, kEntry, 30), 2);
    ASSERT_EQ(store().frames.size(), 2u);
    EXPECT_EQ(store().headers.at(kVthread).n, 2u);
    EXPECT_EQ(k1.t->depth, 1u);
    k1.cpu += 300;
    ASSERT_TRUE(k1.leave(CarrierRun, 500)) << "the carrier's own frame returns on k1";
    EXPECT_EQ(k1.totals[CarrierRun].calls, 1u);
    EXPECT_EQ(k1.totals[CarrierRun].wall_incl_ns, 500u);

    k2.cpu += 400;
    ASSERT_TRUE(k2.mount(kVthread, 1030));
    EXPECT_EQ(k2.t->depth, 2u);
    EXPECT_TRUE(store().frames.empty()) << "mounted frames leave the parked map";
    k2.cpu += 30;
    ASSERT_TRUE(k2.leave(Step, 1060));
    ASSERT_TRUE(k2.leave(Task, 1060));
    EXPECT_EQ(k2.t->depth, 0u);

    const auto &step = k2.totals[Step], &task = k2.totals[Task];
    EXPECT_EQ(step.calls, 1u);
    EXPECT_EQ(task.calls, 1u);
    EXPECT_EQ(step.wall_incl_ns, 1050u) << "elapsed holds the time unmounted";
    EXPECT_EQ(task.wall_incl_ns, 1060u);
    EXPECT_EQ(step.cpu_incl_ns, 50u) << "20 on k1 and 30 on k2, no other thread's";
    EXPECT_EQ(task.cpu_incl_ns, 60u);
    EXPECT_EQ(task.cpu_excl_ns, 10u);
    EXPECT_EQ(step.runq_incl_ns, 0u) << "k2's earlier run-queue wait is not the virtual thread's";
    EXPECT_EQ(step.wall_incl_ns - step.cpu_incl_ns - step.runq_incl_ns, 1000u) << "unmounted: blocked";
    // Events: step's entry counted at its start, then its return on k2 (k2's 900 before are not its).
    EXPECT_EQ(step.events_incl, 1u);
    EXPECT_EQ(task.events_incl, 3u);
    EXPECT_EQ(k2.sink.dropped, 0u);
    // --per-thread: calls open across the unmount are the virtual thread's, the carrier's own its.
    EXPECT_EQ(k2.sink.vthread[Step], kVthread);
    EXPECT_EQ(k1.sink.vthread[CarrierRun], 0u);
}

// A call that ran start to end on one carrier is the carrier's (--per-thread).
TEST_F(TwoCarriers, ACallThatNeverUnmountedIsItsCarriers)
{
    enter_at(k1, Task, 0, 0x7000);
    enter_at(k1, Work, 1, 0x6000);
    ASSERT_TRUE(k1.leave(Work, 2));
    ASSERT_EQ(k1.unmount(kVthread, kEntry, 3), 1);
    ASSERT_TRUE(k2.mount(kVthread, 10));
    ASSERT_TRUE(k2.leave(Task, 11));
    EXPECT_EQ(k1.sink.vthread[Work], 0u);
    EXPECT_EQ(k2.sink.vthread[Task], kVthread);
}

// A frame that came back from a park has no place on the new stack (sp 0): it leaves at the
// next unmount with the frames entered since, whatever the new entry's address.
TEST_F(TwoCarriers, FramesBackFromAParkLeaveAgainWithTheNewOnes)
{
    enter_at(k1, Task, 0, 0x7000);
    ASSERT_EQ(k1.unmount(kVthread, kEntry, 5), 1);
    enter_at(k2, CarrierRun, 10, 0x3000);
    ASSERT_TRUE(k2.mount(kVthread, 20));
    enter_at(k2, Step, 30, 0x1f00);
    constexpr uint64_t kEntry2 = 0x2000;
    EXPECT_EQ(jmt_vt_split(k2.t.get(), kEntry2), 2u);
    ASSERT_EQ(k2.unmount(kVthread, kEntry2, 40), 2);
    ASSERT_EQ(store().frames.size(), 2u);
    EXPECT_EQ(store().frames.at({kVthread, 0}).id, static_cast<uint32_t>(Task)) << "bottom first";
    EXPECT_EQ(store().frames.at({kVthread, 1}).id, static_cast<uint32_t>(Step));
    EXPECT_EQ(k2.t->depth, 1u) << "the carrier's run() stays";
}

// Nothing of the virtual thread is open (its frames are untraced): nothing moves.
TEST_F(TwoCarriers, ACarrierWithOnlyItsOwnFramesKeepsThem)
{
    enter_at(k1, CarrierRun, 0, 0x9000);
    EXPECT_EQ(jmt_vt_split(k1.t.get(), kEntry), 0u);
    EXPECT_EQ(k1.unmount(kVthread, kEntry, 10), JMT_VT_NOTHING_PARKED);
    EXPECT_TRUE(store().headers.empty());
    EXPECT_EQ(k1.t->depth, 1u);
}

// Frames counted beyond JMT_MAX_DEPTH are the newest: they leave with the stored ones and
// come back counted, so their returns still pair.
TEST_F(TwoCarriers, FramesBeyondTheStackBoundMoveAsACount)
{
    for (uint32_t i = 0; i < JMT_MAX_DEPTH + 3; i++) {
        k1.sp = 0x7000 - i;
        EXPECT_EQ(k1.enter(Work, i), i < JMT_MAX_DEPTH ? 0 : 1);
    }
    EXPECT_EQ(jmt_vt_beyond(k1.t.get()), 3u);
    EXPECT_EQ(k1.unmount(kVthread, kEntry, 1000), JMT_MAX_DEPTH);
    EXPECT_EQ(store().frames.size(), static_cast<size_t>(JMT_MAX_DEPTH));
    EXPECT_EQ(store().headers.at(kVthread).beyond, 3u);
    EXPECT_EQ(k1.t->depth, 0u);
    ASSERT_TRUE(k2.mount(kVthread, 2000));
    for (uint32_t i = 0; i < JMT_MAX_DEPTH + 3; i++)
        ASSERT_TRUE(k2.leave(Work, 3000 + i));
    EXPECT_EQ(k2.totals[Work].calls, JMT_MAX_DEPTH + 3u);
    EXPECT_EQ(k2.sink.dropped, 0u);
    EXPECT_EQ(k2.t->depth, 0u);
}

// A park that fails (the parked maps full): the virtual thread's frames are dropped and
// counted lost, the carrier's own frames stay, and nothing is left parked.
TEST_F(TwoCarriers, AFailedParkDropsTheVirtualThreadsFramesAndCountsThem)
{
    enter_at(k1, CarrierRun, 0, 0x9000);
    enter_at(k1, Task, 10, 0x7000);
    enter_at(k1, Step, 20, 0x6f00);
    store().refuse = true;
    EXPECT_EQ(k1.unmount(kVthread, kEntry, 30), JMT_VT_PARK_FAILED);
    EXPECT_EQ(k1.t->depth, 1u) << "the carrier's run() stays";
    EXPECT_EQ(k1.sink.counters[JMT_CNT_VT_FRAMES_LOST], 2u);
    EXPECT_EQ(k1.sink.dropped, 2u);
    EXPECT_EQ(k1.totals[Task].unreturned, 1u);
    EXPECT_EQ(k1.totals[Step].unreturned, 1u);
    EXPECT_TRUE(store().frames.empty());
    EXPECT_FALSE(k2.mount(kVthread, 40)) << "nothing parked to mount";
}

// A parked frame that is gone at the mount is counted lost; the others come back in order.
TEST_F(TwoCarriers, AParkedFrameLostBeforeTheMountIsCounted)
{
    enter_at(k1, Task, 0, 0x7000);
    enter_at(k1, Step, 10, 0x6f00);
    ASSERT_EQ(k1.unmount(kVthread, kEntry, 20), 2);
    store().frames.erase({kVthread, 1});
    ASSERT_TRUE(k2.mount(kVthread, 100));
    EXPECT_EQ(k2.sink.counters[JMT_CNT_VT_FRAMES_LOST], 1u);
    EXPECT_EQ(k2.t->depth, 1u);
    ASSERT_TRUE(k2.leave(Task, 110));
    EXPECT_EQ(k2.totals[Task].wall_incl_ns, 110u);
}

// --foreign: an untraced call open across the unmount goes on on the new carrier, and its
// on-CPU time is the virtual thread's (20 on k1, 5 on k2), not k2's earlier work.
TEST_F(TwoCarriers, AnOpenForeignSegmentFollowsTheVirtualThread)
{
    k1.foreign = k2.foreign = 1;
    enter_at(k1, Task, 0, 0x7000);
    k1.cpu += 10;
    k1.untraced_enter(10);
    k1.cpu += 20;
    ASSERT_EQ(k1.unmount(kVthread, kEntry, 30), 1);
    k2.cpu += 400;
    ASSERT_TRUE(k2.mount(kVthread, 1030));
    k2.cpu += 5;
    k2.untraced_leave(1035);
    k2.cpu += 2;
    ASSERT_TRUE(k2.leave(Task, 1040));
    const Totals &task = k2.totals[Task];
    EXPECT_EQ(task.cpu_excl_ns, 37u);
    EXPECT_EQ(task.cpu_foreign_ns, 25u);
    EXPECT_EQ(task.wall_foreign_ns, 1025u) << "elapsed runs on while unmounted";
    EXPECT_EQ(task.events_foreign, 1u) << "the untraced return (its entry opened the segment)";
}

// --foreign: the open segment's start parks like a frame's clocks.
TEST(VthreadClock, AParkedClockGoesOnFromWhatItHadUsed)
{
    jmt_clock start{100, 40, 7, 3, 5};
    const jmt_clock at_unmount{200, 90, 12, 4, 9};
    jmt_clock_park(&start, &at_unmount);
    const jmt_clock at_mount{900, 10'000, 500, 60, 1'000};
    jmt_clock_unpark(&start, &at_mount);
    EXPECT_EQ(start.wall_ns, 100u) << "elapsed runs on";
    EXPECT_EQ(at_mount.cpu_ns - start.cpu_ns, 50u);
    EXPECT_EQ(at_mount.events - start.events, 5u);
    EXPECT_EQ(at_mount.traced - start.traced, 1u);
    EXPECT_EQ(at_mount.runq_ns - start.runq_ns, 4u);
}

}  // namespace

namespace {

// A pinned virtual thread blocks its carrier: every open frame holds the block's time, the
// block counts once (its later parts add time only), a recursive frame's inclusive share is 0.
TEST(Pinned, BlocksGoIntoEveryOpenFrameInclusively)
{
    Thread k;
    ASSERT_EQ(k.enter(Task, 0), 0);
    ASSERT_EQ(k.enter(Step, 10), 0);
    ASSERT_EQ(k.enter(Task, 20), 0);        // recursive
    jmt_pinned_add(k.t.get(), 5000, 1, 1);  // a block by a monitor held
    jmt_pinned_add(k.t.get(), 3000, 0, 1);  // the same block, woken and blocked again
    ASSERT_TRUE(k.leave(Task, 9000));
    ASSERT_TRUE(k.leave(Step, 9010));
    jmt_pinned_add(k.t.get(), 700, 1, 0);  // another, by a native frame: task() alone holds it
    ASSERT_TRUE(k.leave(Task, 9800));
    EXPECT_EQ(k.totals[Step].pinned, 1u);
    EXPECT_EQ(k.totals[Step].pinned_ns, 8000u);
    EXPECT_EQ(k.totals[Step].pinned_monitor, 1u);
    EXPECT_EQ(k.totals[Task].pinned, 2u) << "the outer frame's two blocks; the recursive one adds none";
    EXPECT_EQ(k.totals[Task].pinned_ns, 8700u);
    EXPECT_EQ(k.totals[Task].pinned_monitor, 1u);
    EXPECT_EQ(k.totals[Task].calls, 2u);
}

// Generational ZGC's coloured pointers: the address above the one remapped bit that is set
// (4 remapped bits from bit 12), as ZPointer::uncolor takes it; other collectors' as they are.
TEST(ZPointer, TheAddressIsAboveTheSetRemappedBit)
{
    const uint64_t address = 0x40000123450ULL;
    for (uint64_t bit = 0; bit < 4; bit++) {
        const uint64_t coloured = (address << (13 + bit)) | (1ULL << (12 + bit)) | 0x510;  // + other metadata
        EXPECT_EQ(jmt_zpointer_address(coloured, 12), address) << "remapped bit " << bit;
    }
    EXPECT_EQ(jmt_zpointer_address(address << 16, 12), 0u) << "no remapped bit set";
    EXPECT_EQ(jmt_zpointer_address(0x7f0012345678ULL, 0), 0x7f0012345678ULL);
}

}  // namespace
