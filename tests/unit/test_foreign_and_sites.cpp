// The kernel's frame logic (bpf/callstack.h) under --foreign, its call sites and its entry and
// return paths (jmt_enter, jmt_leave), run in userspace as the programs run it.
#include "../common/callstack_driver.h"

namespace {

using callstack_driver::Thread;

enum : uint32_t { A = 1, B = 2, C = 3, X = 4 };

}  // namespace

// --foreign: A calls untraced U (which calls untraced V and calls back into traced B) and
// untraced W; A's foreign time is U's and W's, less B's, and never more than its exclusive time.
TEST(CallStack, ForeignTimeIsTheUntracedCalleesLessTracedCallbacks)
{
    Thread th;
    th.foreign = 1;
    th.enter(A, 0);
    th.untraced_enter(10);  // U: opens A's segment
    th.untraced_enter(12);  // V, nested: no clock
    th.untraced_leave(20);  // V returns: U still open
    th.enter(B, 30);        // U calls back into B: A's segment pauses (10..30 = 20)
    th.untraced_enter(35);  // B's own untraced callee: B's segment
    th.untraced_leave(45);
    th.leave(B, 50);        // resumes A's segment at 50
    th.untraced_leave(60);  // U returns (50..60 = 10)
    th.untraced_enter(70);  // W
    th.untraced_leave(75);  // (5)
    th.leave(A, 100);
    EXPECT_EQ(th.t->depth, 0u);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 80u);
    EXPECT_EQ(th.totals[A].wall_foreign_ns, 20u + 10u + 5u);
    EXPECT_EQ(th.totals[A].cpu_foreign_ns, 10u + 5u + 2u);  // cpu = wall / 2 at each clock read: 5..15, 25..30, 35..37
    EXPECT_EQ(th.totals[B].wall_foreign_ns, 10u);
    EXPECT_EQ(th.totals[B].wall_excl_ns, 20u);
    EXPECT_EQ(th.totals[A].foreign_lost, 0u);
    // Events inside A's segments, each segment's end included, its start not:
    // V entry, V return, B entry | U return | W return.
    EXPECT_EQ(th.totals[A].events_foreign, 5u);
    EXPECT_EQ(th.totals[A].traced_foreign, 1u);  // B's entry
    EXPECT_EQ(th.totals[B].events_foreign, 1u);
}

// Without --foreign the same events leave every foreign value at 0.
TEST(CallStack, ForeignOffMeasuresNothing)
{
    Thread th;
    th.enter(A, 0);
    th.untraced_enter(10);
    th.untraced_leave(60);
    th.leave(A, 100);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 100u);
    EXPECT_EQ(th.totals[A].wall_foreign_ns, 0u);
    EXPECT_EQ(th.totals[A].events_foreign, 0u);
}

// An untraced callee whose return never fires: the frame's own return closes the segment
// (flagged); untraced returns of calls entered before the frame change nothing.
TEST(CallStack, ForeignSegmentWithoutReturnEndsWithTheFrame)
{
    Thread th;
    th.foreign = 1;
    th.untraced_enter(0);  // no traced frame yet: nothing to time
    th.enter(A, 5);
    th.untraced_leave(8);   // a return of a call entered before A: ignored
    th.untraced_enter(10);  // inlined, throws: no return
    th.leave(A, 50);
    EXPECT_EQ(th.totals[A].wall_foreign_ns, 40u);
    EXPECT_EQ(th.totals[A].foreign_lost, 1u);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 45u);
    // A dropped frame's closed segments move to its caller; an open one is given up.
    th.enter(A, 100);
    th.enter(X, 110);
    th.untraced_enter(120);
    th.untraced_leave(130);  // X's segment: 10
    th.untraced_enter(140);  // X throws out of this one: neither returns
    th.leave(A, 200);        // X dropped
    EXPECT_EQ(th.totals[X].unreturned, 1u);
    EXPECT_EQ(th.totals[A].wall_foreign_ns, 40u + 10u);
    EXPECT_EQ(th.totals[A].foreign_lost, 1u);  // the first call's
    EXPECT_EQ(th.totals[X].foreign_lost, 1u);
}

// Foreign time never exceeds exclusive time, even when on-CPU time ran ahead.
TEST(CallStack, ForeignIsWithinExclusive)
{
    jmt_thread t{};
    jmt_clock a0{1000, 500, 1, 1}, u0{1010, 505, 2, 1}, u1{1090, 700, 3, 1}, a1{1100, 705, 4, 2};
    jmt_push(&t, A, 1, &a0, 1000, 0, 0, 1);
    ASSERT_TRUE(jmt_foreign_enter(&t));
    jmt_foreign_open(&t, &u0);
    ASSERT_TRUE(jmt_foreign_leave(&t));
    jmt_foreign_close(&t, &u1);  // 80 ns elapsed, 195 "on CPU"
    jmt_closed a{};
    jmt_close_top(&t, &a1, &a, 1);
    EXPECT_EQ(a.wall_foreign_ns, 80u);
    EXPECT_EQ(a.cpu_excl_ns, 100u);    // clamped to elapsed
    EXPECT_EQ(a.cpu_foreign_ns, 80u);  // within its own elapsed foreign time
    EXPECT_LE(a.events_foreign, a.events_excl);
}

// The call site is needed only for an entry at the top frame's sp (a C1-inlined callee): it is
// read from user memory once per (method, parent, sp), then taken from the thread's cache.
TEST(CallSite, ReadOnceThenCached)
{
    Thread th;
    th.sp = 0x5000;
    ASSERT_EQ(th.enter(A, 1), 0);  // A's frame at sp 0x5000
    EXPECT_EQ(th.sink.call_site_reads, 1u) << "an outermost entry reads its own (jmt_enter)";
    jmt_thread *t = th.t.get();
    EXPECT_EQ(jmt_call_site(t, &th.sink, B, 0x4000, 0x3000), 0u) << "another sp: not needed, not read";
    EXPECT_EQ(th.sink.call_site_reads, 1u);
    EXPECT_EQ(jmt_call_site(t, &th.sink, B, 0x5000, 0x3000), 0x4000u);
    EXPECT_EQ(jmt_call_site(t, &th.sink, B, 0x5000, 0x3000), 0x4000u);
    EXPECT_EQ(th.sink.call_site_reads, 2u) << "the second entry of B from A's frame hits the cache";
    EXPECT_EQ(jmt_call_site(t, &th.sink, C, 0x5000, 0x3100), 0x4100u);
    EXPECT_EQ(th.sink.call_site_reads, 3u) << "another method: another slot";
}

// The top frame's own method entering at its sp is a stale frame or inlined recursion, which
// only a fresh read tells apart: never from the cache.
TEST(CallSite, AnAmbiguousTopIsReadEveryTime)
{
    Thread th;
    th.sp = 0x5000;
    ASSERT_EQ(th.enter(A, 1), 0);
    th.sink.call_site_reads = 0;  // the entry's own read
    jmt_thread *t = th.t.get();
    EXPECT_EQ(jmt_call_site(t, &th.sink, A, 0x5000, 0x3000), 0x4000u);
    EXPECT_EQ(jmt_call_site(t, &th.sink, A, 0x5000, 0x3000), 0x4000u);
    EXPECT_EQ(th.sink.call_site_reads, 2u);
}

namespace {

using callstack_driver::Thread;

enum : uint32_t { Outer = 11, Inlined = 12 };

// The entry path (jmt_enter): a C1-inlined callee that exited by throwing fired no return;
// entered again from the same site of the same compiled frame, its dead frame is dropped
// first. Its call counts, unreturned, with no time; the live call's time is its own.
TEST(Entry, ADeadInlinedFrameIsDroppedWhenItsSiteEntersAgain)
{
    Thread th;
    th.bp = 0x3000;  // every entry from one call site (0x4000)
    th.sp = 0x5000;
    ASSERT_EQ(th.enter(Outer, 0), 0);
    th.sp = 0x5000;  // inlined: the same Java frame
    ASSERT_EQ(th.enter(Inlined, 10), 0);
    th.sp = 0x5000;
    ASSERT_EQ(th.enter(Inlined, 20), 0);  // the first one threw
    EXPECT_EQ(th.t->depth, 2u) << "the dead frame was dropped before the push";
    EXPECT_EQ(th.sink.dropped, 1u);
    ASSERT_TRUE(th.leave(Inlined, 50));
    ASSERT_TRUE(th.leave(Outer, 60));
    EXPECT_EQ(th.totals[Inlined].calls, 2u);
    EXPECT_EQ(th.totals[Inlined].unreturned, 1u);
    EXPECT_EQ(th.totals[Inlined].wall_incl_ns, 30u) << "the live call alone";
    EXPECT_EQ(th.totals[Outer].wall_excl_ns, 30u) << "the dead call's 10 ns stay with its caller";
    EXPECT_EQ(th.totals[Outer].traced_incl, 4u) << "three entries after its own, and its return";
}

// The same method from another call site of the same frame is inlined recursion: both live.
TEST(Entry, InlinedRecursionFromAnotherSiteKeepsBothFrames)
{
    Thread th;
    th.sp = 0x5000;
    th.bp = 0x3000;
    ASSERT_EQ(th.enter(Outer, 0), 0);
    EXPECT_EQ(jmt_parent_path(th.t.get()), Outer + 100u) << "the frame holds the path the lookup gave";
    th.sp = 0x5000;
    ASSERT_EQ(th.enter(Inlined, 10), 0);
    th.sp = 0x5000;
    th.bp = 0x3100;  // another call site inside the inlined body
    ASSERT_EQ(th.enter(Inlined, 20), 0);
    EXPECT_EQ(th.t->depth, 3u);
    EXPECT_EQ(th.sink.dropped, 0u);
    ASSERT_TRUE(th.leave(Inlined, 30));
    ASSERT_TRUE(th.leave(Inlined, 40));
    EXPECT_EQ(th.totals[Inlined].calls, 2u);
    EXPECT_EQ(th.totals[Inlined].wall_incl_ns, 30u) << "the outermost frame's, recursion counted once";
}

// The return path (jmt_leave): on a thread with nothing open a return is unmatched and
// leaves the thread's traced count alone; an entry counts one traced event.
TEST(Return, WithNothingOpenAReturnIsUnmatched)
{
    Thread th;
    EXPECT_FALSE(th.leave(Outer, 5));
    EXPECT_EQ(th.t->traced_total, 0u);
    ASSERT_EQ(th.enter(Outer, 10), 0);
    EXPECT_EQ(th.t->traced_total, 1u);
    EXPECT_FALSE(th.leave(Inlined, 20)) << "a method with no frame open";
    EXPECT_EQ(th.t->depth, 1u);
    ASSERT_TRUE(th.leave(Outer, 30));
    EXPECT_EQ(th.totals[Outer].wall_incl_ns, 20u);
    EXPECT_EQ(th.totals[Outer].events_incl, 2u) << "the unmatched return inside it, and its own";
}

}  // namespace
