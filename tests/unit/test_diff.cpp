// Comparing two reports (model/diff.h).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "model/diff.h"
#include "report/folded.h"
#include "report/merge_report.h"

namespace {

jmt::MethodRow row(const std::string &m, uint64_t calls, uint64_t excl, uint32_t tid = 0)
{
    jmt::MethodRow r;
    r.klass = "p/K";
    r.method = m;
    r.signature = "()V";
    r.tid = tid;
    r.stats.calls = calls;
    r.stats.wall_incl_ns = excl * 2;
    r.stats.wall_excl_ns = excl;
    return r;
}

TEST(Diff, SortsByTheChangeOfTimePerCallNewAndGoneFirst)
{
    const std::vector<jmt::MethodRow> base = {row("same", 100, 1000), row("slower", 100, 1000), row("faster", 10, 1000),
                                              row("gone", 5, 50)};
    const std::vector<jmt::MethodRow> now = {row("same", 200, 2000), row("slower", 100, 3000), row("faster", 10, 250),
                                             row("new", 1, 1)};
    const std::vector<jmt::DiffRow> d = jmt::diff_methods(base, now);
    ASSERT_EQ(d.size(), 5u);
    EXPECT_EQ(d[0].method, "gone");  // one report only: ties by name
    EXPECT_EQ(d[1].method, "new");
    EXPECT_EQ(d[2].method, "faster");  // 4x faster: |log 0.25| > |log 3|
    EXPECT_DOUBLE_EQ(d[2].change, -0.75);
    EXPECT_EQ(d[3].method, "slower");
    EXPECT_DOUBLE_EQ(d[3].change, 2.0);
    EXPECT_EQ(d[4].method, "same");  // twice the calls, the same time per call
    EXPECT_DOUBLE_EQ(d[4].change, 0.0);
    EXPECT_EQ(jmt::change_text(d[0]), "gone");
    EXPECT_EQ(jmt::change_text(d[1]), "new");
    EXPECT_EQ(jmt::change_text(d[3]), "+200.0%");
}

TEST(Diff, SumsThreadsOfAMethod)
{
    const auto d = jmt::diff_methods({row("m", 1, 100, 1), row("m", 3, 300, 2)}, {row("m", 4, 800)});
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].base->calls, 4u);
    EXPECT_DOUBLE_EQ(d[0].change, 1.0);
}

jmt::CallTree tree(uint64_t a_excl, uint64_t b_excl, bool with_b)
{
    jmt::CallTree t;
    jmt::PathNode a;
    a.id = 1;
    a.klass = "p/K";
    a.method = "a";
    a.signature = "()V";
    a.stats.calls = 1;
    a.stats.wall_excl_ns = a_excl;
    a.stats.wall_incl_ns = a_excl + b_excl;
    t.nodes.push_back(a);
    if (with_b) {
        jmt::PathNode b = a;
        b.id = 2;
        b.parent = 1;
        b.method = "b";
        b.stats.wall_excl_ns = b.stats.wall_incl_ns = b_excl;
        t.nodes.push_back(b);
    }
    return t;
}

TEST(Diff, FoldedIsDifffoldedFormat)
{
    std::ostringstream out;
    jmt::write_diff_folded(out, tree(10, 5, true), tree(20, 0, false), jmt::PathMetric::Wall);
    EXPECT_EQ(out.str(), "p.K.a() 10 20\np.K.a();p.K.b() 5 0\n");
}

TEST(Diff, FlameGraphPageColoursTheChange)
{
    std::ostringstream out;
    jmt::write_diff_flamegraph_html(out, tree(10, 5, false), tree(20, 5, true), "t", jmt::PathMetric::Wall);
    const std::string page = out.str();
    EXPECT_NE(page.find("<svg"), std::string::npos);
    EXPECT_NE(page.find("#b04ad0"), std::string::npos);                  // b: only in the new report
    EXPECT_NE(page.find("change per call: +66.7%"), std::string::npos);  // a: 15 -> 25 ns per call
}

}  // namespace
