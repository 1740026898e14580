// The kernel's frame logic (bpf/callstack.h: entry, return, recursion, lost returns, depth), run in userspace as the programs run it.
#include "../common/callstack_driver.h"

namespace {

using callstack_driver::Thread;

enum : uint32_t { A = 1, B = 2, C = 3, X = 4 };

// Off a CPU, a frame's thread waits runnable (run queue) or is blocked: A runs 10, waits 30
// for a CPU, calls B (runs 10, waits 20 for a CPU, blocks 40), blocks 5, runs 10.
TEST(CallStack, OffCpuTimeIsRunQueueWaitAndBlockedTime)
{
    Thread th;
    th.exact_cpu = true;
    uint64_t now = 1000;
    auto run = [&](uint64_t n) {
        now += n;
        th.cpu += n;
    };
    auto runnable = [&](uint64_t n) {
        now += n;
        th.runq += n;
    };
    auto blocked = [&](uint64_t n) { now += n; };
    th.enter(A, now);
    run(10);
    runnable(30);
    th.enter(B, now);
    run(10);
    runnable(20);
    blocked(40);
    th.leave(B, now);
    blocked(5);
    run(10);
    th.leave(A, now);
    const Totals &a = th.totals[A], &b = th.totals[B];
    EXPECT_EQ(a.wall_incl_ns, 125u);
    EXPECT_EQ(a.cpu_incl_ns, 30u);
    EXPECT_EQ(a.runq_incl_ns, 50u);  // blocked: 125 - 30 - 50 = 45
    EXPECT_EQ(a.wall_excl_ns, 55u);
    EXPECT_EQ(a.cpu_excl_ns, 20u);
    EXPECT_EQ(a.runq_excl_ns, 30u);  // blocked: 5
    EXPECT_EQ(b.wall_incl_ns, 70u);
    EXPECT_EQ(b.runq_incl_ns, 20u);
    EXPECT_EQ(b.runq_excl_ns, 20u);  // blocked: 70 - 10 - 20 = 40
}

// Run-queue wait is at most the time off a CPU: a clock that says more (an unseen switch) is cut
// there, and a recursive frame adds no inclusive wait (its outermost frame has it).
TEST(CallStack, RunQueueWaitStaysWithinTheTimeOffACpu)
{
    Thread th;
    th.exact_cpu = true;
    uint64_t now = 1000;
    th.enter(A, now);
    now += 100;
    th.cpu += 40;
    th.runq += 90;  // more than the 60 ns off a CPU
    th.enter(A, now);
    now += 10;
    th.cpu += 10;
    th.leave(A, now);
    th.leave(A, now);
    const Totals &a = th.totals[A];
    EXPECT_EQ(a.calls, 2u);
    EXPECT_EQ(a.wall_incl_ns, 110u);
    EXPECT_EQ(a.cpu_incl_ns, 50u);
    EXPECT_EQ(a.runq_incl_ns, 60u);
    EXPECT_EQ(a.runq_excl_ns, 60u);
    EXPECT_LE(a.runq_excl_ns + a.cpu_excl_ns, a.wall_excl_ns);
}

// The A/B/C flow with consume(n) = n ns: A 135/45, B 80/40 (two calls), C 50/50 (five calls).
TEST(CallStack, AbcFlowInclusiveExclusive)
{
    Thread th;
    uint64_t now = 1000;
    auto consume = [&](uint64_t n) { now += n; };
    auto c = [&] {
        th.enter(C, now);
        consume(10);
        th.leave(C, now);
    };
    auto b = [&] {
        th.enter(B, now);
        consume(5);
        c();
        consume(5);
        c();
        consume(10);
        th.leave(B, now);
    };
    th.enter(A, now);
    consume(15);
    b();
    consume(20);
    c();
    consume(5);
    b();
    consume(5);
    th.leave(A, now);

    EXPECT_EQ(th.t->depth, 0u);
    EXPECT_EQ(th.totals[A].calls, 1u);
    EXPECT_EQ(th.totals[A].wall_incl_ns, 135u);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 45u);
    EXPECT_EQ(th.totals[B].calls, 2u);
    EXPECT_EQ(th.totals[B].wall_incl_ns, 80u);
    EXPECT_EQ(th.totals[B].wall_excl_ns, 40u);
    EXPECT_EQ(th.totals[C].calls, 5u);
    EXPECT_EQ(th.totals[C].wall_incl_ns, 50u);
    EXPECT_EQ(th.totals[C].wall_excl_ns, 50u);
    // Probe events inside each frame, its own return included, its entry not: a() encloses
    // 2 x b (entry, 2 x c entry+return, return) + c (entry, return) + its return = 15.
    EXPECT_EQ(th.totals[A].events_incl, 15u);
    EXPECT_EQ(th.totals[A].events_excl, 4u);  // 2 b entries, 1 c entry, its return
    EXPECT_EQ(th.totals[B].events_incl, 10u);
    EXPECT_EQ(th.totals[B].events_excl, 6u);  // per call: 2 c entries, its return
    EXPECT_EQ(th.totals[C].events_incl, 5u);
    EXPECT_EQ(th.totals[C].events_excl, 5u);
    EXPECT_EQ(th.totals[A].traced_incl, 15u);
    EXPECT_EQ(th.totals[B].traced_excl, 6u);
    // On-CPU follows the same arithmetic on its own clock.
    EXPECT_EQ(th.totals[A].cpu_incl_ns, 67u);  // (1135/2) - (1000/2)
    EXPECT_EQ(th.totals[C].cpu_excl_ns, th.totals[C].cpu_incl_ns);
}

// Rejected events count among a frame's events but not its traced events.
TEST(CallStack, RejectedEventsAreEventsButNotTracedEvents)
{
    Thread th;
    th.enter(A, 0);
    th.rejected();  // an untraced callee's entry ...
    th.rejected();  // ... and return
    th.enter(C, 10);
    th.leave(C, 20);
    th.leave(A, 30);
    EXPECT_EQ(th.totals[A].events_incl, 5u);  // 2 rejected, C's entry and return, its own return
    EXPECT_EQ(th.totals[A].traced_incl, 3u);
    EXPECT_EQ(th.totals[A].events_excl, 4u);  // 2 rejected, C's entry, its own return
    EXPECT_EQ(th.totals[A].traced_excl, 2u);
    EXPECT_EQ(th.totals[C].events_incl, 1u);
    EXPECT_EQ(th.totals[C].traced_incl, 1u);
}

// Direct recursion: inclusive counts the outermost frame only, exclusive sums to it.
TEST(CallStack, RecursionIsNotDoubleCounted)
{
    Thread th;
    uint64_t now = 0;
    for (int i = 0; i < 5; i++) {
        th.enter(A, now);
        now += 10;
    }
    for (int i = 0; i < 5; i++) {
        now += 10;
        th.leave(A, now);
    }
    EXPECT_EQ(th.totals[A].calls, 5u);
    EXPECT_EQ(th.totals[A].wall_incl_ns, 100u);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 100u);
}

// A call path's inclusive time is each frame's own, recursive or not: A;A;A is its own path.
TEST(CallStack, ClosedFramesCarryTheirPathAndTheirOwnInclusiveValues)
{
    jmt_thread t{};
    jmt_clock c0{100, 50, 1, 1}, c1{130, 60, 2, 2}, c2{150, 65, 3, 3}, c3{200, 90, 4, 4};
    jmt_push(&t, A, 1, &c0, 1000, 0, 7, 0);
    EXPECT_EQ(jmt_parent_path(&t), 7u);
    jmt_push(&t, A, 1, &c1, 990, 0, 9, 0);  // recursive: same method on top of itself
    EXPECT_EQ(jmt_parent_path(&t), 9u);
    jmt_closed inner{}, outer{};
    jmt_close_top(&t, &c2, &inner, 0);
    EXPECT_EQ(inner.path, 9u);
    EXPECT_EQ(inner.wall_incl_ns, 0u);  // method totals: the outermost frame only
    EXPECT_EQ(inner.frame_wall_ns, 20u);
    EXPECT_EQ(inner.frame_cpu_ns, 5u);
    EXPECT_EQ(inner.frame_events, 1u);
    EXPECT_EQ(inner.frame_traced, 1u);
    jmt_close_top(&t, &c3, &outer, 0);
    EXPECT_EQ(outer.path, 7u);
    EXPECT_EQ(outer.wall_incl_ns, 100u);
    EXPECT_EQ(outer.frame_wall_ns, 100u);
    EXPECT_EQ(outer.wall_excl_ns, 80u);  // less the inner frame's 20
    EXPECT_EQ(jmt_parent_path(&t), 0u);  // no frame open: an entry is a root path
    // A dropped frame keeps its path; it has no time of its own.
    jmt_push(&t, B, 2, &c0, 1000, 0, 11, 0);
    jmt_closed dropped{};
    jmt_drop_top(&t, &dropped, 0);
    EXPECT_EQ(dropped.path, 11u);
    EXPECT_EQ(dropped.unreturned, 1u);
    EXPECT_EQ(dropped.frame_wall_ns, 0u);
}

// On-CPU time can never exceed elapsed time: a clock that ran ahead is clamped and flagged.
TEST(CallStack, OnCpuAheadOfElapsedIsClampedAndFlagged)
{
    jmt_thread t{};
    jmt_clock a0{1000, 500, 1, 1}, b0{1100, 600, 2, 2}, b1{1150, 700, 3, 3}, a1{1200, 900, 4, 4};
    jmt_push(&t, A, 1, &a0, 1000, 0, 0, 0);
    jmt_push(&t, B, 2, &b0, 990, 0, 0, 0);
    jmt_closed b{}, a{};
    jmt_close_top(&t, &b1, &b, 0);  // 50 ns elapsed, 100 ns "on CPU"
    EXPECT_EQ(b.cpu_clamped, 1u);
    EXPECT_EQ(b.cpu_incl_ns, 50u);
    EXPECT_EQ(b.cpu_excl_ns, 50u);
    EXPECT_EQ(b.frame_cpu_ns, 50u);
    jmt_close_top(&t, &a1, &a, 0);  // 200 elapsed, 400 "on CPU": clamped to 200, less b's 50
    EXPECT_EQ(a.cpu_clamped, 1u);
    EXPECT_EQ(a.cpu_incl_ns, 200u);
    EXPECT_EQ(a.cpu_excl_ns, 150u);
    EXPECT_EQ(a.wall_excl_ns, 150u);
    // A normal frame is not flagged.
    jmt_clock c0{2000, 1000, 5, 5}, c1{2100, 1060, 6, 6};
    jmt_push(&t, C, 3, &c0, 1000, 0, 0, 0);
    jmt_closed c{};
    jmt_close_top(&t, &c1, &c, 0);
    EXPECT_EQ(c.cpu_clamped, 0u);
    EXPECT_EQ(c.cpu_incl_ns, 60u);
}

// Mutual recursion A -> B -> A -> B: each method's inclusive is its outermost frame.
TEST(CallStack, MutualRecursion)
{
    Thread th;
    th.enter(A, 0);
    th.enter(B, 10);
    th.enter(A, 20);
    th.enter(B, 30);
    th.leave(B, 40);
    th.leave(A, 50);
    th.leave(B, 60);
    th.leave(A, 70);
    EXPECT_EQ(th.totals[A].wall_incl_ns, 70u);
    EXPECT_EQ(th.totals[B].wall_incl_ns, 50u);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 10u + 10u + 10u + 10u);
    EXPECT_EQ(th.totals[B].wall_excl_ns, 10u + 10u + 10u);
}

// Recursion detection survives bloom-filter collisions (ids equal modulo 64).
TEST(CallStack, BloomCollisionIsNotRecursion)
{
    Thread th;
    th.enter(A, 0);
    th.enter(A + 64, 10);
    th.leave(A + 64, 30);
    th.leave(A, 40);
    EXPECT_EQ(th.totals[A + 64].wall_incl_ns, 20u);
    EXPECT_EQ(th.totals[A].wall_incl_ns, 40u);
}

// A callee whose return never fires: resync on the caller's return, count the call,
// keep the callee's own time in the caller, move the callee's children to the caller.
TEST(CallStack, LostReturnIsDroppedOnTheNextMatchingReturn)
{
    Thread th;
    th.enter(A, 0);
    th.enter(X, 10);  // inlined callee, throws: no return
    th.enter(C, 20);
    th.leave(C, 30);   // 10 ns child of X
    th.leave(A, 100);  // resync: X dropped
    EXPECT_EQ(th.t->depth, 0u);
    EXPECT_EQ(th.totals[X].calls, 1u);
    EXPECT_EQ(th.totals[X].unreturned, 1u);
    EXPECT_EQ(th.sink.dropped, 1u);  // counted as the kernel's dropped_frames
    EXPECT_EQ(th.totals[X].wall_incl_ns, 0u);
    EXPECT_EQ(th.totals[A].wall_incl_ns, 100u);
    EXPECT_EQ(th.totals[A].wall_excl_ns, 90u);  // only C's 10 ns is a traced callee
    EXPECT_EQ(th.totals[C].wall_incl_ns, 10u);
}

// Call sites are cached per (method, stack pointer, parent method), and an entry that
// could be a dead frame's re-entry is always told apart by a fresh read.
TEST(CallStack, CallSiteCacheKeysOnMethodStackPointerAndParent)
{
    auto t = std::make_unique<jmt_thread>();
    EXPECT_EQ(jmt_parent_id(t.get()), 0u);
    const jmt_clock c0{0, 0, 1, 1};
    jmt_push(t.get(), A, 1, &c0, 1000, 0, 0, 0);
    EXPECT_EQ(jmt_parent_id(t.get()), A);

    jmt_site *slot = jmt_site_slot(t.get(), X, A, 1000);
    EXPECT_FALSE(jmt_site_matches(slot, X, A, 1000));  // zeroed at creation
    *slot = {1000, X, A, 0x77};
    EXPECT_TRUE(jmt_site_matches(jmt_site_slot(t.get(), X, A, 1000), X, A, 1000));
    EXPECT_EQ(jmt_site_slot(t.get(), X, A, 1000)->call_site, 0x77u);
    EXPECT_FALSE(jmt_site_matches(jmt_site_slot(t.get(), X, B, 1000), X, B, 1000));  // other parent
    EXPECT_FALSE(jmt_site_matches(jmt_site_slot(t.get(), X, A, 1008), X, A, 1008));  // other frame
    EXPECT_FALSE(jmt_site_matches(jmt_site_slot(t.get(), C, A, 1000), C, A, 1000));  // other method

    jmt_push(t.get(), X, 2, &c0, 1000, 0x77, 0, 0);        // X inlined in A
    EXPECT_TRUE(jmt_top_is_ambiguous(t.get(), X, 1000));   // X again at X's sp: read afresh
    EXPECT_FALSE(jmt_top_is_ambiguous(t.get(), X, 900));   // a real call from X
    EXPECT_FALSE(jmt_top_is_ambiguous(t.get(), C, 1000));  // another inlined method
}

// Stack pointers and call sites tell dead frames apart from recursion at the next entry.
TEST(CallStack, StaleTopFrameDetectedFromStackPointerAndCallSite)
{
    jmt_thread t{};
    const jmt_clock c0{0, 0, 1, 1}, c1{10, 5, 2, 2};
    jmt_push(&t, A, 1, &c0, 1000, 0, 0, 0);             // compiled caller frame
    jmt_push(&t, X, 2, &c1, 1000, 0x77, 0, 0);          // inlined callee (same sp) at call site 0x77: threw, no return
    EXPECT_FALSE(jmt_top_is_stale(&t, C, 800, 0));      // a real call from inside X: X is alive
    EXPECT_FALSE(jmt_top_is_stale(&t, C, 1100, 0));     // higher sp: may be an OSR-moved frame, alive
    EXPECT_TRUE(jmt_top_is_stale(&t, X, 1000, 0x77));   // X again from the same site of the same frame
    EXPECT_FALSE(jmt_top_is_stale(&t, X, 1000, 0x99));  // X from another site: inlined recursion
    EXPECT_FALSE(jmt_top_is_stale(&t, C, 1000, 0x77));  // another method: not the same call
    EXPECT_FALSE(jmt_top_is_stale(&t, X, 1000, 0));     // call site unknown: never stale
    EXPECT_TRUE(jmt_needs_call_site(&t, 1000));
    EXPECT_FALSE(jmt_needs_call_site(&t, 900));
    jmt_thread empty{};
    EXPECT_FALSE(jmt_top_is_stale(&empty, A, 0, 0));
    EXPECT_TRUE(jmt_needs_call_site(&empty, 0));
}

// Returns for frames entered before attach are ignored without underflow.
TEST(CallStack, ReturnWithoutEntryIsIgnored)
{
    Thread th;
    EXPECT_FALSE(th.leave(A, 10));
    th.enter(B, 20);
    EXPECT_FALSE(th.leave(A, 25));  // A is not on the stack: stack unchanged
    EXPECT_EQ(th.t->depth, 1u);
    EXPECT_TRUE(th.leave(B, 30));
    EXPECT_EQ(th.totals[B].wall_incl_ns, 10u);
    EXPECT_EQ(th.totals.count(A), 0u);
}

// Beyond JMT_MAX_DEPTH frames are counted, not stored; frames below stay intact.
TEST(CallStack, OverflowKeepsLowerFramesIntact)
{
    Thread th;
    const uint32_t extra = 10;
    for (uint32_t i = 0; i < JMT_MAX_DEPTH + extra; i++)
        EXPECT_EQ(th.enter(A, i), i >= JMT_MAX_DEPTH ? 1 : 0);
    EXPECT_EQ(th.t->depth, JMT_MAX_DEPTH + extra);
    uint64_t now = 1000;
    for (uint32_t i = 0; i < JMT_MAX_DEPTH + extra; i++)
        EXPECT_TRUE(th.leave(A, now++));
    EXPECT_EQ(th.t->depth, 0u);
    EXPECT_EQ(th.totals[A].calls, JMT_MAX_DEPTH + extra);
    // Outermost frame entered at 0, left at 1000 + 265.
    EXPECT_EQ(th.totals[A].wall_incl_ns, 1000u + JMT_MAX_DEPTH + extra - 1);
}

// Mutual recursion A -> B -> A ... far past the bound: every call counted, outermost
// inclusive whole, each method's inclusive time its own outermost frame only.
TEST(CallStack, DeepMutualRecursionPastTheBound)
{
    Thread th;
    const uint32_t levels = 3 * JMT_MAX_DEPTH;
    uint64_t now = 0;
    for (uint32_t i = 0; i < levels; i++)
        th.enter(i % 2 ? B : A, now++);
    for (uint32_t i = levels; i-- > 0;)
        EXPECT_TRUE(th.leave(i % 2 ? B : A, now++));
    EXPECT_EQ(th.t->depth, 0u);
    EXPECT_EQ(th.totals[A].calls + th.totals[B].calls, levels);
    EXPECT_EQ(th.totals[A].wall_incl_ns, 2 * levels - 1);  // entered at 0, left last
    EXPECT_EQ(th.totals[B].wall_incl_ns, 2 * levels - 3);  // entered at 1, left second to last
}

TEST(CallStack, FingerprintSeparatesKeys)
{
    jmt_method_key a{0x1000, 0x2000, 0x3000}, b{0x1000, 0x2000, 0x3008}, c{0x2000, 0x1000, 0x3000};
    EXPECT_NE(jmt_fingerprint(&a), jmt_fingerprint(&b));
    EXPECT_NE(jmt_fingerprint(&a), jmt_fingerprint(&c));
    EXPECT_EQ(jmt_fingerprint(&a), jmt_fingerprint(&a));
}

}  // namespace
