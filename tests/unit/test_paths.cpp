// Call paths: labels, collapsed stacks and the call tree from a hand-built CallTree.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "../common/path_fixture.h"
#include "model/paths.h"
#include "report/folded.h"
#include "report/report.h"

namespace {

jmt::PathNode node(uint32_t id, uint32_t parent, const std::string &method, uint64_t calls, uint64_t incl,
                   uint64_t excl)
{
    return jmt_test::path_node(id, parent, "demo/abc/FixedWork", method, "()V", calls,
                               {incl, excl, incl / 2, excl / 2});
}

// The A/B/C flow, N = 10: A (N), A;B (2N), A;B;C (4N), A;C (N); ns: a 670/220, b 400/200, c 5 per call.
jmt::CallTree seed_tree()
{
    jmt::CallTree t;
    t.nodes = {node(2, 0, "a", 10, 670, 220), node(3, 2, "b", 20, 400, 200), node(4, 3, "c", 40, 200, 200),
               node(5, 2, "c", 10, 50, 50)};
    return t;
}

TEST(FrameLabel, JavaSourceParameterTypes)
{
    jmt::PathNode n;
    n.klass = "org/postgresql/jdbc/PgResultSet";
    n.method = "getString";
    n.signature = "(I)Ljava/lang/String;";
    EXPECT_EQ(jmt::frame_label(n), "org.postgresql.jdbc.PgResultSet.getString(int)");
    n.method = "update";
    n.signature = "([BJ[[Ljava/util/Map;ZLjava/lang/Object;)V";
    EXPECT_EQ(jmt::frame_label(n), "org.postgresql.jdbc.PgResultSet.update(byte[], long, Map[][], boolean, Object)");
    n.signature = "(X;)V";  // not a descriptor: kept, without the ';' that separates folded frames
    EXPECT_EQ(jmt::frame_label(n), "org.postgresql.jdbc.PgResultSet.update(X,)V");
    n.truncated = true;
    EXPECT_EQ(jmt::frame_label(n), "[truncated]");
}

TEST(Folded, OneLinePerPathWithExclusiveValues)
{
    const jmt::CallTree t = seed_tree();
    std::ostringstream calls, wall, cpu;
    jmt::write_folded(calls, t, jmt::PathMetric::Calls);
    jmt::write_folded(wall, t, jmt::PathMetric::Wall);
    jmt::write_folded(cpu, t, jmt::PathMetric::Cpu);
    const std::string a = "demo.abc.FixedWork.a()", b = "demo.abc.FixedWork.b()", c = "demo.abc.FixedWork.c()";
    EXPECT_EQ(calls.str(),
              a + " 10\n" + a + ";" + b + " 20\n" + a + ";" + b + ";" + c + " 40\n" + a + ";" + c + " 10\n");
    EXPECT_EQ(wall.str(),
              a + " 220\n" + a + ";" + b + " 200\n" + a + ";" + b + ";" + c + " 200\n" + a + ";" + c + " 50\n");
    // A flame graph's width of a frame is the sum of the lines under it: a's is its inclusive time.
    uint64_t under_a = 0;
    std::istringstream in(wall.str());
    for (std::string line; std::getline(in, line);)
        under_a += std::stoull(line.substr(line.rfind(' ') + 1));
    EXPECT_EQ(under_a, 670u);
    EXPECT_NE(cpu.str().find(a + " 110\n"), std::string::npos) << cpu.str();
}

TEST(Folded, ZeroValuesAndOpenFramesLeaveNoLine)
{
    jmt::CallTree t = seed_tree();
    t.nodes[0].stats.calls = 0;  // a() still open: no calls yet, its callees' lines keep its label
    std::ostringstream out;
    jmt::write_folded(out, t, jmt::PathMetric::Calls);
    EXPECT_EQ(out.str().find("demo.abc.FixedWork.a() "), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("demo.abc.FixedWork.a();demo.abc.FixedWork.b() 20\n"), std::string::npos);
    jmt::PathNode truncated;
    truncated.id = 1;
    truncated.truncated = true;
    truncated.stats.calls = 7;
    t.nodes.insert(t.nodes.begin(), truncated);
    std::ostringstream with;
    jmt::write_folded(with, t, jmt::PathMetric::Calls);
    EXPECT_EQ(with.str().rfind("[truncated] 7\n", 0), 0u) << with.str();
}

TEST(PathIndex, MalformedParentChainsEnd)
{
    jmt::CallTree t = seed_tree();
    t.nodes[0].parent = 4;  // a cycle a -> c -> b -> a
    EXPECT_LE(jmt::PathIndex(t).chain(t.nodes[2]).size(), t.nodes.size() + 1);
}

TEST(Tree, IndentedByDepthChildrenByInclusiveTime)
{
    jmt::Profile p;
    p.pid = 7;
    p.duration_ns = 1'000'000'000ULL;
    std::ostringstream out;
    jmt::write_tree(out, p, seed_tree(), 0);
    const std::string t = out.str();
    const size_t a = t.find("  demo.abc.FixedWork.a()\n"), b = t.find("    demo.abc.FixedWork.b()\n"),
                 bc = t.find("      demo.abc.FixedWork.c()\n"), ac = t.find("    demo.abc.FixedWork.c()\n");
    ASSERT_NE(a, std::string::npos) << t;
    ASSERT_NE(b, std::string::npos) << t;
    ASSERT_NE(bc, std::string::npos) << t;
    ASSERT_NE(ac, std::string::npos) << t;
    EXPECT_LT(a, b);
    EXPECT_LT(b, bc);
    EXPECT_LT(bc, ac);  // b (400 ns) before c (50 ns) under a, with b's subtree in between
    EXPECT_NE(t.find("4 call paths, 80 calls; 4 shown"), std::string::npos) << t;
}

TEST(Tree, MinPercentPrunesSmallSubtrees)
{
    jmt::Profile p;
    std::ostringstream out;
    jmt::write_tree(out, p, seed_tree(), 10.0);  // 10% of 670 ns = 67 ns: a;c (50 ns) goes
    const std::string t = out.str();
    EXPECT_EQ(t.find("FixedWork.c()"), t.rfind("FixedWork.c()")) << t;            // one c() line left
    EXPECT_NE(t.find("      demo.abc.FixedWork.c()\n"), std::string::npos) << t;  // the one under b
    EXPECT_NE(t.find("(1 smaller call paths and their callees not shown)"), std::string::npos) << t;
}

}  // namespace

#include "jmethodtime.h"
#include "loader/tracer.h"

namespace {

TEST(PercpuEntries, TotalsFitTheKernelMemoryBudgetOnBigHosts)
{
    // 80-byte totals: all 65536 ids on 2 CPUs (10 MB); fewer on 96 CPUs, within 128 MB.
    EXPECT_EQ(jmt::percpu_entries(80, 2, 65536), 65536u);
    const uint32_t big = jmt::percpu_entries(80, 96, 65536);
    EXPECT_LT(big, 65536u);
    EXPECT_LE(uint64_t(big) * 80 * 96, JMT_PERCPU_BUDGET);
    EXPECT_GT(uint64_t(big + 1) * 80 * 96, JMT_PERCPU_BUDGET);
    EXPECT_EQ(jmt::percpu_entries(80, 0, 100), 100u);  // CPU count unknown: the limit
    EXPECT_GE(jmt::percpu_entries(1ULL << 40, 4096, 65536), 2u);
}

TEST(CacheSlots, HalveOnBigHostsDownToTheFloor)
{
    // 48-byte slots (method_cache): 4096 on 2 CPUs; 8 MB over 96 CPUs fits 1820 -> 1024; 192 CPUs -> 512.
    EXPECT_EQ(jmt::cache_slots(48, 2, JMT_METHOD_CACHE_SLOTS), 4096u);
    EXPECT_EQ(jmt::cache_slots(48, 96, JMT_METHOD_CACHE_SLOTS), 1024u);
    EXPECT_EQ(jmt::cache_slots(48, 192, JMT_METHOD_CACHE_SLOTS), 512u);
    for (const int ncpu : {1, 2, 7, 96, 192, 500}) {
        const uint32_t slots = jmt::cache_slots(48, ncpu, JMT_METHOD_CACHE_SLOTS);
        EXPECT_EQ(slots & (slots - 1), 0u) << ncpu;  // a mask: power of two
        EXPECT_TRUE(slots == JMT_MIN_CACHE_SLOTS || uint64_t{slots} * 48 * ncpu <= JMT_CACHE_BUDGET) << ncpu;
    }
    EXPECT_EQ(jmt::cache_slots(48, 4096, JMT_METHOD_CACHE_SLOTS), uint32_t{JMT_MIN_CACHE_SLOTS});  // never below
    EXPECT_EQ(jmt::cache_slots(48, 0, 2048), 2048u);  // CPU count unknown: the limit
}

}  // namespace

// --foreign: a node's time in untraced callees becomes a child "[untraced callees]" that the
// folded stacks (and so flame graphs) draw beside its traced callees; inclusive times stay.
TEST(Untraced, ForeignTimeBecomesAChildNode)
{
    jmt::CallTree tree;
    tree.nodes.push_back(jmt_test::path_node(3, 0, "p/A", "run", "()V", 2, {100, 60, 80, 50}));
    tree.nodes.push_back(jmt_test::path_node(7, 3, "p/B", "leaf", "()V", 4, {40, 40, 30, 30}));
    tree.nodes[0].stats.wall_foreign_ns = 45;
    tree.nodes[0].stats.cpu_foreign_ns = 10;
    const jmt::CallTree split = jmt::with_untraced_nodes(tree);
    ASSERT_EQ(split.nodes.size(), 3u);
    const jmt::PathNode &a = split.nodes[0], &b = split.nodes[1], &u = split.nodes[2];
    EXPECT_EQ(a.stats.wall_incl_ns, 100u);
    EXPECT_EQ(a.stats.wall_excl_ns, 15u);
    EXPECT_EQ(a.stats.cpu_excl_ns, 40u);
    EXPECT_EQ(a.stats.wall_foreign_ns, 0u);
    EXPECT_EQ(b.stats.wall_excl_ns, 40u);
    EXPECT_EQ(u.id, 8u);
    EXPECT_EQ(u.parent, 3u);
    EXPECT_TRUE(u.untraced);
    EXPECT_EQ(u.stats.calls, 0u);
    EXPECT_EQ(u.stats.wall_incl_ns, 45u);
    EXPECT_EQ(u.stats.cpu_excl_ns, 10u);
    EXPECT_EQ(jmt::frame_label(u), "[untraced callees]");
    std::ostringstream folded;
    jmt::write_folded(folded, split, jmt::PathMetric::Wall);
    EXPECT_EQ(folded.str(), "p.A.run() 15\np.A.run();p.B.leaf() 40\np.A.run();[untraced callees] 45\n");
    // A tree without foreign time is returned as it was.
    EXPECT_EQ(jmt::with_untraced_nodes(split).nodes.size(), 3u);
}
