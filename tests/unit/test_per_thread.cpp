// --per-thread and --foreign in every writer.
#include "../common/report_fixture.h"

namespace {

using namespace report_fixture;

TEST(PerThread, RowsCarryingATidAreTheMode)
{
    jmt::Profile p = per_thread_sample();
    EXPECT_TRUE(jmt::per_thread_rows(p.methods));
    EXPECT_TRUE(jmt::per_thread_profile(p));
    EXPECT_FALSE(jmt::per_thread_rows(sample().methods));
    EXPECT_FALSE(jmt::per_thread_profile(sample()));
    jmt::Profile empty;
    EXPECT_FALSE(jmt::per_thread_profile(empty));
    empty.per_thread = true;  // --per-thread with no rows yet
    EXPECT_TRUE(jmt::per_thread_profile(empty));
}

TEST(PerThread, SortTiesBreakOnTidForATotalOrder)
{
    jmt::Profile p;
    for (uint32_t tid : {30u, 10u, 20u}) {
        add_method(p, "demo/Work", "run", "()V", 5, 100, 100);
        p.methods.back().tid = tid;
    }
    for (jmt::SortKey key : {jmt::SortKey::Calls, jmt::SortKey::Excl}) {
        const auto sorted = jmt::sorted_rows(p.methods, key);
        ASSERT_EQ(sorted.size(), 3u);
        EXPECT_EQ(sorted[0].tid, 10u);
        EXPECT_EQ(sorted[1].tid, 20u);
        EXPECT_EQ(sorted[2].tid, 30u);
    }
    // The same rows in another input order sort the same way.
    std::reverse(p.methods.begin(), p.methods.end());
    EXPECT_EQ(jmt::sorted_rows(p.methods, jmt::SortKey::Calls)[0].tid, 10u);
}

TEST(PerThread, MergeKeepsThreadsApart)
{
    jmt::Profile p = per_thread_sample();
    p.methods.push_back(p.methods[0]);  // worker-3's run() again
    const auto merged = jmt::merge_rows(p.methods);
    ASSERT_EQ(merged.size(), 4u);
    EXPECT_EQ(merged[0].tid, 301u);
    EXPECT_EQ(merged[0].stats.calls, 6000u);
    EXPECT_EQ(merged[1].stats.calls, 1000u);
}

TEST(PerThread, TableHasAThreadColumnBeforeMethod)
{
    const std::string text = table_of(per_thread_sample());
    auto lines = lines_of(text);
    ASSERT_EQ(lines.size(), 9u) << text;
    EXPECT_EQ(lines[2], "4 rows: 2 methods in 2 threads, 8000 calls; top 4 by exclusive elapsed time");
    const std::string off = "  RunQ Incl  RunQ Excl  Blocked Incl  Blocked Excl";
    EXPECT_EQ(lines[4], "Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl" + off +
                            "  Thread                          "
                            "Method");
    EXPECT_EQ(lines[5], " 3000       9.00 ms       6.00 ms   4.50 ms   3.00 ms       0 ns       0 ns       4.50 ms"
                        "       3.00 ms  worker-3 (301)                  demo/Work.run()V");
    // Equal exclusive times: by name, then tid (0 before 301).
    EXPECT_EQ(lines[6], " 2000       4.00 ms       4.00 ms   2.00 ms   2.00 ms       0 ns       0 ns       2.00 ms"
                        "       2.00 ms  [not split: thread table full]  demo/Work.step(I)I");
    EXPECT_EQ(lines[7], " 2000       4.00 ms       4.00 ms   2.00 ms   2.00 ms       0 ns       0 ns       2.00 ms"
                        "       2.00 ms  worker-3 (301)                  demo/Work.step(I)I");
    EXPECT_EQ(lines[8], " 1000       3.00 ms       2.00 ms   1.50 ms   1.00 ms       0 ns       0 ns       1.50 ms"
                        "       1.00 ms  worker-1 (101)                  demo/Work.run()V");
    // Thread cells start where their header does, and so do the methods.
    const size_t thread_col = lines[4].find("Thread"), method_col = lines[4].find("Method");
    for (size_t i = 5; i <= 8; i++) {
        EXPECT_EQ(lines[i].substr(thread_col - 2, 2), "  ") << lines[i];
        EXPECT_NE(lines[i][thread_col], ' ') << lines[i];
        EXPECT_EQ(lines[i].find("demo/Work."), method_col) << lines[i];
    }
}

TEST(PerThread, TableNamesAThreadWithoutAName)
{
    jmt::Profile p;
    add_method(p, "a/B", "c", "()V", 1, 5, 5);
    p.methods[0].tid = 77;
    auto lines = lines_of(table_of(p));
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines[2], "1 rows: 1 method in 1 thread, 1 calls; top 1 by exclusive elapsed time");
    EXPECT_EQ(lines[5], "    1          5 ns          5 ns      2 ns      2 ns       0 ns       0 ns          3 ns"
                        "          3 ns  ? (77)  a/B.c()V");
}

TEST(PerThread, TableWithoutThreadsIsUnchanged)
{
    // The mode comes from the rows (or Profile::per_thread), not from tid 0 rows alone.
    auto lines = lines_of(table_of(sample()));
    ASSERT_GE(lines.size(), 5u);
    EXPECT_EQ(lines[4], "  Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl  "
                        "Blocked Excl  Method");
    EXPECT_EQ(lines[4].find("Thread"), std::string::npos);
}

TEST(PerThread, JsonRowsHaveTidAndThread)
{
    std::ostringstream out;
    jmt::write_json(out, per_thread_sample());
    const auto doc = nlohmann::json::parse(out.str());
    const auto &methods = doc.at("methods");
    ASSERT_EQ(methods.size(), 4u);
    for (const auto &m : methods) {
        EXPECT_EQ(m.size(), 24u);
        ASSERT_TRUE(m.contains("tid"));
        ASSERT_TRUE(m.contains("vthread"));
        ASSERT_TRUE(m.contains("thread"));
    }
    EXPECT_EQ(methods[0].at("tid").get<uint32_t>(), 301u);
    EXPECT_EQ(methods[0].at("thread"), "worker-3");
    EXPECT_EQ(methods[0].at("method"), "run");
    EXPECT_EQ(methods[0].at("calls").get<uint64_t>(), 3000u);
    EXPECT_EQ(methods[1].at("tid").get<uint32_t>(), 0u);
    EXPECT_EQ(methods[1].at("thread"), "[not split: thread table full]");
    EXPECT_EQ(methods[3].at("tid").get<uint32_t>(), 101u);
    EXPECT_EQ(methods[3].at("thread"), "worker-1");

    // Not split by thread: no such keys.
    std::ostringstream plain;
    jmt::write_json(plain, sample());
    for (const auto &m : nlohmann::json::parse(plain.str()).at("methods")) {
        EXPECT_FALSE(m.contains("tid"));
        EXPECT_FALSE(m.contains("thread"));
    }
}

TEST(PerThread, JsonThreadNamesAreSafeUtf8)
{
    jmt::Profile p;
    add_method(p, "a/B", "c", "()V", 1, 5, 5);
    p.methods[0].tid = 9;
    p.methods[0].thread = std::string("w\xFF\"1", 4);
    std::ostringstream out;
    ASSERT_NO_THROW(jmt::write_json(out, p));
    const auto doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(doc.at("methods")[0].at("thread"), "w\xEF\xBF\xBD\"1");
}

TEST(PerThread, CsvAddsTidAndThreadAtTheEnd)
{
    jmt::Profile p = per_thread_sample();
    p.methods[1].thread = "pool-1,worker \"1\"";
    std::ostringstream out;
    jmt::write_csv(out, p, jmt::SortKey::Calls);
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) {
        ASSERT_EQ(line.back(), '\r');
        line.pop_back();
        lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(
        lines[0],
        "class,method,signature,calls,wall_incl_ns,wall_excl_ns,cpu_incl_ns,cpu_excl_ns,runq_incl_ns,runq_excl_ns,"
        "blocked_incl_ns,blocked_excl_ns,unreturned,"
        "events_incl,events_excl,traced_events_incl,traced_events_excl,pinned,pinned_ns,pinned_monitor,"
        "probe_dominated,tid,thread");
    // By calls: 3000 (301), 2000 step tid 0, 2000 step tid 301, 1000 (101).
    const std::vector<std::pair<std::string, std::string>> expected = {{"301", "worker-3"},
                                                                       {"0", "[not split: thread table full]"},
                                                                       {"301", "worker-3"},
                                                                       {"101", "pool-1,worker \"1\""}};
    for (size_t i = 0; i < expected.size(); i++) {
        const auto f = csv_fields(lines[i + 1]);
        ASSERT_EQ(f.size(), 23u) << lines[i + 1];
        EXPECT_EQ(f[21], expected[i].first) << lines[i + 1];
        EXPECT_EQ(f[22], expected[i].second) << lines[i + 1];
    }
    // The first 21 columns are the usual ones.
    const auto first = csv_fields(lines[1]);
    EXPECT_EQ(first[0], "demo/Work");
    EXPECT_EQ(first[1], "run");
    EXPECT_EQ(first[3], "3000");
    EXPECT_EQ(first[5], "6000000");
    EXPECT_NE(lines[4].find(",101,\"pool-1,worker \"\"1\"\"\""), std::string::npos) << lines[4];
}

TEST(PerThread, CsvHeaderHasThreadColumnsEvenWithoutRows)
{
    jmt::Profile p;
    p.per_thread = true;
    std::ostringstream out;
    jmt::write_csv(out, p, jmt::SortKey::Calls);
    EXPECT_EQ(
        out.str(),
        "class,method,signature,calls,wall_incl_ns,wall_excl_ns,cpu_incl_ns,cpu_excl_ns,runq_incl_ns,runq_excl_ns,"
        "blocked_incl_ns,blocked_excl_ns,unreturned,"
        "events_incl,events_excl,traced_events_incl,traced_events_excl,pinned,pinned_ns,pinned_monitor,"
        "probe_dominated,tid,thread\r\n");
    std::ostringstream plain;
    jmt::write_csv(plain, sample(), jmt::SortKey::Calls);
    EXPECT_EQ(plain.str().find("tid"), std::string::npos);
}

TEST(PerThread, DiagnosticsNameTheNewCounters)
{
    jmt::Diagnostics d;
    d.glob_budget_out = 2;
    d.thread_rows_full = 5;
    const auto lines = jmt::diagnostic_lines(d);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("glob_budget_out: 2 ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("--class"), std::string::npos);
    EXPECT_EQ(lines[1].rfind("thread_rows_full: 5 ", 0), 0u) << lines[1];
    EXPECT_NE(lines[1].find("[not split: thread table full]"), std::string::npos);
}

TEST(Foreign, TableAddsTwoColumnsBeforeMethod)
{
    const auto lines = lines_of(table_of(foreign_sample()));
    auto header = std::find_if(lines.begin(), lines.end(),
                               [](const std::string &l) { return l.find("Calls") != std::string::npos; });
    ASSERT_NE(header, lines.end());
    EXPECT_NE(header->find("Blocked Excl  Foreign  CPU Foreign  Method"), std::string::npos) << *header;
    const std::string &get_string = *(header + 1);  // top by exclusive time
    EXPECT_NE(get_string.find("150 ms"), std::string::npos) << get_string;
    EXPECT_NE(get_string.find("40.0 ms"), std::string::npos) << get_string;
    EXPECT_EQ(get_string.find("org/postgresql/jdbc/PgResultSet.getString"), header->find("Method"));
    // Without --foreign the columns are not there.
    const std::string plain = table_of(sample());
    EXPECT_EQ(plain.find("Foreign"), std::string::npos);
}

TEST(Foreign, SortByForeignTime)
{
    jmt::TableOptions opts;
    opts.sort = jmt::SortKey::Foreign;
    const std::string text = table_of(foreign_sample(), opts);
    EXPECT_NE(text.find("top 3 by elapsed time in untraced callees"), std::string::npos);
    EXPECT_LT(text.find("getString"), text.find("prepareStatement"));
    EXPECT_LT(text.find("prepareStatement"), text.find("toInt"));
}

TEST(Foreign, JsonAndCsvCarryTheForeignValues)
{
    std::ostringstream json_out, csv_out;
    jmt::write_json(json_out, foreign_sample());
    const auto doc = nlohmann::json::parse(json_out.str());
    EXPECT_EQ(doc.at("foreign"), true);
    const auto &top = doc.at("methods")[0];
    EXPECT_EQ(top.at("method"), "getString");
    EXPECT_EQ(top.at("wall_foreign_ns").get<uint64_t>(), 150'000'000u);
    EXPECT_EQ(top.at("cpu_foreign_ns").get<uint64_t>(), 40'000'000u);
    EXPECT_EQ(top.at("events_foreign").get<uint64_t>(), 321u);
    EXPECT_EQ(top.at("traced_events_foreign").get<uint64_t>(), 12u);
    std::ostringstream plain;
    jmt::write_json(plain, sample());
    EXPECT_FALSE(nlohmann::json::parse(plain.str()).at("methods")[0].contains("wall_foreign_ns"));

    jmt::write_csv(csv_out, foreign_sample(), jmt::SortKey::Excl);
    const auto lines = lines_of(csv_out.str());
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_NE(lines[0].find(",probe_dominated,wall_foreign_ns,cpu_foreign_ns,events_foreign,traced_events_foreign\r"),
              std::string::npos);
    EXPECT_NE(lines[1].find(",0,150000000,40000000,321,12\r"), std::string::npos) << lines[1];
}

// The kernel memory the tool held, when known (0 in a merge: no line).

}  // namespace
