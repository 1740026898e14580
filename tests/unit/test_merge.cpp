// Merging reports (model/merge.h) and reading them back (report/report_json.h).
#include <gtest/gtest.h>

#include <sstream>

#include "model/merge.h"
#include "report/report_json.h"
#include "report/report.h"
#include "util/error.h"

namespace {

jmt::MethodRow row(const std::string &m, uint64_t calls, uint64_t incl, uint64_t excl)
{
    jmt::MethodRow r;
    r.klass = "demo/abc/FixedWork";
    r.method = m;
    r.signature = "()V";
    r.stats.calls = calls;
    r.stats.wall_incl_ns = incl;
    r.stats.wall_excl_ns = excl;
    r.stats.cpu_incl_ns = incl / 2;
    r.stats.cpu_excl_ns = excl / 2;
    r.bounds.wall_incl_ns[0] = incl - 1;
    r.bounds.wall_incl_ns[1] = incl + 1;
    return r;
}

jmt::MergeInput input(const std::string &host, int pid, uint64_t c_ns_per_call, uint64_t calls = 1000)
{
    jmt::MergeInput in;
    in.file = host + ".json";
    in.profile.pid = pid;
    in.profile.duration_ns = 1'000'000'000ULL + pid;
    in.profile.packages = {"demo/abc"};
    in.profile.corrected = true;
    in.profile.methods = {row("a", calls, calls * 100'000, calls * 50'000),
                          row("c", calls * 5, calls * 5 * c_ns_per_call, calls * 5 * c_ns_per_call)};
    in.profile.diag.unmatched_returns = 1;
    in.profile.overhead.events = 10 * calls;
    jmt::ReportSource s;
    s.hostname = host;
    s.pid = pid;
    in.profile.sources = {s};
    jmt::CallTree t;
    jmt::PathNode a;
    a.id = 7;
    a.klass = "demo/abc/FixedWork";
    a.method = "a";
    a.signature = "()V";
    a.stats = in.profile.methods[0].stats;
    jmt::PathNode c = a;
    c.id = 9;
    c.parent = 7;
    c.method = "c";
    c.stats = in.profile.methods[1].stats;
    t.nodes = {a, c};
    in.tree = t;
    return in;
}

const jmt::MethodRow *find(const std::vector<jmt::MethodRow> &rows, const std::string &m)
{
    for (const auto &r : rows)
        if (r.method == m)
            return &r;
    return nullptr;
}

TEST(Merge, SumsCountsTimesBoundsAndDiagnosticsExactly)
{
    std::vector<jmt::MergeInput> in = {input("h1", 1, 10'000), input("h2", 2, 11'000, 2000), input("h3", 3, 9'000)};
    in[1].profile.methods[0].bounds.wider_than_correction = true;  // a on h2: any host's says so
    const jmt::Profile m = jmt::merge_profiles(in);
    ASSERT_EQ(m.methods.size(), 2u);
    const jmt::MethodRow *c = find(m.methods, "c");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->stats.calls, 5000u + 10000u + 5000u);
    EXPECT_EQ(c->stats.wall_incl_ns, 5000u * 10'000 + 10000u * 11'000 + 5000u * 9'000);
    const jmt::MethodRow *a = find(m.methods, "a");
    EXPECT_EQ(a->bounds.wall_incl_ns[1], a->stats.wall_incl_ns + 3);
    EXPECT_TRUE(a->bounds.wider_than_correction);
    EXPECT_FALSE(c->bounds.wider_than_correction);
    EXPECT_EQ(m.diag.unmatched_returns, 3u);
    EXPECT_EQ(m.overhead.events, 40000u);
    EXPECT_EQ(m.duration_ns, 1'000'000'003ULL);  // the longest
    ASSERT_EQ(m.sources.size(), 3u);
    EXPECT_EQ(m.sources[2].hostname, "h3");
    EXPECT_EQ(m.pid, 0);
}

TEST(Merge, TreesSumPathByPathWhateverTheIds)
{
    jmt::MergeInput x = input("h1", 1, 10'000), y = input("h2", 2, 10'000);
    for (auto &n : y.tree->nodes) {  // other ids for the same paths
        n.id += 100;
        if (n.parent)
            n.parent += 100;
    }
    const jmt::CallTree t = jmt::merge_trees({&*x.tree, &*y.tree});
    ASSERT_EQ(t.nodes.size(), 2u);
    EXPECT_EQ(t.nodes[0].parent, 0u);
    EXPECT_EQ(t.nodes[1].parent, t.nodes[0].id);
    EXPECT_EQ(t.nodes[1].stats.calls, 10000u);
}

TEST(Merge, OutliersAreFarFromTheMedian)
{
    const std::vector<jmt::MergeInput> in = {input("h1", 1, 10'000), input("h2", 2, 11'000), input("h3", 3, 9'000),
                                             input("h4", 4, 40'000)};
    const std::vector<jmt::Outlier> o = jmt::find_outliers(in, {});
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o[0].method, "c");
    EXPECT_EQ(o[0].input, 3u);
    EXPECT_NEAR(o[0].factor, 40'000 / 10'500.0, 1e-9);
    EXPECT_EQ(o[0].compared, 4u);
}

TEST(Merge, OutliersNeedEnoughCallsAndSources)
{
    std::vector<jmt::MergeInput> in = {input("h1", 1, 10'000), input("h2", 2, 10'000), input("h3", 3, 1'000, 10)};
    // h3 has 50 calls of c: under the minimum of 100, so two sources remain, too few for a median.
    EXPECT_TRUE(jmt::find_outliers(in, {}).empty());
    jmt::OutlierOptions o;
    o.min_calls = 10;
    const auto found = jmt::find_outliers(in, o);
    ASSERT_FALSE(found.empty());
    EXPECT_EQ(found[0].input, 2u);
    EXPECT_LT(found[0].factor, 0.5);
}

TEST(Merge, DifferentFiltersAndModesAreNamed)
{
    std::vector<jmt::MergeInput> in = {input("h1", 1, 10'000), input("h2", 2, 10'000)};
    EXPECT_TRUE(jmt::merge_differences(in).empty());
    in[1].profile.packages.clear();
    in[1].profile.corrected = false;
    const auto lines = jmt::merge_differences(in);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[0].find("package demo/abc (h1.json); all methods (h2.json)"), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("--raw"), std::string::npos) << lines[1];
}

TEST(ReadJson, RoundTripsAReportWithSourceAndPaths)
{
    jmt::MergeInput in = input("web17", 4242, 10'000);
    in.profile.sources[0].main_class = "demo.abc.FixedWork";
    std::ostringstream out;
    jmt::write_json(out, in.profile, &*in.tree);
    const jmt::LoadedReport r = jmt::parse_report(out.str(), "x.json");
    EXPECT_EQ(r.doc.at("schema_version"), 1);
    ASSERT_EQ(r.profile.sources.size(), 1u);
    EXPECT_EQ(r.profile.sources[0].hostname, "web17");
    EXPECT_EQ(r.profile.sources[0].main_class, "demo.abc.FixedWork");
    EXPECT_EQ(r.profile.packages, in.profile.packages);
    EXPECT_TRUE(r.profile.corrected);
    ASSERT_EQ(r.profile.methods.size(), 2u);
    const jmt::MethodRow *c = find(r.profile.methods, "c");
    EXPECT_EQ(c->stats.wall_excl_ns, find(in.profile.methods, "c")->stats.wall_excl_ns);
    EXPECT_EQ(r.profile.diag.unmatched_returns, 1u);
    ASSERT_TRUE(r.tree);
    ASSERT_EQ(r.tree->nodes.size(), 2u);
    EXPECT_EQ(r.tree->nodes[1].klass, "demo/abc/FixedWork");
    EXPECT_EQ(r.tree->nodes[1].method, "c");
    EXPECT_EQ(r.tree->nodes[1].signature, "()V");
    EXPECT_EQ(r.tree->nodes[1].parent, r.tree->nodes[0].id);
    EXPECT_EQ(r.tree->nodes[1].stats.calls, 5000u);
}

TEST(ReadJson, RefusesWhatIsNotAReportInOneLine)
{
    auto message = [](const std::string &text) {
        try {
            jmt::parse_report(text, "f.json");
        } catch (const jmt::Error &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message("not json").find("f.json is not a jmethodtime report"), std::string::npos);
    EXPECT_NE(message("{\"a\": 1}").find("is not a jmethodtime report"), std::string::npos);
    EXPECT_NE(message("{\"methods\": []}").find("no schema_version"), std::string::npos);
    EXPECT_NE(message("{\"methods\": [], \"schema_version\": 2}").find("schema_version 2"), std::string::npos);
    EXPECT_EQ(message("{\"methods\": [], \"schema_version\": 1}"), "accepted");
    for (const char *t : {"not json", "{\"methods\": [], \"schema_version\": 2}"})
        EXPECT_EQ(message(t).find('\n'), std::string::npos);
}

}  // namespace
