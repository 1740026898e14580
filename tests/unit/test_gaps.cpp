// The gap histogram's buckets (bpf/gaps.h, shared with the kernel), its
// summary, and the cost range every corrected time is bounded with.
#include <gtest/gtest.h>

#include "cost/correction.h"
#include "cost/cost_range.h"
#include "gaps.h"

namespace jmt {
namespace {

TEST(GapBuckets, EveryGapFallsInTheBucketWhoseRangeHoldsIt)
{
    for (uint64_t gap = 0; gap < (1ULL << JMT_GAP_TOP_LOG2); gap++) {
        const uint32_t b = jmt_gap_bucket(gap);
        ASSERT_LT(b, static_cast<uint32_t>(JMT_GAP_BUCKETS - 1)) << gap;
        ASSERT_LE(jmt_gap_bucket_low_ns(b), gap) << gap;
        if (b + 2 < JMT_GAP_BUCKETS)
            ASSERT_GT(jmt_gap_bucket_low_ns(b + 1), gap) << gap;
    }
    EXPECT_EQ(jmt_gap_bucket(1ULL << JMT_GAP_TOP_LOG2), static_cast<uint32_t>(JMT_GAP_BUCKETS - 1));
    EXPECT_EQ(jmt_gap_bucket(~0ULL), static_cast<uint32_t>(JMT_GAP_BUCKETS - 1));
}

TEST(GapBuckets, AreAtMostAThirtySecondOfTheirValueWide)
{
    for (uint32_t b = 32; b + 2 < JMT_GAP_BUCKETS; b++) {
        const double lo = static_cast<double>(jmt_gap_bucket_low_ns(b));
        const double width = static_cast<double>(jmt_gap_bucket_low_ns(b + 1)) - lo;
        EXPECT_LE(width / lo, 1.0 / 32 + 1e-9) << b;
    }
}

std::vector<uint64_t> histogram(std::initializer_list<std::pair<uint64_t, uint64_t>> gaps_and_counts)
{
    std::vector<uint64_t> h(JMT_GAP_BUCKETS, 0);
    for (auto [gap, count] : gaps_and_counts)
        h[jmt_gap_bucket(gap)] += count;
    return h;
}

TEST(GapSummary, EdgeIsTheHalfPercentileAndTheOverflowIsLeftOut)
{
    // 5 stray short gaps (0.25%), the one-trap bulk from 5400 ns, longer Java work above.
    const auto h = histogram({{300, 5}, {5400, 1505}, {9000, 490}, {1ULL << 20, 5000}});
    const GapSummary s = summarize_gaps(h);
    EXPECT_EQ(s.samples, 2000u);
    EXPECT_EQ(s.edge_ns, jmt_gap_bucket_low_ns(jmt_gap_bucket(5400)));
    EXPECT_NEAR(static_cast<double>(s.edge_ns), 5400, 5400 / 32.0);
    EXPECT_EQ(s.median_ns, s.edge_ns);
    EXPECT_EQ(summarize_gaps(std::vector<uint64_t>(JMT_GAP_BUCKETS, 0)).samples, 0u);
    EXPECT_EQ(summarize_gaps({}).samples, 0u);
}

TEST(GapSummary, AnIntervalsGapsAreTheDifferenceOfTwoReadings)
{
    const auto before = histogram({{600, 10}});
    const auto now = histogram({{600, 25}, {700, 3}});
    const auto delta = gaps_since(now, before);
    EXPECT_EQ(delta[jmt_gap_bucket(600)], 15u);
    EXPECT_EQ(delta[jmt_gap_bucket(700)], 3u);
}

TEST(CostRange, StartsAtTheJvmsEdgeAndReachesTheRefillAboveIt)
{
    GapSummary gaps;
    gaps.samples = kMinGapSamples;
    gaps.edge_ns = 5400;
    const CostRange r = cost_range(gaps, {5000, 4000});
    EXPECT_EQ(r.basis, CostBasis::Gaps);
    EXPECT_EQ(r.lo.traced_event_ns, 5400u - 5400 / 32);  // a bucket's width below the edge
    EXPECT_EQ(r.lo.rejected_event_ns, static_cast<uint64_t>((5400 - 5400 / 32) * 0.8));  // the calibration's ratio
    EXPECT_EQ(r.hi.traced_event_ns, static_cast<uint64_t>(5400 * (1 + kRefillMargin)));
    // A filtered-out event is the same trap with less of the programs: at most a traced one's top.
    EXPECT_EQ(r.hi.rejected_event_ns, r.hi.traced_event_ns);
    EXPECT_EQ(likely_cost(r).traced_event_ns, r.lo.traced_event_ns + (r.hi.traced_event_ns - r.lo.traced_event_ns) / 10);
    // A calibration above the edge (the tool's own process, not the JVM) moves neither end, so
    // the range stays within half the cost it takes out (a CI host: edge 768 ns, calibration
    // 1010 ns, the JVM paid 786 ns).
    const CostRange high = cost_range(gaps, {6500, 6500});
    EXPECT_EQ(high.lo.traced_event_ns, 5400u - 5400 / 32);
    EXPECT_EQ(high.hi.traced_event_ns, static_cast<uint64_t>(5400 * (1 + kRefillMargin)));
    EXPECT_EQ(high.hi.rejected_event_ns, high.hi.traced_event_ns);  // one top for both
    EXPECT_LE(static_cast<double>(high.hi.traced_event_ns - high.lo.traced_event_ns),
              0.5 * static_cast<double>(likely_cost(high).traced_event_ns));
}

TEST(CostRange, FallsBackOnTheCalibrationWithFewGaps)
{
    GapSummary gaps;
    gaps.samples = kMinGapSamples - 1;
    gaps.edge_ns = 5400;
    const CostRange r = cost_range(gaps, {1000, 800});
    EXPECT_EQ(r.basis, CostBasis::Calibration);
    EXPECT_LT(r.lo.traced_event_ns, 1000u);
    EXPECT_GT(r.hi.traced_event_ns, 1000u);
    EXPECT_LE(static_cast<double>(r.hi.traced_event_ns - r.lo.traced_event_ns),
              0.5 * static_cast<double>(likely_cost(r).traced_event_ns));
}

TEST(TimeBounds, HoldTheTimeCorrectedWithAnyCostInTheRange)
{
    MethodStats raw;
    raw.calls = 100;
    raw.wall_incl_ns = 100 * (50'000 + 46 * 5'800);  // 50 us of work, 46 events of 5.8 us each
    raw.cpu_incl_ns = raw.wall_incl_ns;
    raw.events_incl = 4600;
    raw.traced_incl = 4600;
    raw.wall_excl_ns = raw.wall_incl_ns;
    raw.cpu_excl_ns = raw.cpu_incl_ns;
    raw.events_excl = raw.events_incl;
    raw.traced_excl = raw.traced_incl;
    GapSummary gaps;
    gaps.samples = 5000;
    gaps.edge_ns = 5400;
    const CostRange range = cost_range(gaps, {5300, 5000});
    const TimeBounds b = time_bounds(raw, range);
    const uint64_t truth = 100 * 50'000;
    EXPECT_LE(b.wall_incl_ns[0], truth);
    EXPECT_GE(b.wall_incl_ns[1], truth);
    EXPECT_EQ(b.wall_incl_ns[1], raw.wall_incl_ns - 4600 * (5400 - 5400 / 32));
    EXPECT_EQ(b.cpu_excl_ns[0], b.wall_excl_ns[0]);
    // The range's width is at most half the probe time taken out at its middle.
    EXPECT_LE(static_cast<double>(b.wall_incl_ns[1] - b.wall_incl_ns[0]),
              0.5 * 4600 * static_cast<double>(likely_cost(range).traced_event_ns));
}

// A row whose exclusive time holds fewer ns than its events at the range's top lowers the top,
// but never under the gaps' edge: a row that says one event costs less than one trap measured its
// own time short (an unseen switch took an on-CPU slice), so the bounds keep the low end.
TEST(CostRange, ARowBoundsTheTopButNotBelowTheGapsEdge)
{
    Profile p;
    p.corrected = true;
    p.calibrated_cost = {5000, 4500};
    p.gap_hist = histogram({{5248, 20000}, {9000, 5000}});
    MethodRow short_row;
    short_row.klass = "a/B";
    short_row.method = "m";
    MethodStats &s = short_row.stats;
    s.calls = 100;
    s.events_incl = s.events_excl = s.traced_incl = s.traced_excl = 20000;
    s.wall_incl_ns = s.wall_excl_ns = 20000ULL * 6000;  // 6 us per event of elapsed time
    s.cpu_incl_ns = s.cpu_excl_ns = 1000000;            // but on-CPU time lost to unseen switches
    p.methods.push_back(short_row);
    correct_profile(p, {});
    const uint64_t edge_lo = jmt_gap_bucket_low_ns(jmt_gap_bucket(5248)) -
                             jmt_gap_bucket_low_ns(jmt_gap_bucket(5248)) / 32;
    EXPECT_EQ(p.cost_range.basis, CostBasis::Gaps);
    EXPECT_EQ(p.cost_source, CostSource::Gaps) << "the short row is not believed";
    EXPECT_EQ(p.cost_range.lo.traced_event_ns, edge_lo);
    EXPECT_GT(p.cost_range.hi.traced_event_ns, p.cost_range.lo.traced_event_ns);
    EXPECT_GE(p.probe_cost.traced_event_ns, edge_lo) << "the cost taken out stays at least one trap";
    // A row that measured under its events at the likely cost, but over the edge, still lowers the top.
    const uint64_t top = p.cost_range.hi.traced_event_ns;
    Profile q;
    q.corrected = true;
    q.calibrated_cost = p.calibrated_cost;
    q.gap_hist = p.gap_hist;
    q.methods.push_back(short_row);
    MethodStats &t = q.methods[0].stats;
    t.wall_incl_ns = t.wall_excl_ns = t.cpu_incl_ns = t.cpu_excl_ns = 20000ULL * (edge_lo + 60);
    correct_profile(q, {});
    EXPECT_EQ(q.cost_source, CostSource::Bounded);
    EXPECT_LT(q.cost_range.hi.traced_event_ns, top);
    EXPECT_GE(q.cost_range.hi.traced_event_ns, edge_lo);
}

}  // namespace
}  // namespace jmt
