// --max-overhead's guard: the traps' share of the JVM's CPU time, window by window.
#include <gtest/gtest.h>

#include "cost/overhead.h"

namespace {

constexpr uint64_t kS = 1'000'000'000;

// Events and traced events since attach, and a reading of the JVM's CPU time (ns).
using Totals = jmt::OverheadTotals;

}  // namespace

// 1M events a second at 500 ns (traced) and 400 ns (filtered out), on 1 s of the JVM's CPU.
TEST(OverheadGuard, TripsOnTheSecondWindowInARowOverTheLimit)
{
    const jmt::ProbeCost cost{500, 400};
    jmt::OverheadGuard guard(40);
    guard.start(10 * kS, Totals{0, 0, 0});
    EXPECT_FALSE(guard.due(10 * kS + kS - 1));
    EXPECT_TRUE(guard.due(11 * kS));
    // 200K traced x 500 + 800K x 400 = 0.42 s of 1 s: 42%, over 40; once is not enough.
    EXPECT_FALSE(guard.feed(11 * kS, Totals{1'000'000, 200'000, kS}, cost));
    const std::optional<double> share = guard.feed(12 * kS, Totals{2'000'000, 400'000, 2 * kS}, cost);
    ASSERT_TRUE(share);
    EXPECT_DOUBLE_EQ(*share, 0.42);
}

// A window under the limit starts the count again; so does one where the JVM was mostly idle.
TEST(OverheadGuard, AWindowUnderTheLimitOrIdleStartsTheCountAgain)
{
    const jmt::ProbeCost cost{500, 500};
    jmt::OverheadGuard guard(40);
    guard.start(0, Totals{0, 0, 0});
    EXPECT_FALSE(guard.feed(1 * kS, Totals{1'000'000, 0, kS}, cost));      // 50%
    EXPECT_FALSE(guard.feed(2 * kS, Totals{1'500'000, 0, 2 * kS}, cost));  // 25%
    EXPECT_FALSE(guard.feed(3 * kS, Totals{2'500'000, 0, 3 * kS}, cost));  // 50%
    // 99 ms on a CPU, all of it traps: too little to count, and the count restarts.
    EXPECT_FALSE(guard.feed(4 * kS, Totals{2'698'000, 0, 3 * kS + 99'000'000}, cost));
    EXPECT_FALSE(guard.feed(5 * kS, Totals{3'698'000, 0, 4 * kS + 99'000'000}, cost));  // 50%
    EXPECT_TRUE(guard.feed(6 * kS, Totals{4'698'000, 0, 5 * kS + 99'000'000}, cost));   // 50% again
}

// The JVM's threads' wait for a CPU, as a share of their runnable time, over a window.
TEST(RunQueue, ShareOfTheRunnableTimeOverTheWindow)
{
    Totals then, now;
    then.jvm_cpu_ns = 1 * kS;
    now.jvm_cpu_ns = 4 * kS;
    then.jvm_runq_ns = 500'000'000;
    now.jvm_runq_ns = 1'500'000'000;
    const jmt::Overhead o = jmt::overhead_since(now, then);
    ASSERT_TRUE(o.jvm_runq_ns);
    EXPECT_EQ(*o.jvm_runq_ns, 1'000'000'000u);
    ASSERT_TRUE(jmt::runq_share(o));
    EXPECT_DOUBLE_EQ(*jmt::runq_share(o), 0.25);  // 1 s waiting against 3 s on a CPU
    then.jvm_runq_ns.reset();
    EXPECT_FALSE(jmt::overhead_since(now, then).jvm_runq_ns);
    EXPECT_FALSE(jmt::runq_share(jmt::overhead_since(now, then)));
}
