// Interval reports (-i): the per-interval rows and how each output marks an interval.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "model/profile.h"
#include "report/report.h"

namespace {

jmt::MethodRow row(const std::string &method, uint64_t calls, uint64_t wall_incl, uint32_t tid = 0)
{
    jmt::MethodRow r;
    r.klass = "demo/A";
    r.method = method;
    r.signature = "()V";
    r.tid = tid;
    r.stats.calls = calls;
    r.stats.wall_incl_ns = wall_incl;
    r.stats.wall_excl_ns = wall_incl / 2;
    r.stats.events_incl = calls * 2;
    return r;
}

TEST(RowsSince, SubtractsTheEarlierTotalsOfTheSameRow)
{
    const std::vector<jmt::MethodRow> before = {row("a", 10, 1000), row("b", 5, 500), row("c", 1, 10, 7)};
    const std::vector<jmt::MethodRow> now = {row("a", 25, 2600), row("b", 5, 500), row("c", 4, 40, 7),
                                             row("c", 2, 20, 8), row("d", 1, 9)};
    const auto delta = jmt::rows_since(now, before);
    ASSERT_EQ(delta.size(), 4u);  // b had no new calls
    EXPECT_EQ(delta[0].method, "a");
    EXPECT_EQ(delta[0].stats.calls, 15u);
    EXPECT_EQ(delta[0].stats.wall_incl_ns, 1600u);
    EXPECT_EQ(delta[0].stats.wall_excl_ns, 800u);
    EXPECT_EQ(delta[0].stats.events_incl, 30u);
    EXPECT_EQ(delta[1].method, "c");  // thread 7: 4 - 1
    EXPECT_EQ(delta[1].tid, 7u);
    EXPECT_EQ(delta[1].stats.calls, 3u);
    EXPECT_EQ(delta[2].tid, 8u);  // thread 8 is new: all of it
    EXPECT_EQ(delta[2].stats.calls, 2u);
    EXPECT_EQ(delta[3].method, "d");
    EXPECT_TRUE(jmt::rows_since(now, now).empty());
    EXPECT_EQ(jmt::rows_since(now, {}).size(), now.size());
}

TEST(FormatUtc, MillisecondsSinceTheEpoch)
{
    EXPECT_EQ(jmt::format_utc(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(jmt::format_utc(1795293063123456789ULL), "2026-11-21T20:31:03.123Z");
}

jmt::Profile interval_profile(uint32_t n)
{
    jmt::Profile p;
    p.pid = 77;
    p.duration_ns = 1'000'000'000ULL;
    p.interval = n;
    p.end_unix_ns = 1795293063123456789ULL + n * 1'000'000'000ULL;
    p.methods = {row("a", 3, 3000)};
    return p;
}

TEST(IntervalReport, TableHeaderNamesTheIntervalAndItsEnd)
{
    std::ostringstream out;
    jmt::write_table(out, interval_profile(2), {});
    EXPECT_EQ(out.str().rfind("Interval 2 ending 2026-11-21T20:31:05.123Z (1.00 s), pid 77: all methods\n", 0), 0u)
        << out.str();
}

TEST(IntervalReport, AnIntervalWithoutCallsSaysSoBriefly)
{
    jmt::Profile p = interval_profile(4);
    p.methods.clear();
    std::ostringstream out;
    jmt::write_table(out, p, {});
    EXPECT_NE(out.str().find("No traced method completed a call in this interval.\n"), std::string::npos) << out.str();
    EXPECT_EQ(out.str().find("Check --package"), std::string::npos) << out.str();
}

TEST(IntervalReport, JsonIsOneLinePerInterval)
{
    std::ostringstream out;
    jmt::write_json(out, interval_profile(1));
    jmt::write_json(out, interval_profile(2));
    std::istringstream in(out.str());
    std::string line;
    uint32_t n = 0;
    while (std::getline(in, line)) {
        auto doc = nlohmann::json::parse(line);
        n++;
        EXPECT_EQ(doc["interval"], n);
        EXPECT_EQ(doc["methods"][0]["calls"], 3);
        EXPECT_EQ(doc["duration_ns"], 1'000'000'000ULL);
    }
    EXPECT_EQ(n, 2u);
    std::ostringstream whole;
    jmt::write_json(whole, interval_profile(0));
    EXPECT_EQ(nlohmann::json::parse(whole.str()).count("interval"), 0u);
}

TEST(IntervalReport, CsvHeaderOnceThenIntervalColumns)
{
    std::ostringstream out;
    jmt::write_csv(out, interval_profile(1), jmt::SortKey::Excl);
    jmt::write_csv(out, interval_profile(2), jmt::SortKey::Excl);
    const std::string text = out.str();
    EXPECT_EQ(text.rfind("interval,end_time,class,method,", 0), 0u) << text;
    EXPECT_EQ(text.find("interval,end_time", 1), std::string::npos) << text;
    EXPECT_NE(text.find("\r\n1,2026-11-21T20:31:04.123Z,demo/A,a,()V,3,3000,"), std::string::npos) << text;
    EXPECT_NE(text.find("\r\n2,2026-11-21T20:31:05.123Z,demo/A,a,()V,3,3000,"), std::string::npos) << text;
}

}  // namespace
