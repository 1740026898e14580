#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report.h"

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
    EXPECT_EQ(lines[4], "  Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  Method");
}

TEST(Table, CorrectedTimesStateTheProbeCost)
{
    jmt::Profile p = sample();
    p.corrected = true;
    p.probe_cost = {812, 640};
    auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost, calibrated at start-up: 812 ns per traced event, "
                        "640 ns per filtered-out event (--raw to keep it)");
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
    EXPECT_EQ(lines[5], "1145565        263 ms        214 ms    132 ms    107 ms  "
                        "org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;");
    EXPECT_EQ(lines[6], " 134422        144 ms       42.0 ms   72.2 ms   21.0 ms  "
                        "org/postgresql/jdbc/PgConnection.prepareStatement(Ljava/lang/String;)"
                        "Ljava/sql/PreparedStatement;");
    EXPECT_EQ(lines[7], " 532551       23.3 ms       23.3 ms   11.7 ms   11.7 ms  "
                        "org/postgresql/core/Utils.toInt(Ljava/lang/String;)I");
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
    EXPECT_EQ(lines[4], "       Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  Method");
    EXPECT_EQ(lines[5], "123456789012        7235 s       1.00 us    3617 s    500 ns  a/B.wide()V");
    EXPECT_EQ(lines[6], "           1          5 ns          5 ns      2 ns      2 ns  a/B.narrow()V");
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
    EXPECT_EQ(lines[2].rfind("No traced method completed a call during the trace.", 0), 0u);
    EXPECT_NE(lines[2].find("--package"), std::string::npos);
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
    p.methods[0].stats.wall_incl_ns = 18'000'000'000'000'000'000ULL;  // above 2^63: stays unsigned
    p.methods[1].stats.traced_incl = 77;
    p.methods[1].stats.traced_excl = 66;
    p.corrected = true;
    p.probe_cost = {901, 702};
    std::ostringstream out;
    jmt::write_json(out, p);
    const std::string text = out.str();
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.substr(0, 4), "{\n  ");  // indent 2

    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc.size(), 7u);
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
        EXPECT_EQ(m.size(), 13u);
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
        {"threads_ended", 113}};
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
    ASSERT_EQ(header.size(), 13u);
    EXPECT_EQ(header[0], "class");
    EXPECT_EQ(header[3], "calls");
    EXPECT_EQ(header[12], "traced_events_excl");
    const std::vector<size_t> order = {1, 0, 2};  // by calls, descending
    for (size_t i = 0; i < order.size(); i++) {
        const jmt::MethodRow &src = p.methods[order[i]];
        const auto f = csv_fields(lines[i + 1]);
        ASSERT_EQ(f.size(), 13u) << lines[i + 1];
        EXPECT_EQ(f[0], src.klass);
        EXPECT_EQ(f[1], src.method);
        EXPECT_EQ(f[2], src.signature);
        EXPECT_EQ(std::stoull(f[3]), src.stats.calls);
        EXPECT_EQ(std::stoull(f[4]), src.stats.wall_incl_ns);
        EXPECT_EQ(std::stoull(f[5]), src.stats.wall_excl_ns);
        EXPECT_EQ(std::stoull(f[6]), src.stats.cpu_incl_ns);
        EXPECT_EQ(std::stoull(f[7]), src.stats.cpu_excl_ns);
        EXPECT_EQ(std::stoull(f[8]), src.stats.unreturned);
        EXPECT_EQ(std::stoull(f[9]), src.stats.events_incl);
        EXPECT_EQ(std::stoull(f[11]), src.stats.traced_incl);
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

}  // namespace
