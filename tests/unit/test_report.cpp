#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "report.h"

namespace {

jmt::Profile sample()
{
    jmt::Profile p;
    p.pid = 4242;
    p.duration_ns = 2'500'000'000ULL;
    p.packages = {"org/postgresql"};
    auto add = [&p](const std::string &k, const std::string &m, const std::string &s, uint64_t calls,
                    uint64_t incl, uint64_t excl) {
        jmt::MethodRow r;
        r.klass = k;
        r.method = m;
        r.signature = s;
        r.stats.calls = calls;
        r.stats.wall_incl_ns = incl;
        r.stats.wall_excl_ns = excl;
        r.stats.cpu_incl_ns = incl / 2;
        r.stats.cpu_excl_ns = excl / 2;
        r.stats.unreturned = calls / 100;
        p.methods.push_back(r);
    };
    add("org/postgresql/jdbc/PgResultSet", "getString", "(I)Ljava/lang/String;", 1145565, 263167000, 213991000);
    add("org/postgresql/jdbc/PgConnection", "prepareStatement", "(Ljava/lang/String;)Ljava/sql/PreparedStatement;",
        134422, 144412000, 41973000);
    add("org/postgresql/core/Utils", "toInt", "(Ljava/lang/String;)I", 532551, 23311000, 23311000);
    return p;
}

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        out.push_back(line);
    return out;
}

TEST(Table, HeaderRowsAlignedAndSorted)
{
    std::ostringstream out;
    jmt::write_table(out, sample(), {});
    auto lines = lines_of(out.str());
    ASSERT_GE(lines.size(), 7u) << out.str();
    EXPECT_EQ(lines[0], "Traced pid 4242 for 2.50 s: package org/postgresql");
    EXPECT_EQ(lines[1], "3 methods, 1812538 calls; top 3 by exclusive elapsed time");
    const std::string &header = lines[3];
    size_t method_col = header.find("Method");
    ASSERT_NE(method_col, std::string::npos);
    EXPECT_EQ(lines[4].find("org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;"), method_col);
    EXPECT_EQ(lines[5].find("org/postgresql/jdbc/PgConnection.prepareStatement"), method_col);
    EXPECT_EQ(lines[6].find("org/postgresql/core/Utils.toInt"), method_col);
    // Numbers are right-aligned under their headers.
    EXPECT_EQ(lines[4].find("1145565") + 7, header.find("Calls") + 5);
    EXPECT_EQ(lines[6].find(" 532551") + 7, header.find("Calls") + 5);
    EXPECT_NE(lines[4].find("263 ms"), std::string::npos);
    EXPECT_NE(lines[4].find("214 ms"), std::string::npos);
    EXPECT_EQ(out.str().find("Diagnostics"), std::string::npos);
}

TEST(Table, TopNAndSortKey)
{
    std::ostringstream out;
    jmt::TableOptions opts;
    opts.top = 1;
    opts.sort = jmt::SortKey::Calls;
    jmt::write_table(out, sample(), opts);
    auto lines = lines_of(out.str());
    EXPECT_EQ(lines[1], "3 methods, 1812538 calls; top 1 by calls");
    ASSERT_EQ(lines.size(), 5u) << out.str();
    EXPECT_NE(lines[4].find("getString"), std::string::npos);
}

TEST(Table, LongNamesArePrintedInFull)
{
    jmt::Profile p = sample();
    p.methods[0].klass = "demo/" + std::string(300, 'x');
    std::ostringstream out;
    jmt::write_table(out, p, {});
    EXPECT_NE(out.str().find(p.methods[0].klass + ".getString(I)Ljava/lang/String;"), std::string::npos);
}

TEST(Table, EmptyProfileSaysWhyAndDiagnosticsFollow)
{
    jmt::Profile p;
    p.pid = 1;
    p.diag.unmatched_returns = 2;
    std::ostringstream out;
    jmt::write_table(out, p, {});
    EXPECT_NE(out.str().find("No traced method completed a call"), std::string::npos);
    EXPECT_NE(out.str().find("all methods"), std::string::npos);
    EXPECT_NE(out.str().find("Diagnostics:\n  unmatched_returns: 2 "), std::string::npos) << out.str();
}

TEST(Json, RoundTripsEveryFieldOfEveryMethod)
{
    jmt::Profile p = sample();
    p.diag.dropped_frames = 7;
    p.diag.entries = 99;
    std::ostringstream out;
    jmt::write_json(out, p);
    auto doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(doc["pid"], 4242);
    EXPECT_EQ(doc["duration_ns"], 2'500'000'000ULL);
    EXPECT_EQ(doc["packages"], nlohmann::json::array({"org/postgresql"}));
    ASSERT_EQ(doc["methods"].size(), 3u);
    // Sorted by exclusive time, like the table's default.
    EXPECT_EQ(doc["methods"][0]["method"], "getString");
    for (const auto &m : doc["methods"]) {
        const jmt::MethodRow *src = nullptr;
        for (const auto &r : p.methods)
            if (r.method == m["method"])
                src = &r;
        ASSERT_NE(src, nullptr);
        EXPECT_EQ(m["class"], src->klass);
        EXPECT_EQ(m["signature"], src->signature);
        EXPECT_EQ(m["calls"], src->stats.calls);
        EXPECT_EQ(m["wall_incl_ns"], src->stats.wall_incl_ns);
        EXPECT_EQ(m["wall_excl_ns"], src->stats.wall_excl_ns);
        EXPECT_EQ(m["cpu_incl_ns"], src->stats.cpu_incl_ns);
        EXPECT_EQ(m["cpu_excl_ns"], src->stats.cpu_excl_ns);
        EXPECT_EQ(m["unreturned"], src->stats.unreturned);
    }
    EXPECT_EQ(doc["diagnostics"]["dropped_frames"], 7);
    EXPECT_EQ(doc["diagnostics"]["entries"], 99);
    for (const char *key : {"returns", "traced_calls", "depth_overflow", "unmatched_returns", "thread_state_fail",
                            "method_table_full", "names_fail", "arg_fail", "truncated_names"})
        EXPECT_TRUE(doc["diagnostics"].contains(key)) << key;
}

TEST(Json, InvalidUtf8DoesNotThrow)
{
    jmt::Profile p = sample();
    p.methods[0].klass = std::string("bad\xC0\x80name\xFF", 11);
    std::ostringstream out;
    EXPECT_NO_THROW(jmt::write_json(out, p));
    EXPECT_NO_THROW(nlohmann::json::parse(out.str()));
}

}  // namespace
