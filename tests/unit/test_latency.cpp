// Latency histograms (model/latency.h, bpf/jmethodtime.h's buckets): edges,
// nearest-rank percentiles, adds and interval subtraction, the cost shift,
// and their JSON round trip.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "model/latency.h"
#include "report/report_json.h"

namespace {

using jmt::Latency;

// A kernel record holding these calls (ns).
jmt_latency kernel_of(const std::vector<uint64_t> &calls)
{
    jmt_latency k{};
    for (uint64_t ns : calls) {
        k.buckets[jmt_lat_bucket(ns)]++;
        k.max_ns = std::max<uint64_t>(k.max_ns, ns);
        if (k.min_plus_1_ns == 0 || ns + 1 < k.min_plus_1_ns)
            k.min_plus_1_ns = ns + 1;
    }
    return k;
}

Latency latency_of(const std::vector<uint64_t> &calls)
{
    Latency l;
    l.add_kernel(kernel_of(calls));
    return l;
}

uint64_t nearest_rank(std::vector<uint64_t> v, double q)
{
    std::sort(v.begin(), v.end());
    const auto r = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(r, 1, v.size()) - 1];
}

TEST(LatencyBuckets, EdgesAreContiguousAndEachHoldsItsOwnValues)
{
    EXPECT_EQ(jmt_lat_bucket(0), 0u);
    EXPECT_EQ(jmt_lat_bucket(63), 0u);
    EXPECT_EQ(jmt_lat_bucket(64), 1u);
    EXPECT_EQ(jmt_lat_bucket(67), 1u);  // 64..68: 4 ns wide (1/16 of 64)
    EXPECT_EQ(jmt_lat_bucket(68), 2u);
    EXPECT_EQ(jmt_lat_bucket(uint64_t{1} << 38), uint32_t{JMT_LAT_BUCKETS - 1});
    EXPECT_EQ(jmt_lat_bucket(~uint64_t{0}), uint32_t{JMT_LAT_BUCKETS - 1});
    for (uint32_t i = 0; i + 1 < JMT_LAT_BUCKETS; i++) {
        const uint64_t lo = jmt::latency_bucket_low_ns(i), hi = jmt::latency_bucket_high_ns(i);
        ASSERT_LT(lo, hi) << i;
        EXPECT_EQ(jmt_lat_bucket(lo), i);
        EXPECT_EQ(jmt_lat_bucket(hi - 1), i);
        EXPECT_EQ(jmt::latency_bucket_low_ns(i + 1), hi);
        // At most 1/16 of the low edge wide: a bucket's middle within 3.2% of any value in it.
        if (i > 0)
            EXPECT_LE((hi - lo) * 16, lo) << i;
    }
}

TEST(LatencyPercentiles, NearestRankWithinItsBucket)
{
    std::mt19937_64 random(7);
    std::lognormal_distribution<double> skewed(std::log(1e6), 1.2);
    std::vector<uint64_t> calls;
    for (int i = 0; i < 5000; i++)
        calls.push_back(static_cast<uint64_t>(skewed(random)));
    const Latency l = latency_of(calls);
    EXPECT_EQ(l.calls(), calls.size());
    for (double q : {0.5, 0.9, 0.99, 0.999}) {
        const uint64_t truth = nearest_rank(calls, q);
        EXPECT_EQ(jmt_lat_bucket(l.percentile_ns(q)), jmt_lat_bucket(truth)) << q;
        EXPECT_NEAR(static_cast<double>(l.percentile_ns(q)), static_cast<double>(truth), 0.032 * truth) << q;
    }
    EXPECT_EQ(l.min_ns(), *std::min_element(calls.begin(), calls.end()));
    EXPECT_EQ(l.max_ns(), *std::max_element(calls.begin(), calls.end()));
    EXPECT_EQ(l.percentile_ns(1.0), l.max_ns());  // the top bucket's middle, within the extremes
    EXPECT_EQ(Latency().percentile_ns(0.5), 0u);
}

TEST(LatencyPercentiles, OneCallIsItsOwnEveryPercentile)
{
    const Latency l = latency_of({123456});
    for (double q : {0.5, 0.99})
        EXPECT_EQ(l.percentile_ns(q), 123456u);
}

TEST(LatencyMerge, AddingIsTheHistogramOfAllCalls)
{
    const std::vector<uint64_t> a = {1000, 2000, 3000, 50'000'000}, b = {500, 700, 9'000'000};
    Latency sum = latency_of(a);
    sum += latency_of(b);
    std::vector<uint64_t> all = a;
    all.insert(all.end(), b.begin(), b.end());
    const Latency direct = latency_of(all);
    EXPECT_EQ(sum.calls(), 7u);
    EXPECT_EQ(sum.min_ns(), 500u);
    EXPECT_EQ(sum.max_ns(), 50'000'000u);
    for (double q : {0.5, 0.9, 0.99})
        EXPECT_EQ(sum.percentile_ns(q), direct.percentile_ns(q)) << q;
}

TEST(LatencyInterval, LessAnEarlierTotalLeavesTheNewCallsWithBoundedExtremes)
{
    const std::vector<uint64_t> before = {1000, 40'000'000};
    std::vector<uint64_t> after = before;
    after.insert(after.end(), {2000, 2100, 2200});
    Latency interval = latency_of(after);
    interval -= latency_of(before);
    EXPECT_EQ(interval.calls(), 3u);
    // The cumulative extremes (1000, 40 ms) are not this interval's: bounded by its buckets.
    EXPECT_EQ(jmt_lat_bucket(interval.min_ns()), jmt_lat_bucket(2000));
    EXPECT_EQ(jmt_lat_bucket(interval.max_ns()), jmt_lat_bucket(2200));
    EXPECT_EQ(jmt_lat_bucket(interval.percentile_ns(0.5)), jmt_lat_bucket(2100));
    interval -= latency_of({2000, 2100, 2200});
    EXPECT_TRUE(interval.empty());
    EXPECT_EQ(interval.max_ns(), 0u);
}

TEST(LatencyShift, EveryCallMovesByTheCostDifference)
{
    const Latency l = latency_of({10'000, 20'000, 1'000'000});
    const Latency shorter = l.shifted(5'000), longer = l.shifted(-5'000);
    EXPECT_EQ(shorter.calls(), 3u);
    EXPECT_EQ(shorter.min_ns(), 5'000u);
    EXPECT_EQ(shorter.max_ns(), 995'000u);
    EXPECT_EQ(longer.max_ns(), 1'005'000u);
    EXPECT_EQ(jmt_lat_bucket(shorter.percentile_ns(0.5)), jmt_lat_bucket(15'000));
    EXPECT_EQ(jmt_lat_bucket(longer.percentile_ns(0.5)), jmt_lat_bucket(25'000));
    // Never below 0: a call shorter than the shift is 0.
    EXPECT_EQ(l.shifted(50'000).min_ns(), 0u);
}

TEST(LatencyJson, RoundTripKeepsBucketsAndExtremes)
{
    jmt::MethodStats s;
    s.calls = 4;
    s.latency = latency_of({900, 1'500'000, 1'505'000, 70'000'000});
    const nlohmann::json j = jmt::stats_json(s, false);
    ASSERT_TRUE(j.contains("latency"));
    EXPECT_EQ(j["latency"]["buckets"].size(), 3u);  // empty buckets left out; 1.500 and 1.505 ms share one
    EXPECT_EQ(j["latency"]["max_ns"], 70'000'000u);
    const jmt::MethodStats back = jmt::stats_from_json(j);
    EXPECT_EQ(back.latency.calls(), 4u);
    EXPECT_EQ(back.latency.min_ns(), 900u);
    EXPECT_EQ(back.latency.max_ns(), 70'000'000u);
    EXPECT_EQ(back.latency.percentile_ns(0.5), s.latency.percentile_ns(0.5));
    nlohmann::json bad = j;
    bad["latency"]["buckets"][0][0] = 901;  // not a bucket's edge
    EXPECT_THROW(jmt::stats_from_json(bad), std::exception);
    // A path's stats and rows without histograms (--no-latency) carry no key.
    EXPECT_FALSE(jmt::stats_json(jmt::MethodStats{}, false).contains("latency"));
}

}  // namespace

namespace {

TEST(SlowCalls, DurationsTakeTheirUnitAndRefuseTheRest)
{
    EXPECT_EQ(jmt::parse_duration_ns("20ms"), 20'000'000u);
    EXPECT_EQ(jmt::parse_duration_ns("500us"), 500'000u);
    EXPECT_EQ(jmt::parse_duration_ns("1.5s"), 1'500'000'000u);
    EXPECT_EQ(jmt::parse_duration_ns("800ns"), 800u);
    EXPECT_EQ(jmt::parse_duration_ns("3"), 3'000'000u);  // no unit: ms
    for (const char *bad : {"", "ms", "20 ms", "20m", "-1ms", "0", "nan"})
        EXPECT_THROW(jmt::parse_duration_ns(bad), std::exception) << bad;
}

TEST(SlowCalls, KeepSlowestKeepsTheSlowestAndCountsTheRest)
{
    std::vector<jmt::SlowCall> calls(5);
    for (size_t i = 0; i < calls.size(); i++)
        calls[i].wall_ns = (i * 7) % 5;  // 0 2 4 1 3
    uint64_t dropped = 0;
    jmt::keep_slowest(calls, 3, dropped);
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[0].wall_ns, 4u);
    EXPECT_EQ(calls[2].wall_ns, 2u);
    EXPECT_EQ(dropped, 2u);
}

}  // namespace
