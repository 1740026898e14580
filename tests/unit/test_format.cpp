#include <gtest/gtest.h>

#include "report.h"

namespace {

TEST(FormatDuration, PicksTheUnitAHumanReads)
{
    EXPECT_EQ(jmt::format_duration(0), "0 ns");
    EXPECT_EQ(jmt::format_duration(950), "950 ns");
    EXPECT_EQ(jmt::format_duration(999), "999 ns");
    EXPECT_EQ(jmt::format_duration(1000), "1.00 us");
    EXPECT_EQ(jmt::format_duration(1234), "1.23 us");
    EXPECT_EQ(jmt::format_duration(12345), "12.3 us");
    EXPECT_EQ(jmt::format_duration(123456), "123 us");
    EXPECT_EQ(jmt::format_duration(4560000), "4.56 ms");
    EXPECT_EQ(jmt::format_duration(1230000000), "1.23 s");
    EXPECT_EQ(jmt::format_duration(123456000000ULL), "123 s");
    EXPECT_EQ(jmt::format_duration(7200000000000ULL), "7200 s");
}

TEST(FormatDuration, RoundsUpIntoTheNextUnitAtBoundaries)
{
    EXPECT_EQ(jmt::format_duration(999499), "999 us");
    EXPECT_EQ(jmt::format_duration(999999), "1.00 ms");
    EXPECT_EQ(jmt::format_duration(99949), "99.9 us");
    EXPECT_EQ(jmt::format_duration(99950), "100 us");
    EXPECT_EQ(jmt::format_duration(9995), "10.0 us");
    EXPECT_EQ(jmt::format_duration(999999999), "1.00 s");
}

TEST(DiagnosticLines, OnlyNonZeroCountersInWords)
{
    jmt::Diagnostics d;
    d.entries = 100;  // informational: never a diagnostic line
    d.returns = 100;
    EXPECT_TRUE(jmt::diagnostic_lines(d).empty());
    d.dropped_frames = 12;
    d.depth_overflow = 1200;
    auto lines = jmt::diagnostic_lines(d);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("depth_overflow: 1200 calls", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("256-frame"), std::string::npos);
    EXPECT_EQ(lines[1].rfind("dropped_frames: 12 calls", 0), 0u) << lines[1];
    d = {};
    d.unmatched_returns = 3;
    d.thread_state_fail = 1;
    d.method_table_full = 1;
    d.names_fail = 1;
    d.arg_fail = 1;
    d.truncated_names = 1;
    EXPECT_EQ(jmt::diagnostic_lines(d).size(), 6u);
}

}  // namespace
