#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "jmethodtime.h"
#include "report/report.h"

namespace {

using jmt::format_duration;

TEST(FormatDuration, PicksTheUnitAHumanReads)
{
    EXPECT_EQ(format_duration(0), "0 ns");
    EXPECT_EQ(format_duration(1), "1 ns");
    EXPECT_EQ(format_duration(950), "950 ns");
    EXPECT_EQ(format_duration(1234), "1.23 us");
    EXPECT_EQ(format_duration(12345), "12.3 us");
    EXPECT_EQ(format_duration(123456), "123 us");
    EXPECT_EQ(format_duration(4560000), "4.56 ms");
    EXPECT_EQ(format_duration(45600000), "45.6 ms");
    EXPECT_EQ(format_duration(456000000), "456 ms");
    EXPECT_EQ(format_duration(1230000000), "1.23 s");
    EXPECT_EQ(format_duration(12300000000ULL), "12.3 s");
    EXPECT_EQ(format_duration(123456000000ULL), "123 s");
}

TEST(FormatDuration, UnitBoundaries)
{
    EXPECT_EQ(format_duration(999), "999 ns");
    EXPECT_EQ(format_duration(1000), "1.00 us");
    EXPECT_EQ(format_duration(999999), "1.00 ms");
    EXPECT_EQ(format_duration(1000000), "1.00 ms");
    EXPECT_EQ(format_duration(999999999), "1.00 s");
    EXPECT_EQ(format_duration(1000000000), "1.00 s");
}

TEST(FormatDuration, RoundsHalfUpToThreeSignificantDigits)
{
    EXPECT_EQ(format_duration(1004), "1.00 us");
    EXPECT_EQ(format_duration(1005), "1.01 us");  // exact half: up, not binary-float dependent
    EXPECT_EQ(format_duration(2675), "2.68 us");
    EXPECT_EQ(format_duration(4565), "4.57 us");
    EXPECT_EQ(format_duration(9994), "9.99 us");
    EXPECT_EQ(format_duration(9995), "10.0 us");
    EXPECT_EQ(format_duration(99949), "99.9 us");
    EXPECT_EQ(format_duration(99950), "100 us");
    EXPECT_EQ(format_duration(1234567), "1.23 ms");
    EXPECT_EQ(format_duration(1235000), "1.24 ms");
}

TEST(FormatDuration, RoundingUpTo1000MovesToTheNextUnit)
{
    EXPECT_EQ(format_duration(999499), "999 us");
    EXPECT_EQ(format_duration(999500), "1.00 ms");
    EXPECT_EQ(format_duration(999499999), "999 ms");
    EXPECT_EQ(format_duration(999500000), "1.00 s");
}

TEST(FormatDuration, SecondsStaySeconds)
{
    EXPECT_EQ(format_duration(999499999999ULL), "999 s");
    EXPECT_EQ(format_duration(999500000000ULL), "1000 s");
    EXPECT_EQ(format_duration(7200000000000ULL), "7200 s");
    EXPECT_EQ(format_duration(7234499999999ULL), "7234 s");
    EXPECT_EQ(format_duration(7234500000000ULL), "7235 s");
    EXPECT_EQ(format_duration(std::numeric_limits<uint64_t>::max()), "18446744074 s");
}

bool starts_with(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

TEST(DiagnosticLines, NoneWhenOnlyInformationalCountersAreSet)
{
    jmt::Diagnostics d;
    EXPECT_TRUE(jmt::diagnostic_lines(d).empty());
    d.entries = 100;
    d.returns = 100;
    d.traced_calls = 50;
    d.threads_traced = 4;
    d.threads_ended = 2;
    EXPECT_TRUE(jmt::diagnostic_lines(d).empty());
}

TEST(DiagnosticLines, OneLinePerNonZeroCounterWithItsCount)
{
    jmt::Diagnostics d;
    d.dropped_frames = 12;
    d.depth_overflow = 1200;
    auto lines = jmt::diagnostic_lines(d);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_TRUE(starts_with(lines[0], "depth_overflow: 1200 calls ran deeper than the " +
                                          std::to_string(JMT_MAX_DEPTH) + "-frame stack bound;"))
        << lines[0];
    EXPECT_NE(lines[0].find("charged to the deepest recorded caller"), std::string::npos) << lines[0];
    EXPECT_TRUE(starts_with(lines[1], "dropped_frames: 12 calls ended without a return event")) << lines[1];
    EXPECT_NE(lines[1].find("charged to their caller"), std::string::npos) << lines[1];
}

TEST(DiagnosticLines, EveryProblemCounterHasItsOwnLine)
{
    jmt::Diagnostics d;
    d.depth_overflow = 1;
    d.unmatched_returns = 2;
    d.dropped_frames = 3;
    d.thread_state_fail = 4;
    d.method_table_full = 5;
    d.names_fail = 6;
    d.arg_fail = 7;
    d.truncated_names = 8;
    auto lines = jmt::diagnostic_lines(d);
    const std::vector<std::string> prefixes = {"depth_overflow: 1 ",    "unmatched_returns: 2 ", "dropped_frames: 3 ",
                                               "thread_state_fail: 4 ", "method_table_full: 5 ", "names_fail: 6 ",
                                               "arg_fail: 7 ",          "truncated_names: 8 "};
    ASSERT_EQ(lines.size(), prefixes.size());
    for (size_t i = 0; i < lines.size(); i++) {
        EXPECT_TRUE(starts_with(lines[i], prefixes[i])) << lines[i];
        EXPECT_GT(lines[i].size(), prefixes[i].size() + 20) << "no explanation: " << lines[i];
        EXPECT_EQ(lines[i].find('\n'), std::string::npos) << lines[i];
    }
}

TEST(DiagnosticLines, SingleCounter)
{
    jmt::Diagnostics d;
    d.truncated_names = 1;
    auto lines = jmt::diagnostic_lines(d);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(starts_with(lines[0], "truncated_names: 1 names were longer than the kernel buffer")) << lines[0];
}

}  // namespace

TEST(FormatBounded, ShowsTheLargerDistanceToEitherEndRoundedUp)
{
    const uint64_t b[2] = {100'000, 140'000};
    EXPECT_EQ(jmt::format_bounded(121'000, b), "121 us \u00b118%");  // 21,000 below of 121,000: 17.4%, rounded up
    const uint64_t tight[2] = {120'000, 122'000};
    EXPECT_EQ(jmt::format_bounded(121'000, tight), "121 us \u00b11%");
    const uint64_t exact[2] = {121'000, 121'000};
    EXPECT_EQ(jmt::format_bounded(121'000, exact), "121 us");
}

TEST(FormatBounded, ARangeDownToZeroIsAnUpperBound)
{
    const uint64_t b[2] = {0, 2'500'000};
    EXPECT_EQ(jmt::format_bounded(1'000'000, b), "\u2264 2.50 ms");
    const uint64_t wide[2] = {100, 5'000};
    EXPECT_EQ(jmt::format_bounded(2'000, wide), "\u2264 5.00 us");
    const uint64_t none[2] = {0, 0};
    EXPECT_EQ(jmt::format_bounded(0, none), "0 ns");
}
