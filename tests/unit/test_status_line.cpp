#include <gtest/gtest.h>

#include "cli/status_line.h"
#include "cost/overhead.h"

namespace {

TEST(StatusLine, SecondsEventsMethods)
{
    jmt::StatusFacts f;
    f.elapsed_ns = 12'700'000'000ULL;
    f.events = 1'234'567;
    f.methods = 45;
    EXPECT_EQ(jmt::status_line(f), "12 s: 1.23M probe events, 45 methods traced");
}

TEST(StatusLine, TrapShareAndLossCounters)
{
    jmt::StatusFacts f;
    f.elapsed_ns = 3'000'000'000ULL;
    f.events = 9000;
    f.methods = 3;
    f.trap_share = 0.234;
    EXPECT_EQ(jmt::status_line(f), "3 s: 9000 probe events, 3 methods traced, traps 23% of the JVM's CPU");
    f.losses = {{"depth_overflow", 3}, {"paths_full", 123456}};
    EXPECT_EQ(jmt::status_line(f), "3 s: 9000 probe events, 3 methods traced, traps 23% of the JVM's CPU; "
                                   "depth_overflow 3, paths_full 123K");
    f.trap_share = 0.0;
    EXPECT_NE(jmt::status_line(f).find("traps 0% of the JVM's CPU"), std::string::npos);
}

TEST(StatusLine, CutToTheTerminalWidth)
{
    jmt::StatusFacts f;
    f.events = 5;
    f.methods = 1;
    f.losses = {{"depth_overflow", 3}, {"paths_full", 12}, {"dropped_frames", 1}};
    EXPECT_EQ(jmt::status_line(f, 19), "0 s: 5 probe events");
    EXPECT_EQ(jmt::status_line(f, 0).find('\n'), std::string::npos);
    EXPECT_GT(jmt::status_line(f, 0).size(), 20u);
}

TEST(StatusLine, LossesAreTheNonZeroCountersOfLostData)
{
    jmt::Diagnostics d;
    EXPECT_TRUE(jmt::loss_counts(d).empty());
    d.entries = 1000;         // events: no loss
    d.unmatched_returns = 7;  // calls entered before attach: expected
    d.cpu_clamped = 2;        // clock only
    d.paths_full = 4;
    d.depth_overflow = 1;
    d.thread_state_fail = 9;
    const auto l = jmt::loss_counts(d);
    ASSERT_EQ(l.size(), 3u);
    EXPECT_EQ(l[0], (std::pair<std::string, uint64_t>{"depth_overflow", 1}));
    EXPECT_EQ(l[1], (std::pair<std::string, uint64_t>{"thread_state_fail", 9}));
    EXPECT_EQ(l[2], (std::pair<std::string, uint64_t>{"paths_full", 4}));
}

}  // namespace
