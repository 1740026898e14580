#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../common/path_fixture.h"
#include "model/latency.h"
#include "model/paths.h"
#include "model/profile.h"
#include "report/flamegraph.h"

namespace {

using nlohmann::json;

constexpr uint64_t kN = 5000;

jmt::PathNode node(uint32_t id, uint32_t parent, const std::string &klass, const std::string &method,
                   const std::string &sig, uint64_t calls, uint64_t wall_incl, uint64_t wall_excl, uint64_t cpu_incl,
                   uint64_t cpu_excl)
{
    return jmt_test::path_node(id, parent, klass, method, sig, calls, {wall_incl, wall_excl, cpu_incl, cpu_excl});
}

// Paths a (N calls), a;b (2N), a;b;c (4N), a;c (N); per call a 66/21 us, b 20/10, c 5/5,
// on-CPU 96/100 of elapsed. Nodes in the order the tracer gives them (parents first), c of
// a before b so the output's name order is visible.
jmt::CallTree abc_tree()
{
    const std::string k = "demo/abc/FixedWork";
    jmt::CallTree t;
    t.nodes.push_back(node(2, 0, k, "a", "()V", kN, kN * 66000, kN * 21000, kN * 63360, kN * 20160));
    t.nodes.push_back(node(5, 2, k, "c", "()V", kN, kN * 5000, kN * 5000, kN * 4800, kN * 4800));
    t.nodes.push_back(node(3, 2, k, "b", "()V", 2 * kN, 2 * kN * 20000, 2 * kN * 10000, 2 * kN * 19200, 2 * kN * 9600));
    t.nodes.push_back(node(4, 3, k, "c", "()V", 4 * kN, 4 * kN * 5000, 4 * kN * 5000, 4 * kN * 4800, 4 * kN * 4800));
    return t;
}

std::string html_of(const jmt::CallTree &tree,
                    const std::string &title = "jmethodtime pid 4242: package demo/abc, 1.20 s",
                    jmt::PathMetric metric = jmt::PathMetric::Wall)
{
    std::ostringstream out;
    jmt::write_flamegraph_html(out, tree, title, metric);
    return out.str();
}

// The embedded JSON, between the page's markers.
std::string data_text(const std::string &html)
{
    const size_t begin = html.find(jmt::kFlamegraphDataBegin);
    EXPECT_NE(begin, std::string::npos);
    if (begin == std::string::npos)
        return {};
    const size_t start = begin + std::string(jmt::kFlamegraphDataBegin).size();
    const size_t end = html.find(jmt::kFlamegraphDataEnd, start);
    EXPECT_NE(end, std::string::npos);
    return html.substr(start, end - start);
}

json data_of(const std::string &html) { return json::parse(data_text(html)); }

size_t count(const std::string &haystack, const std::string &needle)
{
    size_t n = 0;
    for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1))
        n++;
    return n;
}

void expect_values(const json &j, const std::string &name, uint64_t calls, uint64_t wall_incl, uint64_t wall_excl,
                   uint64_t cpu_incl, uint64_t cpu_excl)
{
    SCOPED_TRACE(name);
    EXPECT_EQ(j.at("name"), name);
    EXPECT_EQ(j.at("calls").get<uint64_t>(), calls);
    EXPECT_EQ(j.at("wall_incl").get<uint64_t>(), wall_incl);
    EXPECT_EQ(j.at("wall_excl").get<uint64_t>(), wall_excl);
    EXPECT_EQ(j.at("cpu_incl").get<uint64_t>(), cpu_incl);
    EXPECT_EQ(j.at("cpu_excl").get<uint64_t>(), cpu_excl);
}

TEST(Flamegraph, PageIsSelfContainedWithItsScriptInlined)
{
    const std::string html = html_of(abc_tree());
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    // flamegraph.js, inlined: its layout and drawing, and no library (no d3) beside it.
    EXPECT_NE(html.find("function layout(m)"), std::string::npos);
    EXPECT_NE(html.find("document.createElementNS(SVG_NS, name)"), std::string::npos);
    EXPECT_EQ(html.find("d3.select"), std::string::npos);
    EXPECT_EQ(html.find("var d3="), std::string::npos);
    // Small: the page of a 4-path tree is the template, the script and the data (d3 v3 alone
    // was 236 KB).
    EXPECT_LT(html.size(), 40000u);
    // Nothing loaded from elsewhere, every placeholder filled.
    EXPECT_EQ(html.find("<script src"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("@JMT_"), std::string::npos);
    EXPECT_NE(html.find("<title>jmethodtime pid 4242: package demo/abc, 1.20 s</title>"), std::string::npos);
    EXPECT_NE(html.find("<h1>jmethodtime pid 4242: package demo/abc, 1.20 s</h1>"), std::string::npos);
    EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(Flamegraph, EmbeddedTreeHasExactValues)
{
    const json root = data_of(html_of(abc_tree()));
    // The root sums the outermost frames (a) and has nothing of its own.
    expect_values(root, "all", kN, kN * 66000, 0, kN * 63360, 0);
    ASSERT_EQ(root.at("children").size(), 1u);
    const json &a = root["children"][0];
    expect_values(a, "demo.abc.FixedWork.a()", kN, kN * 66000, kN * 21000, kN * 63360, kN * 20160);
    ASSERT_EQ(a.at("children").size(), 2u);
    const json &b = a["children"][0];  // sorted by name: b() before c()
    const json &ac = a["children"][1];
    expect_values(b, "demo.abc.FixedWork.b()", 2 * kN, 2 * kN * 20000, 2 * kN * 10000, 2 * kN * 19200, 2 * kN * 9600);
    expect_values(ac, "demo.abc.FixedWork.c()", kN, kN * 5000, kN * 5000, kN * 4800, kN * 4800);
    EXPECT_TRUE(ac.at("children").empty());
    ASSERT_EQ(b.at("children").size(), 1u);
    const json &bc = b["children"][0];
    expect_values(bc, "demo.abc.FixedWork.c()", 4 * kN, 4 * kN * 5000, 4 * kN * 5000, 4 * kN * 4800, 4 * kN * 4800);
    EXPECT_TRUE(bc.at("children").empty());

    // The page's layout value of a node is its exclusive value: their sums over a subtree are
    // the inclusive values, so every frame's width is its inclusive time.
    auto sum_excl = [](const json &j, const char *key, auto &self) -> uint64_t {
        uint64_t s = j.at(key).get<uint64_t>();
        for (const json &c : j.at("children"))
            s += self(c, key, self);
        return s;
    };
    EXPECT_EQ(sum_excl(a, "wall_excl", sum_excl), a.at("wall_incl").get<uint64_t>());
    EXPECT_EQ(sum_excl(b, "wall_excl", sum_excl), b.at("wall_incl").get<uint64_t>());
    EXPECT_EQ(sum_excl(a, "cpu_excl", sum_excl), a.at("cpu_incl").get<uint64_t>());
    EXPECT_EQ(sum_excl(a, "calls", sum_excl), 8 * kN);
}

TEST(Flamegraph, FirstMetricIsTheOneAsked)
{
    EXPECT_NE(html_of(abc_tree()).find("<body data-metric=\"wall\">"), std::string::npos);
    EXPECT_NE(html_of(abc_tree(), "t", jmt::PathMetric::Cpu).find("<body data-metric=\"cpu\">"), std::string::npos);
    EXPECT_NE(html_of(abc_tree(), "t", jmt::PathMetric::Calls).find("<body data-metric=\"calls\">"), std::string::npos);
}

TEST(Flamegraph, ScriptEndInNamesCannotBreakOut)
{
    jmt::CallTree t;
    t.nodes.push_back(node(2, 0, "evil/A<!--&", "x</script><script>alert(1)</SCRIPT>", "()V", 1, 10, 10, 5, 5));
    const std::string html = html_of(t, "pid 1 </script><b>&\"'");
    // As many "</script" as the page has without those names: the data and code elements' own.
    std::string lower = html;
    for (char &c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(count(lower, "</script"), count(html_of(abc_tree()), "</script"));
    EXPECT_EQ(count(lower, "<!--"), count(html_of(abc_tree()), "<!--"));
    const std::string data = data_text(html);
    EXPECT_EQ(data.find('<'), std::string::npos);
    EXPECT_EQ(data.find('>'), std::string::npos);
    EXPECT_EQ(data.find('&'), std::string::npos);
    // The names still read back exactly.
    const json root = json::parse(data);
    ASSERT_EQ(root.at("children").size(), 1u);
    EXPECT_EQ(root["children"][0].at("name"), "evil.A<!--&.x</script><script>alert(1)</SCRIPT>()");
    // The title is text, not markup.
    EXPECT_NE(html.find("<title>pid 1 &lt;/script&gt;&lt;b&gt;&amp;&quot;&#39;</title>"), std::string::npos);
}

TEST(Flamegraph, LabelsAreFrameLabels)
{
    jmt::CallTree t;
    t.nodes.push_back(node(2, 0, "org/postgresql/jdbc/PgResultSet", "getString",
                           "(ILjava/lang/String;)Ljava/lang/String;", 3, 300, 100, 200, 50));
    t.nodes.push_back(node(3, 2, "org/postgresql/core/Utils", "toInt", "([BI)I", 2, 200, 200, 150, 150));
    jmt::PathNode truncated = node(1, 2, "", "", "", 7, 0, 0, 0, 0);
    truncated.truncated = true;
    t.nodes.push_back(truncated);
    t.truncated_calls = 7;
    const json root = data_of(html_of(t));
    const json &top = root["children"][0];
    EXPECT_EQ(top.at("name"), jmt::frame_label(t.nodes[0]));
    EXPECT_EQ(top.at("name"), "org.postgresql.jdbc.PgResultSet.getString(int, String)");
    ASSERT_EQ(top.at("children").size(), 2u);
    EXPECT_EQ(top["children"][0].at("name"), "[truncated]");  // '[' sorts before 'o'
    EXPECT_EQ(top["children"][0].at("calls"), 7);
    EXPECT_EQ(top["children"][1].at("name"), jmt::frame_label(t.nodes[1]));
    EXPECT_EQ(top["children"][1].at("name"), "org.postgresql.core.Utils.toInt(byte[], int)");
}

TEST(Flamegraph, EmptyTreeAndOrphansStillMakeAPage)
{
    const json empty = data_of(html_of(jmt::CallTree{}));
    expect_values(empty, "all", 0, 0, 0, 0, 0);
    EXPECT_TRUE(empty.at("children").empty());

    // A node whose parent is unknown (or comes later) hangs from the root instead of vanishing.
    jmt::CallTree t;
    t.nodes.push_back(node(7, 99, "p/Q", "orphan", "()V", 1, 10, 10, 10, 10));
    t.nodes.push_back(node(8, 9, "p/Q", "early", "()V", 1, 10, 10, 10, 10));
    t.nodes.push_back(node(9, 0, "p/Q", "late", "()V", 1, 30, 30, 30, 30));
    const json root = data_of(html_of(t));
    ASSERT_EQ(root.at("children").size(), 3u);
    EXPECT_EQ(root["children"][0].at("name"), "p.Q.early()");
    EXPECT_EQ(root["children"][1].at("name"), "p.Q.late()");
    EXPECT_EQ(root["children"][2].at("name"), "p.Q.orphan()");
    EXPECT_EQ(root.at("wall_incl").get<uint64_t>(), 50u);
}

TEST(Flamegraph, InvalidUtf8InNamesDoesNotThrow)
{
    jmt::CallTree t;
    t.nodes.push_back(node(2, 0, "p/Caf\xc3", "m\xff", "()V", 1, 10, 10, 10, 10));
    std::string html;
    EXPECT_NO_THROW(html = html_of(t));
    const json root = data_of(html);
    EXPECT_EQ(root["children"][0].at("name"), "p.Caf\xef\xbf\xbd.m\xef\xbf\xbd()");
}

}  // namespace

namespace {

// The methods' distributions: rows of one method (per thread here) summed under its frames' label;
// a method without calls timed has none. 99 calls near 1 us and 1 near 1 ms: p50 in 1 us's
// bucket, p99 too (rank 99), max 1 ms.
TEST(Flamegraph, MethodsLatencyIsSummedByFrameLabel)
{
    std::vector<jmt::MethodRow> rows(3);
    for (jmt::MethodRow &r : rows) {
        r.klass = "demo/abc/FixedWork";
        r.method = "c";
        r.signature = "()V";
    }
    rows[2].method = "b";
    uint64_t low_1us = 0, low_1ms = 0;
    for (uint32_t i = 0; i < JMT_LAT_BUCKETS; i++) {
        if (jmt::latency_bucket_low_ns(i) <= 1000)
            low_1us = jmt::latency_bucket_low_ns(i);
        if (jmt::latency_bucket_low_ns(i) <= 1000000)
            low_1ms = jmt::latency_bucket_low_ns(i);
    }
    ASSERT_TRUE(rows[0].stats.latency.add_bucket(low_1us, 60));
    ASSERT_TRUE(rows[1].stats.latency.add_bucket(low_1us, 39));
    ASSERT_TRUE(rows[1].stats.latency.add_bucket(low_1ms, 1));
    rows[0].stats.latency.set_extremes(1000, 1000);
    rows[1].stats.latency.set_extremes(1000, 1000000);
    std::ostringstream out;
    jmt::write_flamegraph_html(out, abc_tree(), "t", jmt::PathMetric::Wall, rows);
    const std::string html = out.str();
    const std::string begin = "<script type=\"application/json\" id=\"jmt-flamegraph-latency\">";
    const size_t at = html.find(begin);
    ASSERT_NE(at, std::string::npos);
    const size_t start = at + begin.size();
    const json latency = json::parse(html.substr(start, html.find("</script>", start) - start));
    ASSERT_EQ(latency.size(), 1u) << latency.dump();
    const json &c = latency.at("demo.abc.FixedWork.c()");
    EXPECT_EQ(c["calls"], 100);
    EXPECT_GE(c["p50"].get<uint64_t>(), low_1us);
    EXPECT_LT(c["p99"].get<uint64_t>(), 2 * low_1us);
    EXPECT_EQ(c["max"], 1000000);
    ASSERT_EQ(c["buckets"].size(), 2u);
    EXPECT_EQ(c["buckets"][0][0], low_1us);
    EXPECT_EQ(c["buckets"][0][2], 99);
    EXPECT_EQ(c["buckets"][1][2], 1);
}

}  // namespace
