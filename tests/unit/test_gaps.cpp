// The gap histogram's buckets (bpf/gaps.h, shared with the kernel), its
// summary, and the cost range every corrected time is bounded with.
#include <gtest/gtest.h>

#include "cost/correction.h"
#include "cost/cost_range.h"
#include "cost/evidence.h"
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

// Evidence of a window with these gaps, calibration and JVM CPU time per event.
TrapEvidence evidence(uint64_t samples, uint64_t edge_ns, ProbeCost calibrated, uint64_t jvm_ns_per_event)
{
    TrapEvidence e;
    e.gaps.samples = samples;
    e.gaps.edge_ns = edge_ns;
    e.calibrated = calibrated;
    e.jvm_ns_per_event = jvm_ns_per_event;
    return e;
}

// The low end is the JVM's own edge, the top its whole CPU time per event (what no event costs
// more than on average, wherever its refill lands), the likely cost the edge plus the refill share.
TEST(CostRange, RunsFromTheJvmsEdgeToItsCpuTimePerEvent)
{
    const CostRange r = cost_range(evidence(kMinGapSamples, 5400, {5000, 4000}, 9000));
    EXPECT_EQ(r.basis, CostBasis::Gaps);
    EXPECT_EQ(r.top, CostTop::JvmCpu);
    EXPECT_EQ(r.lo.traced_event_ns, 5400u - 5400 / 32);  // a bucket's width below the edge
    EXPECT_EQ(r.lo.rejected_event_ns, static_cast<uint64_t>((5400 - 5400 / 32) * 0.8));  // the calibration's ratio
    EXPECT_EQ(r.hi.traced_event_ns, 9000u);
    EXPECT_EQ(r.hi.rejected_event_ns, 9000u);          // the same trap and refill, less of the programs: one top
    EXPECT_EQ(r.likely.traced_event_ns, 5400u + 540);  // 10% of a trap over 4 us for its refill
    EXPECT_EQ(r.likely.rejected_event_ns, static_cast<uint64_t>(r.likely.traced_event_ns * 0.8));
    EXPECT_EQ(r.jvm_ns_per_event, 9000u);
    // A calibration above the edge (the tool's own process, not the JVM) moves no end.
    const CostRange high = cost_range(evidence(kMinGapSamples, 5400, {6500, 6500}, 9000));
    EXPECT_EQ(high.lo.traced_event_ns, r.lo.traced_event_ns);
    EXPECT_EQ(high.hi.traced_event_ns, 9000u);
    EXPECT_EQ(high.likely.rejected_event_ns, high.likely.traced_event_ns);  // ratio at most 1
}

// The JVM's CPU time per event bounds its average event. Where cheap events (a trap with almost
// no Java code after it) bring that average near the edge, an event in code that refills more
// costs more than the average: the top is then the edge plus the most refill, and says so.
TEST(CostRange, TheTopHoldsOneTrapAndItsMostRefillAboveTheJvmsAverage)
{
    const CostRange mixed = cost_range(evidence(kMinGapSamples, 900, {1300, 1000}, 980));
    EXPECT_EQ(mixed.top, CostTop::TrapAndRefill);
    EXPECT_EQ(mixed.hi.traced_event_ns, 900u + kRefillBoundNs);
    EXPECT_EQ(mixed.hi.rejected_event_ns, 900u + kRefillBoundNs);
    EXPECT_EQ(mixed.jvm_ns_per_event, 980u);  // still reported
    // The likely cost is no longer held down to the average: the edge plus its refill share.
    EXPECT_EQ(mixed.likely.traced_event_ns, edge_plus_refill(900));
    // One ns of the JVM's CPU time per event above that bound: the measured top again.
    EXPECT_EQ(cost_range(evidence(kMinGapSamples, 900, {1300, 1000}, 1901)).top, CostTop::JvmCpu);
    EXPECT_EQ(cost_range(evidence(kMinGapSamples, 900, {1300, 1000}, 1900)).top, CostTop::JvmCpu);
    // Without gaps the bound rests on the calibration.
    const CostRange blind_gaps = cost_range(evidence(10, 900, {1300, 1000}, 980));
    EXPECT_EQ(blind_gaps.top, CostTop::TrapAndRefill);
    EXPECT_EQ(blind_gaps.hi.traced_event_ns, 1300u + kRefillBoundNs);
    // A JVM whose every CPU ns is traps, or a reading that missed CPU time: the same bound.
    const CostRange tight = cost_range(evidence(kMinGapSamples, 5400, {5000, 4000}, 5500));
    EXPECT_EQ(tight.hi.traced_event_ns, 5400u + kRefillBoundNs);
    EXPECT_EQ(tight.likely.traced_event_ns, 5400u + 540);
    const CostRange odd = cost_range(evidence(kMinGapSamples, 5400, {5000, 4000}, 3000));
    EXPECT_EQ(odd.hi.traced_event_ns, 5400u + kRefillBoundNs);
}

// The refill after a trap: a quarter of a cheap trap, 400 ns above a dear one up to 4 us, 10% of
// a dearer one (6 to 16% seen above 8.2 to 13.1 us edges). Its bound: 1 us, or 18% of an edge
// over 5.6 us (a()'s events paid 1.33 us above an 8.2 us edge, 16%).
TEST(CostRange, TheRefillIsAQuarterOfACheapTrapAndGrowsPastADearOne)
{
    EXPECT_EQ(edge_plus_refill(1000), 1250u);
    EXPECT_EQ(edge_plus_refill(1200), 1500u);
    EXPECT_EQ(edge_plus_refill(2000), 2400u);
    EXPECT_EQ(edge_plus_refill(4000), 4400u);
    EXPECT_EQ(edge_plus_refill(6600), 7260u);
    EXPECT_EQ(edge_plus_refill(8500), 9350u);
    EXPECT_EQ(edge_plus_refill(13100), 14410u);
    EXPECT_EQ(refill_bound_ns(900), 1000u);
    EXPECT_EQ(refill_bound_ns(5500), 1000u);
    EXPECT_EQ(refill_bound_ns(6600), 1188u);
    EXPECT_EQ(refill_bound_ns(13100), 2358u);
    const CostRange dear = cost_range(evidence(kMinGapSamples, 13100, {13000, 11000}, 13800));
    EXPECT_EQ(dear.top, CostTop::TrapAndRefill);
    EXPECT_EQ(dear.hi.traced_event_ns, 13100u + 2358u);
}

// What the trace cannot measure widens the range: without gaps the low end is half the
// calibration, without the JVM's CPU time the top is twice the likely cost (four times with
// another tracer's programs on the events).
TEST(CostRange, WidensWhereTheTraceCannotMeasure)
{
    const CostRange r = cost_range(evidence(kMinGapSamples - 1, 5400, {1000, 800}, 2500));
    EXPECT_EQ(r.basis, CostBasis::Calibration);
    EXPECT_EQ(r.lo.traced_event_ns, 500u);
    EXPECT_EQ(r.lo.rejected_event_ns, 400u);
    EXPECT_EQ(r.likely.traced_event_ns, 1000u);
    EXPECT_EQ(r.likely.rejected_event_ns, 800u);
    EXPECT_EQ(r.hi.traced_event_ns, 2500u);
    EXPECT_EQ(r.top, CostTop::JvmCpu);  // above the calibration's trap and its most refill
    const CostRange blind = cost_range(evidence(kMinGapSamples, 5400, {5000, 4000}, 0));
    EXPECT_EQ(blind.top, CostTop::Unmeasured);
    EXPECT_EQ(blind.hi.traced_event_ns, 2 * blind.likely.traced_event_ns);
    TrapEvidence shared = evidence(kMinGapSamples, 5400, {5000, 4000}, 0);
    shared.shared_probes = true;
    EXPECT_EQ(cost_range(shared).hi.traced_event_ns, 4 * blind.likely.traced_event_ns);
    EXPECT_EQ(cost_range(evidence(0, 0, {}, 0)).hi.traced_event_ns, 0u);  // nothing at all: no range
}

// The JVM's CPU time per event is rounded up with what its readings may have missed: a 10 ms tick
// at either end, and every CPU's time after a last reading taken early (the JVM exited).
TEST(TrapEvidence, TheJvmsCpuTimePerEventAllowsForItsReadings)
{
    Profile p;
    p.overhead.events = 1'000'000;
    p.overhead.jvm_cpu_ns = 2'000'000'000;
    EXPECT_EQ(gather_evidence(p, 2).jvm_ns_per_event, 2020u);
    p.overhead.jvm_cpu_early = true;
    EXPECT_EQ(gather_evidence(p, 2).jvm_ns_per_event, 2070u);
    p.overhead.jvm_cpu_ns = 0;
    EXPECT_EQ(gather_evidence(p, 2).jvm_ns_per_event, 0u);
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
    const CostRange range = cost_range(evidence(5000, 5400, {5300, 5000}, 6500));
    const TimeBounds b = time_bounds(raw, range);
    const uint64_t truth = 100 * 50'000;
    EXPECT_LE(b.wall_incl_ns[0], truth);
    EXPECT_GE(b.wall_incl_ns[1], truth);
    EXPECT_EQ(b.wall_incl_ns[1], raw.wall_incl_ns - 4600 * (5400 - 5400 / 32));
    EXPECT_EQ(b.wall_incl_ns[0], raw.wall_incl_ns - 4600 * 6500);
    EXPECT_EQ(b.cpu_excl_ns[0], b.wall_excl_ns[0]);
}

// A corrected profile of 1M events whose gaps' edge is about 5.2 us, the JVM on a CPU for
// jvm_cpu_ns, and one row of 20,000 one-event calls of call_ns each, raw.
Profile one_row_profile(uint64_t jvm_cpu_ns, uint64_t call_ns)
{
    Profile p;
    p.corrected = true;
    p.calibrated_cost = {5000, 4500};
    p.gap_hist = histogram({{5248, 20000}, {9000, 5000}});
    p.overhead.events = 1'000'000;
    p.overhead.jvm_cpu_ns = jvm_cpu_ns;
    MethodRow row;
    row.klass = "a/B";
    row.method = "get";
    MethodStats &s = row.stats;
    s.calls = s.events_incl = s.events_excl = s.traced_incl = s.traced_excl = 20000;
    s.wall_incl_ns = s.wall_excl_ns = s.cpu_incl_ns = s.cpu_excl_ns = 20000ULL * call_ns;
    p.methods.push_back(row);
    return p;
}

// One pass: the rows take the range's likely cost out and carry its bounds, whatever a row says
// of the cost: a row of one-event calls, or one whose time holds less than its events at the top
// (the refill of its traps lands in the code after them), moves no end of the range.
TEST(CorrectProfile, RowsTakeTheLikelyCostOutAndMoveNoEnd)
{
    Profile p = one_row_profile(8'000'000'000, 5300);
    const MethodRow leaf = p.methods[0];
    correct_profile(p, {}, 2);
    const uint64_t edge = jmt_gap_bucket_low_ns(jmt_gap_bucket(5248));
    EXPECT_EQ(p.cost_source, CostSource::Gaps);
    EXPECT_EQ(p.cost_range.lo.traced_event_ns, edge - edge / 32);
    EXPECT_EQ(p.cost_range.hi.traced_event_ns, 8020u);          // (8 s + two ticks) / 1M events
    EXPECT_EQ(p.probe_cost.traced_event_ns, edge + edge / 10);  // a trap over 4 us: 10% for its refill
    EXPECT_EQ(p.methods[0].stats.cpu_excl_ns, 0u) << "a getter under a trap: clamped at 0";
    EXPECT_EQ(p.methods[0].bounds.cpu_excl_ns[0], 0u);
    EXPECT_EQ(p.methods[0].bounds.cpu_excl_ns[1], 20000ULL * (5300 - (edge - edge / 32)));
    EXPECT_TRUE(p.methods[0].probe_dominated);
    EXPECT_FALSE(p.methods[0].bounds.wider_than_correction) << "200 ns per call wide, 5.3 us taken out";
    EXPECT_GT(p.overhead.trap_ns, 0u);
    // --raw: the range and the traps' price all the same, the rows as measured.
    Profile raw = p;
    raw.corrected = false;
    raw.probe_cost = {};
    raw.methods[0] = leaf;
    correct_profile(raw, {}, 2);
    EXPECT_EQ(raw.probe_cost.traced_event_ns, 0u);
    EXPECT_EQ(raw.methods[0].stats.cpu_excl_ns, leaf.stats.cpu_excl_ns);
    EXPECT_EQ(raw.overhead.trap_ns, p.overhead.trap_ns);
}

// A JVM whose CPU time per event is mostly its own work: the top is far above a trap, and a row's
// bounds are wider than the cost taken out of it; the row says so (a merge and a JSON round trip
// keep it: test_merge.cpp, test_json_csv.cpp).
TEST(CorrectProfile, BoundsWiderThanTheCorrectionAreFlagged)
{
    Profile p = one_row_profile(40'000'000'000, 55'300);  // 40 us per event; 50 us of work per call
    correct_profile(p, {}, 2);
    ASSERT_TRUE(range_wider_than_likely(p.cost_range));
    const TimeBounds &b = p.methods[0].bounds;
    EXPECT_GT(b.wall_incl_ns[1] - b.wall_incl_ns[0], 20000ULL * 55'300 - p.methods[0].stats.wall_incl_ns);
    EXPECT_TRUE(b.wider_than_correction);
}

}  // namespace
}  // namespace jmt
