#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/correction.h"
#include "cost/overhead.h"
#include "report/report.h"

namespace {

void add_method(jmt::Profile &p, const std::string &k, const std::string &m, const std::string &s, uint64_t calls,
                uint64_t incl, uint64_t excl)
{
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
}

// Three methods, deliberately not in exclusive-time order.
jmt::Profile sample()
{
    jmt::Profile p;
    p.pid = 4242;
    p.duration_ns = 2'500'000'000ULL;
    p.packages = {"org/postgresql"};
    add_method(p, "org/postgresql/core/Utils", "toInt", "(Ljava/lang/String;)I", 532551, 23311000, 23311000);
    add_method(p, "org/postgresql/jdbc/PgResultSet", "getString", "(I)Ljava/lang/String;", 1145565, 263167000,
               213991000);
    add_method(p, "org/postgresql/jdbc/PgConnection", "prepareStatement",
               "(Ljava/lang/String;)Ljava/sql/PreparedStatement;", 134422, 144412000, 41973000);
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

std::string table_of(const jmt::Profile &p, const jmt::TableOptions &opts = {})
{
    std::ostringstream out;
    jmt::write_table(out, p, opts);
    return out.str();
}

// Offset of the Method column text in a table line (npos when absent).
size_t method_offset(const std::string &line, const std::string &method) { return line.find(method); }

// Offset one past the end of `cell` in `line`, searching from `from`.
size_t end_of(const std::string &line, const std::string &cell, size_t from = 0)
{
    size_t at = line.find(cell, from);
    return at == std::string::npos ? std::string::npos : at + cell.size();
}

TEST(Table, HeaderAndSummaryLines)
{
    auto lines = lines_of(table_of(sample()));
    ASSERT_GE(lines.size(), 8u);
    EXPECT_EQ(lines[0], "Traced pid 4242 for 2.50 s: package org/postgresql");
    EXPECT_EQ(lines[1], "Times as measured (--raw): each probe event inside a call adds its cost to it");
    EXPECT_EQ(lines[2], "3 methods, 1812538 calls; top 3 by exclusive elapsed time");
    EXPECT_EQ(lines[3], "");
    EXPECT_EQ(lines[4], "  Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl  Blocked Excl  Method");
}

TEST(Table, CorrectedTimesStateTheProbeCost)
{
    jmt::Profile p = sample();
    p.corrected = true;
    p.probe_cost = {812, 640};
    p.calibrated_cost = {790, 600};
    p.cost_range = {{700, 560}, {925, 720}, jmt::CostBasis::Gaps};
    p.gaps.samples = 12345;
    auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost: 812 ns per traced event, 640 ns per filtered-out event "
                        "(--raw to keep it); calibrated at start-up at 790 ns and 600 ns");
    // The range it lies in, and what the range rests on.
    EXPECT_EQ(lines[2], "Per probe event 700 ns to 925 ns (traced), 560 ns to 720 ns (filtered out): from the lower "
                        "edge of 12.3K gaps between the JVM's own probe events, up to the cache refill after each "
                        "trap; each time's \u00b1 holds its events at either end");
    // Lowered by the trace itself: both costs and the row that lowered them.
    p.calibrated_cost = {902, 711};
    p.cost_source = jmt::CostSource::Bounded;
    p.cost_method = "org/postgresql/jdbc/PgResultSet.checkClosed()V";
    lines = lines_of(table_of(p));
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost: 812 ns per traced event, 640 ns per filtered-out "
                        "event (--raw to keep it); calibrated at start-up at 902 ns and 711 ns, lowered because "
                        "org/postgresql/jdbc/PgResultSet.checkClosed()V took less than that per event");
    std::ostringstream json;
    jmt::write_json(json, p);
    const auto cost = nlohmann::json::parse(json.str()).at("probe_cost");
    EXPECT_EQ(cost.at("traced_event_ns"), 812);
    EXPECT_EQ(cost.at("calibrated_traced_event_ns"), 902);
    EXPECT_EQ(cost.at("calibrated_rejected_event_ns"), 711);
    EXPECT_EQ(cost.at("source"), "bounded");
    EXPECT_EQ(cost.at("decided_by"), "org/postgresql/jdbc/PgResultSet.checkClosed()V");
    // Measured on the trace's one-event leaves.
    p.cost_source = jmt::CostSource::Leaves;
    p.cost_method = "org/postgresql/jdbc/PgConnection.getLogger()Ljava/util/logging/Logger;";
    lines = lines_of(table_of(p));
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost: 812 ns per traced event, 640 ns per filtered-out "
                        "event (--raw to keep it); measured in this trace on its cheapest one-event method, "
                        "org/postgresql/jdbc/PgConnection.getLogger()Ljava/util/logging/Logger; (calibrated at "
                        "start-up at 902 ns and 711 ns)");
    // Sampled during the trace: the header says how many samples.
    p.cost_samples = 14;
    lines = lines_of(table_of(p));
    EXPECT_NE(lines[1].find("(calibrated during the trace (14 samples) at 902 ns and 711 ns)"), std::string::npos)
        << lines[1];
    p.cost_source = jmt::CostSource::Calibrated;
    lines = lines_of(table_of(p));
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost: 812 ns per traced event, 640 ns per filtered-out event "
                        "(--raw to keep it); calibrated during the trace (14 samples) at 902 ns and 711 ns");
    json.str("");
    jmt::write_json(json, p);
    EXPECT_EQ(nlohmann::json::parse(json.str()).at("probe_cost").at("calibration_samples"), 14);
}

TEST(Table, PackagesListAndAllMethods)
{
    jmt::Profile p = sample();
    p.packages = {"org/postgresql", "com/zaxxer/hikari"};
    EXPECT_EQ(lines_of(table_of(p))[0], "Traced pid 4242 for 2.50 s: packages org/postgresql, com/zaxxer/hikari");
    p.packages.clear();
    EXPECT_EQ(lines_of(table_of(p))[0], "Traced pid 4242 for 2.50 s: all methods");
}

TEST(Table, RowsSortedRightAlignedAndMethodColumnAligned)
{
    const std::string text = table_of(sample());
    auto lines = lines_of(text);
    ASSERT_EQ(lines.size(), 8u) << text;
    // Half of each time off a CPU, none of it in a run queue: the off-CPU columns show.
    EXPECT_EQ(lines[5], "1145565        263 ms        214 ms    132 ms    107 ms       0 ns       0 ns        132 ms"
                        "        107 ms  org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;");
    EXPECT_EQ(lines[6], " 134422        144 ms       42.0 ms   72.2 ms   21.0 ms       0 ns       0 ns       72.2 ms"
                        "       21.0 ms  org/postgresql/jdbc/PgConnection.prepareStatement(Ljava/lang/String;)"
                        "Ljava/sql/PreparedStatement;");
    EXPECT_EQ(lines[7], " 532551       23.3 ms       23.3 ms   11.7 ms   11.7 ms       0 ns       0 ns       11.7 ms"
                        "       11.7 ms  org/postgresql/core/Utils.toInt(Ljava/lang/String;)I");
    const size_t col = method_offset(lines[4], "Method");
    EXPECT_EQ(method_offset(lines[5], "org/postgresql/jdbc/PgResultSet."), col);
    EXPECT_EQ(method_offset(lines[6], "org/postgresql/jdbc/PgConnection."), col);
    EXPECT_EQ(method_offset(lines[7], "org/postgresql/core/Utils."), col);
    // Each numeric cell ends where its header ends.
    EXPECT_EQ(end_of(lines[5], "1145565"), end_of(lines[4], "Calls"));
    EXPECT_EQ(end_of(lines[7], "532551"), end_of(lines[4], "Calls"));
    EXPECT_EQ(end_of(lines[6], "42.0 ms"), end_of(lines[4], "Elapsed Excl"));
    EXPECT_EQ(end_of(lines[7], "11.7 ms"), end_of(lines[4], "CPU Incl"));
    EXPECT_EQ(end_of(lines[7], "11.7 ms", end_of(lines[7], "11.7 ms")), end_of(lines[4], "CPU Excl"));
    EXPECT_EQ(text.find("Diagnostics"), std::string::npos);
}

TEST(Table, ColumnsWidenForWideCells)
{
    jmt::Profile p;
    p.pid = 7;
    add_method(p, "a/B", "wide", "()V", 123456789012ULL, 7234500000000ULL, 1000);
    add_method(p, "a/B", "narrow", "()V", 1, 5, 5);
    auto lines = lines_of(table_of(p));
    ASSERT_EQ(lines.size(), 7u);
    EXPECT_EQ(lines[4], "       Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl"
                        "  Blocked Excl  Method");
    EXPECT_EQ(lines[5], "123456789012        7235 s       1.00 us    3617 s    500 ns       0 ns       0 ns        3617 s"
                        "        500 ns  a/B.wide()V");
    EXPECT_EQ(lines[6], "           1          5 ns          5 ns      2 ns      2 ns       0 ns       0 ns          3 ns"
                        "          3 ns  a/B.narrow()V");
}

TEST(Table, TopNAndSortKey)
{
    jmt::TableOptions opts;
    opts.top = 1;
    opts.sort = jmt::SortKey::Calls;
    auto lines = lines_of(table_of(sample(), opts));
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines[2], "3 methods, 1812538 calls; top 1 by calls");
    EXPECT_NE(lines[5].find("PgResultSet.getString"), std::string::npos);

    opts.top = 2;
    opts.sort = jmt::SortKey::CpuIncl;
    lines = lines_of(table_of(sample(), opts));
    ASSERT_EQ(lines.size(), 7u);
    EXPECT_EQ(lines[2], "3 methods, 1812538 calls; top 2 by inclusive on-CPU time");
    EXPECT_NE(lines[5].find("getString"), std::string::npos);
    EXPECT_NE(lines[6].find("prepareStatement"), std::string::npos);
}

TEST(Table, TopZeroOrLargerThanRowsShowsAll)
{
    for (size_t top : {size_t(0), size_t(3), size_t(50)}) {
        jmt::TableOptions opts;
        opts.top = top;
        auto lines = lines_of(table_of(sample(), opts));
        ASSERT_EQ(lines.size(), 8u) << "top " << top;
        EXPECT_EQ(lines[2], "3 methods, 1812538 calls; top 3 by exclusive elapsed time");
    }
    jmt::TableOptions opts;
    opts.sort = jmt::SortKey::Incl;
    EXPECT_EQ(lines_of(table_of(sample(), opts))[2], "3 methods, 1812538 calls; top 3 by inclusive elapsed time");
    opts.sort = jmt::SortKey::CpuExcl;
    EXPECT_EQ(lines_of(table_of(sample(), opts))[2], "3 methods, 1812538 calls; top 3 by exclusive on-CPU time");
}

TEST(Table, LongNamesArePrintedInFull)
{
    jmt::Profile p = sample();
    p.methods[1].klass = "demo/" + std::string(300, 'x');
    p.methods[1].method = "<init>";
    auto lines = lines_of(table_of(p));
    ASSERT_EQ(lines.size(), 8u);
    const std::string full = p.methods[1].klass + ".<init>(I)Ljava/lang/String;";
    EXPECT_EQ(method_offset(lines[5], full), method_offset(lines[4], "Method"));
    EXPECT_EQ(lines[5].size(), method_offset(lines[4], "Method") + full.size());
    // A long name does not widen the numeric columns of the others.
    EXPECT_EQ(method_offset(lines[6], "org/postgresql/jdbc/PgConnection."), method_offset(lines[4], "Method"));
}

TEST(Table, EmptyProfileSaysWhyAndDiagnosticsFollow)
{
    jmt::Profile p;
    p.pid = 1;
    p.duration_ns = 5'000'000'000ULL;
    p.diag.unmatched_returns = 2;
    p.diag.entries = 10;
    const std::string text = table_of(p);
    auto lines = lines_of(text);
    ASSERT_EQ(lines.size(), 6u) << text;
    EXPECT_EQ(lines[0], "Traced pid 1 for 5.00 s: all methods");
    // No probe events at all (report/why_empty.h): the probes are off or no Java ran.
    EXPECT_EQ(lines[2].rfind("No probe events came from the JVM while tracing", 0), 0u);
    EXPECT_NE(lines[2].find("-XX:+DTraceMethodProbes"), std::string::npos);
    EXPECT_EQ(lines[3], "");
    EXPECT_EQ(lines[4], "Diagnostics:");
    EXPECT_EQ(lines[5], "  " + jmt::diagnostic_lines(p.diag)[0]);
    EXPECT_EQ(lines[5].rfind("  unmatched_returns: 2 ", 0), 0u);
    EXPECT_EQ(text.find("Calls"), std::string::npos);
}

TEST(Table, DiagnosticsOnlyForNonZeroCounters)
{
    jmt::Profile p = sample();
    p.diag.entries = 5;
    p.diag.returns = 5;
    p.diag.traced_calls = 5;
    EXPECT_EQ(table_of(p).find("Diagnostics"), std::string::npos);
    p.diag.dropped_frames = 12;
    p.diag.arg_fail = 1;
    auto lines = lines_of(table_of(p));
    ASSERT_EQ(lines.size(), 12u);
    EXPECT_EQ(lines[8], "");
    EXPECT_EQ(lines[9], "Diagnostics:");
    EXPECT_EQ(lines[10].rfind("  dropped_frames: 12 ", 0), 0u) << lines[10];
    EXPECT_EQ(lines[11].rfind("  arg_fail: 1 ", 0), 0u) << lines[11];
}

TEST(Json, RoundTripsEveryField)
{
    jmt::Profile p = sample();
    p.packages = {"org/postgresql", "com/zaxxer"};
    jmt::Diagnostics &d = p.diag;
    d.entries = 101;
    d.returns = 102;
    d.traced_calls = 103;
    d.depth_overflow = 104;
    d.unmatched_returns = 105;
    d.dropped_frames = 106;
    d.thread_state_fail = 107;
    d.method_table_full = 108;
    d.names_fail = 109;
    d.arg_fail = 110;
    d.truncated_names = 111;
    d.threads_traced = 112;
    d.threads_ended = 113;
    d.glob_budget_out = 114;
    d.thread_rows_full = 115;
    d.paths_full = 116;
    d.cpu_clamped = 117;
    d.foreign_lost = 118;
    d.switch_unseen = 119;
    d.classes_unloaded = 120;
    d.methods_forgotten = 121;
    d.scratch_busy = 122;
    d.totals_not_ready = 123;
    d.methods_seen = 124;
    d.rejected_by_package = 125;
    d.rejected_by_class = 126;
    d.rejected_by_method = 127;
    d.classes_rejected_by_globs = 128;
    d.runq_ns = 129;
    d.vt_unmounts = 130;
    d.vt_mounts = 131;
    d.vt_frames_lost = 132;
    d.vt_unfollowed = 133;
    p.kernel_memory_bytes = 7'760'000;
    p.method_ids = 1004;
    p.methods[0].stats.wall_incl_ns = 18'000'000'000'000'000'000ULL;  // above 2^63: stays unsigned
    p.methods[1].stats.traced_incl = 77;
    p.methods[1].stats.traced_excl = 66;
    p.corrected = true;
    p.probe_cost = {901, 702};
    p.class_globs = {"*ResultSet"};
    p.method_globs = {"get*", "<init>"};
    p.probes.access = "switched";
    p.probes.classes = 812;
    p.probes.unmodifiable = 3;
    p.probes.settle_s = 4.5;
    p.probes.settled = false;
    std::ostringstream out;
    jmt::write_json(out, p);
    const std::string text = out.str();
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.substr(0, 4), "{\n  ");  // indent 2

    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc.size(), 19u);  // with schema_version, jdk_version, virtual_threads,
                                 // virtual_threads_not_followed, kernel_memory_bytes, method_ids,
                                 // shared_probes and probes
    EXPECT_EQ(doc.at("shared_probes"), nlohmann::json::array());
    EXPECT_EQ(doc.at("probes"), nlohmann::json::parse(R"({"access":"switched","classes":812,"unmodifiable":3,)"
                                                      R"("settle_s":4.5,"settled":false})"));
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_EQ(doc.at("kernel_memory_bytes").get<uint64_t>(), 7'760'000u);
    EXPECT_EQ(doc.at("method_ids").get<uint32_t>(), 1004u);
    // No events, no JVM CPU time: counts of 0 and nulls.
    EXPECT_EQ(doc.at("overhead"), nlohmann::json::parse(
                                      R"({"events":0,"traced_events":0,"trap_ns":0,"jvm_cpu_ns":null,"jvm_cpu_early":false,"share":null,)"
                                      R"("jvm_runq_ns":null,"runq_share":null,"saturated":false})"));
    EXPECT_EQ(doc.at("foreign"), false);
    EXPECT_EQ(doc.at("class_globs"), nlohmann::json::array({"*ResultSet"}));
    EXPECT_EQ(doc.at("method_globs"), nlohmann::json::array({"get*", "<init>"}));
    EXPECT_EQ(doc.at("pid"), 4242);
    EXPECT_EQ(doc.at("times"), "corrected");
    EXPECT_EQ(doc.at("probe_cost").at("traced_event_ns").get<uint64_t>(), 901u);
    EXPECT_EQ(doc.at("probe_cost").at("rejected_event_ns").get<uint64_t>(), 702u);
    EXPECT_EQ(doc.at("duration_ns").get<uint64_t>(), 2'500'000'000ULL);
    EXPECT_EQ(doc.at("packages"), nlohmann::json::array({"org/postgresql", "com/zaxxer"}));

    // Every method, sorted by exclusive elapsed time descending.
    const auto &methods = doc.at("methods");
    ASSERT_EQ(methods.size(), 3u);
    const std::vector<size_t> order = {1, 2, 0};  // indices into p.methods
    for (size_t i = 0; i < order.size(); i++) {
        const jmt::MethodRow &src = p.methods[order[i]];
        const auto &m = methods[i];
        EXPECT_EQ(m.size(), 19u);
        EXPECT_EQ(m.at("probe_dominated").get<bool>(), src.probe_dominated);
        // On-CPU, run-queue and blocked time make up elapsed time.
        EXPECT_EQ(m.at("cpu_incl_ns").get<uint64_t>() + m.at("runq_incl_ns").get<uint64_t>() +
                      m.at("blocked_incl_ns").get<uint64_t>(),
                  m.at("wall_incl_ns").get<uint64_t>());
        EXPECT_EQ(m.at("cpu_excl_ns").get<uint64_t>() + m.at("runq_excl_ns").get<uint64_t>() +
                      m.at("blocked_excl_ns").get<uint64_t>(),
                  m.at("wall_excl_ns").get<uint64_t>());
        // Corrected times carry their bounds, [lo, hi] per time key.
        EXPECT_EQ(m.at("bounds").at("wall_incl_ns"),
                  nlohmann::json::array({src.bounds.wall_incl_ns[0], src.bounds.wall_incl_ns[1]}));
        EXPECT_EQ(m.at("bounds").size(), 4u);
        EXPECT_EQ(m.at("class").get<std::string>(), src.klass);
        EXPECT_EQ(m.at("method").get<std::string>(), src.method);
        EXPECT_EQ(m.at("signature").get<std::string>(), src.signature);
        EXPECT_EQ(m.at("calls").get<uint64_t>(), src.stats.calls);
        EXPECT_EQ(m.at("wall_incl_ns").get<uint64_t>(), src.stats.wall_incl_ns);
        EXPECT_EQ(m.at("wall_excl_ns").get<uint64_t>(), src.stats.wall_excl_ns);
        EXPECT_EQ(m.at("cpu_incl_ns").get<uint64_t>(), src.stats.cpu_incl_ns);
        EXPECT_EQ(m.at("cpu_excl_ns").get<uint64_t>(), src.stats.cpu_excl_ns);
        EXPECT_EQ(m.at("events_incl").get<uint64_t>(), src.stats.events_incl);
        EXPECT_EQ(m.at("events_excl").get<uint64_t>(), src.stats.events_excl);
        EXPECT_EQ(m.at("traced_events_incl").get<uint64_t>(), src.stats.traced_incl);
        EXPECT_EQ(m.at("traced_events_excl").get<uint64_t>(), src.stats.traced_excl);
        EXPECT_EQ(m.at("unreturned").get<uint64_t>(), src.stats.unreturned);
    }

    const auto &diag = doc.at("diagnostics");
    const std::vector<std::pair<const char *, uint64_t>> expected = {
        {"entries", 101},           {"returns", 102},          {"traced_calls", 103},
        {"depth_overflow", 104},    {"unmatched_returns", 105}, {"dropped_frames", 106},
        {"thread_state_fail", 107}, {"method_table_full", 108}, {"names_fail", 109},
        {"arg_fail", 110},          {"truncated_names", 111},   {"threads_traced", 112},
        {"threads_ended", 113},     {"glob_budget_out", 114},   {"thread_rows_full", 115},
        {"paths_full", 116},        {"cpu_clamped", 117},      {"foreign_lost", 118},
        {"switch_unseen", 119},     {"classes_unloaded", 120}, {"methods_forgotten", 121},
        {"scratch_busy", 122},      {"totals_not_ready", 123}, {"methods_seen", 124},
        {"rejected_by_package", 125}, {"rejected_by_class", 126}, {"rejected_by_method", 127},
        {"classes_rejected_by_globs", 128}, {"runq_ns", 129}, {"vt_unmounts", 130},
        {"vt_mounts", 131}, {"vt_frames_lost", 132}, {"vt_unfollowed", 133}};
    EXPECT_EQ(diag.size(), expected.size());
    for (const auto &[key, value] : expected)
        EXPECT_EQ(diag.at(key).get<uint64_t>(), value) << key;
}

TEST(Json, EmptyProfileIsStillOneCompleteDocument)
{
    jmt::Profile p;
    std::ostringstream out;
    jmt::write_json(out, p);
    const auto doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(doc.at("pid"), 0);
    EXPECT_TRUE(doc.at("packages").is_array());
    EXPECT_TRUE(doc.at("packages").empty());
    EXPECT_TRUE(doc.at("methods").is_array());
    EXPECT_TRUE(doc.at("methods").empty());
    EXPECT_EQ(doc.at("diagnostics").at("entries"), 0);
}

TEST(Json, JavaNamesSurviveAndInvalidUtf8IsReplaced)
{
    jmt::Profile p = sample();
    p.methods[0].klass = "demo/Flow$$Lambda$1+0x00007f8444000c10";
    p.methods[0].method = "<init>";
    p.methods[1].klass = "demo/Caf\xC3\xA9\"quoted\"\\";     // valid UTF-8 and JSON escapes
    p.methods[2].klass = std::string("bad\xC0\x80name\xFF", 10);  // modified-UTF-8 NUL, stray byte
    std::ostringstream out;
    ASSERT_NO_THROW(jmt::write_json(out, p));
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(out.str()));
    std::vector<std::string> classes;
    for (const auto &m : doc.at("methods"))
        classes.push_back(m.at("class").get<std::string>());
    EXPECT_NE(std::find(classes.begin(), classes.end(), "demo/Flow$$Lambda$1+0x00007f8444000c10"), classes.end());
    EXPECT_NE(std::find(classes.begin(), classes.end(), "demo/Caf\xC3\xA9\"quoted\"\\"), classes.end());
    // Each invalid byte becomes U+FFFD; the valid bytes around them stay.
    EXPECT_NE(std::find(classes.begin(), classes.end(), "bad\xEF\xBF\xBD\xEF\xBF\xBDname\xEF\xBF\xBD"),
              classes.end())
        << out.str();
}

TEST(Json, InvalidUtf8InPackagesDoesNotThrow)
{
    jmt::Profile p;
    p.packages = {std::string("org/\xFF", 5)};
    std::ostringstream out;
    ASSERT_NO_THROW(jmt::write_json(out, p));
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(out.str()));
    EXPECT_EQ(doc.at("packages"), nlohmann::json::array({"org/\xEF\xBF\xBD"}));
}

// Splits one CSV record (RFC 4180 quoting), without its line end.
std::vector<std::string> csv_fields(const std::string &line)
{
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); i++) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
            out.back() += '"', i++;
        else if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}

TEST(Csv, HeaderThenEveryMethodSortedWithTheSameNumbers)
{
    jmt::Profile p = sample();
    p.methods[2].stats.events_incl = 7;
    p.methods[2].stats.traced_incl = 3;
    std::ostringstream out;
    jmt::write_csv(out, p, jmt::SortKey::Calls);
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) {
        ASSERT_FALSE(line.empty());
        EXPECT_EQ(line.back(), '\r');
        line.pop_back();
        lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 4u);
    const auto header = csv_fields(lines[0]);
    ASSERT_EQ(header.size(), 18u);
    EXPECT_EQ(header[17], "probe_dominated");
    EXPECT_EQ(header[0], "class");
    EXPECT_EQ(header[3], "calls");
    EXPECT_EQ(header[16], "traced_events_excl");
    EXPECT_EQ(header[8], "runq_incl_ns");
    EXPECT_EQ(header[11], "blocked_excl_ns");
    const std::vector<size_t> order = {1, 0, 2};  // by calls, descending
    for (size_t i = 0; i < order.size(); i++) {
        const jmt::MethodRow &src = p.methods[order[i]];
        const auto f = csv_fields(lines[i + 1]);
        ASSERT_EQ(f.size(), 18u) << lines[i + 1];
        EXPECT_EQ(f[17], src.probe_dominated ? "1" : "0");
        EXPECT_EQ(f[0], src.klass);
        EXPECT_EQ(f[1], src.method);
        EXPECT_EQ(f[2], src.signature);
        EXPECT_EQ(std::stoull(f[3]), src.stats.calls);
        EXPECT_EQ(std::stoull(f[4]), src.stats.wall_incl_ns);
        EXPECT_EQ(std::stoull(f[5]), src.stats.wall_excl_ns);
        EXPECT_EQ(std::stoull(f[6]), src.stats.cpu_incl_ns);
        EXPECT_EQ(std::stoull(f[7]), src.stats.cpu_excl_ns);
        EXPECT_EQ(std::stoull(f[8]), src.stats.runq_incl_ns);
        EXPECT_EQ(std::stoull(f[11]), jmt::blocked_excl_ns(src.stats));
        EXPECT_EQ(std::stoull(f[12]), src.stats.unreturned);
        EXPECT_EQ(std::stoull(f[13]), src.stats.events_incl);
        EXPECT_EQ(std::stoull(f[15]), src.stats.traced_incl);
    }
}

TEST(Csv, FieldsWithCommasQuotesOrLineBreaksAreQuoted)
{
    jmt::Profile p;
    add_method(p, "a/B,C", "say\"hi\"", "(\n)V", 1, 2, 1);
    std::ostringstream out;
    jmt::write_csv(out, p, jmt::SortKey::Excl);
    const std::string text = out.str();
    EXPECT_NE(text.find("\"a/B,C\",\"say\"\"hi\"\"\",\"(\n)V\",1,"), std::string::npos) << text;
}

// --per-thread: the sample's methods split over two threads, plus one row of
// calls the kernel could not split (tid 0).
jmt::Profile per_thread_sample()
{
    jmt::Profile p;
    p.pid = 4242;
    p.duration_ns = 2'500'000'000ULL;
    add_method(p, "demo/Work", "run", "()V", 3000, 9000000, 6000000);
    add_method(p, "demo/Work", "run", "()V", 1000, 3000000, 2000000);
    add_method(p, "demo/Work", "step", "(I)I", 2000, 4000000, 4000000);
    add_method(p, "demo/Work", "step", "(I)I", 2000, 4000000, 4000000);
    p.methods[0].tid = 301, p.methods[0].thread = "worker-3";
    p.methods[1].tid = 101, p.methods[1].thread = "worker-1";
    p.methods[2].tid = 301, p.methods[2].thread = "worker-3";
    p.methods[3].tid = 0, p.methods[3].thread = "[not split: thread table full]";
    return p;
}

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
    EXPECT_EQ(lines[4], "Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl" + off + "  Thread                          "
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
    EXPECT_EQ(lines[4], "  Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl  Blocked Excl  Method");
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
        EXPECT_EQ(m.size(), 21u);
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
    EXPECT_EQ(lines[0], "class,method,signature,calls,wall_incl_ns,wall_excl_ns,cpu_incl_ns,cpu_excl_ns,runq_incl_ns,runq_excl_ns,"
                         "blocked_incl_ns,blocked_excl_ns,unreturned,"
                        "events_incl,events_excl,traced_events_incl,traced_events_excl,probe_dominated,tid,thread");
    // By calls: 3000 (301), 2000 step tid 0, 2000 step tid 301, 1000 (101).
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"301", "worker-3"}, {"0", "[not split: thread table full]"}, {"301", "worker-3"},
        {"101", "pool-1,worker \"1\""}};
    for (size_t i = 0; i < expected.size(); i++) {
        const auto f = csv_fields(lines[i + 1]);
        ASSERT_EQ(f.size(), 20u) << lines[i + 1];
        EXPECT_EQ(f[18], expected[i].first) << lines[i + 1];
        EXPECT_EQ(f[19], expected[i].second) << lines[i + 1];
    }
    // The first 18 columns are the usual ones.
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
    EXPECT_EQ(out.str(), "class,method,signature,calls,wall_incl_ns,wall_excl_ns,cpu_incl_ns,cpu_excl_ns,runq_incl_ns,runq_excl_ns,"
                         "blocked_incl_ns,blocked_excl_ns,unreturned,"
                         "events_incl,events_excl,traced_events_incl,traced_events_excl,probe_dominated,tid,thread\r\n");
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

TEST(Table, FirstLineNamesEveryFilter)
{
    jmt::Profile p;
    p.pid = 9;
    p.duration_ns = 1'000'000'000ULL;
    p.packages = {"org/postgresql"};
    p.class_globs = {"*ResultSet"};
    p.method_globs = {"get*", "<init>"};
    std::ostringstream out;
    jmt::write_table(out, p, {});
    EXPECT_EQ(out.str().substr(0, out.str().find('\n')),
              "Traced pid 9 for 1.00 s: package org/postgresql; class *ResultSet; methods get*, <init>");
    p.packages.clear();
    std::ostringstream only_globs;
    jmt::write_table(only_globs, p, {});
    EXPECT_EQ(only_globs.str().substr(0, only_globs.str().find('\n')),
              "Traced pid 9 for 1.00 s: class *ResultSet; methods get*, <init>");
}

TEST(Table, RowsMostlyProbeCostAreMarkedWithAFootnote)
{
    jmt::Profile p = sample();
    p.methods[0].probe_dominated = true;
    std::ostringstream out;
    jmt::write_table(out, p, {});
    const std::string t = out.str();
    EXPECT_NE(t.find("org/postgresql/core/Utils.toInt(Ljava/lang/String;)I *\n"), std::string::npos) << t;
    EXPECT_NE(t.find("getString(I)Ljava/lang/String;\n"), std::string::npos) << t;  // not marked
    EXPECT_NE(t.find("\n* The probes' own cost was over half"), std::string::npos) << t;
    p.methods[0].probe_dominated = false;
    std::ostringstream plain;
    jmt::write_table(plain, p, {});
    EXPECT_EQ(plain.str().find("* The probes'"), std::string::npos) << plain.str();
}

}  // namespace

namespace {

// sample() with --foreign values: getString spends 150 ms (40 ms on a CPU) of its
// exclusive time in untraced callees, prepareStatement 30 ms (29 ms), toInt none.
jmt::Profile foreign_sample()
{
    jmt::Profile p = sample();
    p.foreign = true;
    p.methods[1].stats.wall_foreign_ns = 150'000'000;
    p.methods[1].stats.cpu_foreign_ns = 40'000'000;
    p.methods[1].stats.events_foreign = 321;
    p.methods[1].stats.traced_foreign = 12;
    p.methods[2].stats.wall_foreign_ns = 30'000'000;
    p.methods[2].stats.cpu_foreign_ns = 29'000'000;
    return p;
}

}  // namespace

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
TEST(Header, KernelMemoryLineWhenKnown)
{
    jmt::Profile p = sample();
    const auto has_memory_line = [](const std::string &table) {
        return table.find("Kernel memory:") != std::string::npos;
    };
    EXPECT_FALSE(has_memory_line(table_of(p)));
    p.kernel_memory_bytes = 8'126'464;  // 7.75 MiB
    p.method_ids = 1004;
    EXPECT_NE(table_of(p).find("\nKernel memory: 7.8 MB of BPF maps and programs (1004 method ids)\n"),
              std::string::npos)
        << table_of(p);
}

// What the probes cost the JVM: events, their rate, their trap time at the cost taken out,
// and its share of the JVM's CPU time; advice from 25%; what is unknown is said.
TEST(Overhead, LineStatesEventsTrapTimeAndShareOfTheJvmsCpu)
{
    jmt::Profile p = sample();  // 2.50 s
    p.corrected = true;
    p.probe_cost = {1000, 800};
    p.overhead.events = 2'000'000;
    p.overhead.traced_events = 500'000;
    p.overhead.jvm_cpu_ns = 4'000'000'000;
    // 500K x 1000 ns + 1.5M x 800 ns = 1.70 s of the JVM's 4.00 s: 43%.
    EXPECT_EQ(jmt::overhead_ns(p.overhead, p.probe_cost), 1'700'000'000u);
    auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[2], "Probe events: 2.00M (800K/s); about 1.70 s of trap time, 43% of the JVM's 4.00 s on a "
                        "CPU; every Java call traps, traced or not: keep such traces short");
    std::ostringstream json;
    jmt::write_json(json, p);
    auto o = nlohmann::json::parse(json.str()).at("overhead");
    EXPECT_EQ(o.at("events"), 2'000'000);
    EXPECT_EQ(o.at("traced_events"), 500'000);
    EXPECT_EQ(o.at("trap_ns"), 1'700'000'000);
    EXPECT_EQ(o.at("jvm_cpu_ns"), 4'000'000'000);
    EXPECT_DOUBLE_EQ(o.at("share").get<double>(), 0.425);

    p.overhead.jvm_cpu_ns = 40'000'000'000;  // 4%: no advice
    EXPECT_EQ(lines_of(table_of(p))[2],
              "Probe events: 2.00M (800K/s); about 1.70 s of trap time, 4% of the JVM's 40.0 s on a CPU");
    p.overhead.jvm_cpu_early = true;  // gone at the end: the last reading before its exit
    EXPECT_EQ(lines_of(table_of(p))[2], "Probe events: 2.00M (800K/s); about 1.70 s of trap time, 4% of the JVM's "
                                        "40.0 s on a CPU (read up to 25.0 ms before it exited)");
    p.overhead.jvm_cpu_ns = 0;  // gone before any reading
    EXPECT_EQ(lines_of(table_of(p))[2], "Probe events: 2.00M (800K/s); about 1.70 s of trap time (the JVM's CPU "
                                        "time is unknown: it was gone before it was read)");
    p.corrected = false;  // --raw: no cost, so no trap time
    p.probe_cost = {};
    p.overhead.jvm_cpu_ns = 3'000'000'000;
    EXPECT_EQ(lines_of(table_of(p))[2], "Probe events: 2.00M (800K/s); the JVM was on a CPU for 3.00 s");
    json.str("");
    jmt::write_json(json, p);
    o = nlohmann::json::parse(json.str()).at("overhead");
    EXPECT_EQ(o.at("trap_ns"), 0);
    EXPECT_TRUE(o.at("share").is_null());
    EXPECT_EQ(o.at("jvm_cpu_ns"), 3'000'000'000);
}

namespace {

// A CPU-bound row (elapsed = on-CPU) and one that waited: 30 ms for a CPU, 50 ms blocked.
jmt::Profile offcpu_sample(bool waits)
{
    jmt::Profile p;
    p.pid = 5;
    add_method(p, "a/B", "spin", "()V", 10, 100'000'000, 100'000'000);
    p.methods[0].stats.cpu_incl_ns = p.methods[0].stats.cpu_excl_ns = 100'000'000;
    if (waits) {
        add_method(p, "a/B", "flush", "()V", 10, 100'000'000, 90'000'000);
        jmt::MethodStats &s = p.methods[1].stats;
        s.cpu_incl_ns = 20'000'000;
        s.cpu_excl_ns = 10'000'000;
        s.runq_incl_ns = s.runq_excl_ns = 30'000'000;
    }
    return p;
}

}  // namespace

TEST(Table, OffCpuColumnsShowWhenARowWaitedOrWhenAskedFor)
{
    const auto busy = lines_of(table_of(offcpu_sample(false)));
    ASSERT_GE(busy.size(), 5u);
    EXPECT_EQ(busy[4], "Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  Method");
    jmt::TableOptions asked;
    asked.offcpu = true;
    EXPECT_NE(lines_of(table_of(offcpu_sample(false), asked))[4].find("RunQ Incl"), std::string::npos);
    jmt::TableOptions by_runq;
    by_runq.sort = jmt::SortKey::RunqExcl;
    const auto sorted = lines_of(table_of(offcpu_sample(true), by_runq));
    EXPECT_EQ(sorted[2], "2 methods, 20 calls; top 2 by exclusive run-queue wait");
    const auto waited = lines_of(table_of(offcpu_sample(true)));
    EXPECT_EQ(waited[4], "Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl  "
                         "Blocked Excl  Method");
    // On a CPU 10 ms, waiting for one 30 ms, blocked the other 50 ms of its 90 ms of its own.
    EXPECT_EQ(waited[6], "   10        100 ms       90.0 ms   20.0 ms   10.0 ms    30.0 ms    30.0 ms       50.0 ms  "
                         "     50.0 ms  a/B.flush()V");
}

TEST(RunQueue, TheHeaderSaysWhenTheCpusWereSaturated)
{
    jmt::Profile p = offcpu_sample(true);
    EXPECT_EQ(jmt::run_queue_text(p), "") << "unknown";
    p.overhead.jvm_cpu_ns = 1'000'000'000;
    p.overhead.jvm_runq_ns = 50'000'000;
    EXPECT_FALSE(jmt::saturated(p));
    EXPECT_EQ(jmt::run_queue_text(p),
              "Run queue: the JVM's threads waited 50.0 ms for a CPU against 1.00 s on one (5% of their runnable time)");
    p.overhead.jvm_runq_ns = 500'000'000;
    p.overhead.events = 2'000'000;
    p.overhead.traced_events = 1'000'000;
    p.corrected = true;
    p.probe_cost = {400, 300};
    EXPECT_TRUE(jmt::saturated(p));
    EXPECT_EQ(jmt::run_queue_text(p),
              "Run queue: the JVM's threads waited 500 ms for a CPU against 1.00 s on one (33% of their runnable "
              "time); the CPUs were saturated, largely by the probes' own traps (70% of the JVM's CPU): elapsed "
              "times hold that wait (the RunQ columns), on-CPU times do not");
    // In the table's header, in the summary of a report that went to a file, and in JSON.
    EXPECT_NE(table_of(p).find("the CPUs were saturated"), std::string::npos);
    std::ostringstream out;
    jmt::write_json(out, p);
    const auto overhead = nlohmann::json::parse(out.str()).at("overhead");
    EXPECT_EQ(overhead.at("jvm_runq_ns").get<uint64_t>(), 500'000'000u);
    EXPECT_NEAR(overhead.at("runq_share").get<double>(), 1.0 / 3, 1e-9);
    EXPECT_TRUE(overhead.at("saturated").get<bool>());
}

// Several JVMs in one trace: the header names them; --per-jvm rows carry their pid in a JVM
// column, in JSON and in CSV; the JSON has a source per JVM.
TEST(PerJvm, RowsNameTheirJvmAndTheHeaderEveryJvm)
{
    jmt::Profile p;
    p.pid = 12;
    p.jvm_pids = {12, 34};
    p.per_jvm = true;
    p.duration_ns = 1'000'000'000;
    p.sources.resize(2);
    p.sources[0].pid = 12;
    p.sources[1].pid = 34;
    add_method(p, "a/B", "run", "()V", 10, 5000, 5000);
    add_method(p, "a/B", "run", "()V", 20, 9000, 9000);
    p.methods[0].pid = 12;
    p.methods[1].pid = 34;
    const auto lines = lines_of(table_of(p));
    EXPECT_EQ(lines[0], "Traced 2 JVMs (pids 12, 34) for 1.00 s: all methods");
    const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string &l) { return l.find("Calls") == 0 || l.find(" Calls") != std::string::npos; });
    ASSERT_NE(header, lines.end());
    EXPECT_NE(header->find("  JVM     Method"), std::string::npos) << *header;
    EXPECT_NE((header + 1)->find("  pid 34  a/B.run()V"), std::string::npos) << *(header + 1);
    std::ostringstream json_out;
    jmt::write_json(json_out, p);
    const auto doc = nlohmann::json::parse(json_out.str());
    EXPECT_EQ(doc.at("jvm_pids"), nlohmann::json::array({12, 34}));
    EXPECT_EQ(doc.at("sources").size(), 2u);
    EXPECT_EQ(doc.at("methods")[0].at("pid"), 34);
    std::ostringstream csv_out;
    jmt::write_csv(csv_out, p, jmt::SortKey::Calls);
    const auto csv = lines_of(csv_out.str());
    EXPECT_EQ(csv[0].substr(csv[0].size() - 5), ",pid\r");
    EXPECT_EQ(csv[1].substr(csv[1].size() - 4), ",34\r");
}
