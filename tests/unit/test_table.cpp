// The table writer (report/table.cpp): header, rows, columns, footnotes.
#include "../common/report_fixture.h"

namespace {

using namespace report_fixture;

TEST(Table, HeaderAndSummaryLines)
{
    auto lines = lines_of(table_of(sample()));
    ASSERT_GE(lines.size(), 8u);
    EXPECT_EQ(lines[0], "Traced pid 4242 for 2.50 s: package org/postgresql");
    EXPECT_EQ(lines[1], "Times as measured (--raw): each probe event inside a call adds its cost to it");
    EXPECT_EQ(lines[2], "3 methods, 1812538 calls; top 3 by exclusive elapsed time");
    EXPECT_EQ(lines[3], "");
    EXPECT_EQ(lines[4], "  Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl  "
                        "Blocked Excl  Method");
}

TEST(Table, CorrectedTimesStateTheProbeCostAndWhatEachEndRestsOn)
{
    jmt::Profile p = sample();
    p.corrected = true;
    p.probe_cost = {812, 640};
    p.calibrated_cost = {790, 600};
    p.cost_range.lo = {700, 560};
    p.cost_range.hi = {1925, 1925};
    p.cost_range.likely = p.probe_cost;
    p.cost_range.basis = jmt::CostBasis::Gaps;
    p.cost_range.top = jmt::CostTop::JvmCpu;
    p.cost_range.jvm_ns_per_event = 1925;
    p.cost_source = jmt::CostSource::Gaps;
    p.gaps.samples = 12345;
    p.gaps.edge_ns = 650;
    p.cost_range.paid_why = "too little I/O";
    auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[1],
              "Times exclude the probes' own cost: 812 ns per traced event, 640 ns per filtered-out event "
              "(--raw to keep it), the gaps' edge plus 162 ns for the refill after each "
              "trap (what the JVM paid is not measured: too little I/O); calibrated at start-up at 790 ns and 600 ns");
    // The range it lies in, and what each end rests on.
    EXPECT_EQ(lines[2], "Per probe event 700 ns to 1.93 us (traced), 560 ns to 1.93 us (filtered out): from the lower "
                        "edge of 12.3K gaps between the JVM's own probe events to the JVM's whole CPU time per probe "
                        "event; each time's \u00b1 holds its events at either end; wider than the 812 ns taken out, so "
                        "rows' bounds are wider than their correction (the top, the JVM's CPU time per event, is "
                        "mostly its own work; what the JVM paid per event was not measured, see above)");
    std::ostringstream json;
    jmt::write_json(json, p);
    const auto cost = nlohmann::json::parse(json.str()).at("probe_cost");
    EXPECT_EQ(cost.at("traced_event_ns"), 812);
    EXPECT_EQ(cost.at("source"), "gaps");
    EXPECT_EQ(cost.at("range").at("top"), "jvm_cpu");
    EXPECT_EQ(cost.at("range").at("jvm_cpu_ns_per_event"), 1925);
    EXPECT_EQ(cost.at("range").at("traced_event_ns"), nlohmann::json::array({700, 1925}));
    // Cheap events brought the JVM's average below one trap and its most refill: the top says so.
    p.cost_range.top = jmt::CostTop::TrapAndRefill;
    p.cost_range.jvm_ns_per_event = 980;
    lines = lines_of(table_of(p));
    EXPECT_NE(lines[2].find("between the JVM's own probe events to that trap plus at most 1.00 us of refill after it "
                            "(the JVM's whole CPU time per probe event, 980 ns, bounds only the average event); "),
              std::string::npos)
        << lines[2];
    json.str("");
    jmt::write_json(json, p);
    EXPECT_EQ(nlohmann::json::parse(json.str()).at("probe_cost").at("range").at("top"), "trap_and_refill");
    p.cost_range.top = jmt::CostTop::JvmCpu;
    // Neither end measured in the JVM: the calibration halved, the likely cost doubled.
    p.cost_source = jmt::CostSource::Calibrated;
    p.cost_range.basis = jmt::CostBasis::Calibration;
    p.cost_range.top = jmt::CostTop::Unmeasured;
    p.cost_samples = 14;
    p.cost_range.paid_why.clear();
    lines = lines_of(table_of(p));
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost: 812 ns per traced event, 640 ns per filtered-out event "
                        "(--raw to keep it), the calibration; calibrated during the trace (14 samples) at 790 ns "
                        "and 600 ns");
    EXPECT_NE(lines[2].find("from half the calibration (too few gaps between the JVM's own probe events to measure a "
                            "trap) to twice the likely cost (the JVM's CPU time unknown)"),
              std::string::npos)
        << lines[2];
    json.str("");
    jmt::write_json(json, p);
    EXPECT_EQ(nlohmann::json::parse(json.str()).at("probe_cost").at("calibration_samples"), 14);
    EXPECT_EQ(nlohmann::json::parse(json.str()).at("probe_cost").at("range").at("top"), "unmeasured");
}

// What the JVM paid: its CPU per I/O call traced and untraced, in the header and in JSON.
TEST(Table, APaidCostStatesTheCpuPerIoCallItRestsOn)
{
    jmt::Profile p = sample();
    p.corrected = true;
    p.probe_cost = {2000, 1600};
    p.calibrated_cost = {790, 600};
    p.cost_range.lo = {700, 560};
    p.cost_range.hi = {3000, 3000};
    p.cost_range.likely = p.probe_cost;
    p.cost_range.paid_ns_per_event = 1800;
    p.cost_range.likely_from = jmt::CostSource::Paid;
    p.cost_source = jmt::CostSource::Paid;
    p.untraced_work = {500'000'000, 10'000, 1'000'000'000};
    p.traced_work = {4'000'000'000, 8'000, 9'000'000'000};
    auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[1], "Times exclude the probes' own cost: 2.00 us per traced event, 1.60 us per filtered-out event "
                        "(--raw to keep it), what the JVM paid per event (1.80 us on average): its CPU per I/O call, "
                        "500 us traced against 50.0 us in 1.00 s before the probes went on; calibrated at start-up "
                        "at 790 ns and 600 ns");
    p.cost_range.paid_capped = true;
    EXPECT_NE(lines_of(table_of(p))[1].find("lowered so that the widest method keeps a third"), std::string::npos);
    std::ostringstream json;
    jmt::write_json(json, p);
    const auto cost = nlohmann::json::parse(json.str()).at("probe_cost");
    EXPECT_EQ(cost.at("source"), "paid");
    EXPECT_EQ(cost.at("range").at("paid_ns_per_event"), 1800);
    EXPECT_EQ(cost.at("range").at("paid_capped_by_widest_row"), true);
    EXPECT_EQ(cost.at("work").at("untraced").at("io_calls"), 10000);
    EXPECT_EQ(cost.at("work").at("traced").at("cpu_ns"), 4000000000);
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
    EXPECT_EQ(lines[4],
              "       Calls  Elapsed Incl  Elapsed Excl  CPU Incl  CPU Excl  RunQ Incl  RunQ Excl  Blocked Incl"
              "  Blocked Excl  Method");
    EXPECT_EQ(lines[5],
              "123456789012        7235 s       1.00 us    3617 s    500 ns       0 ns       0 ns        3617 s"
              "        500 ns  a/B.wide()V");
    EXPECT_EQ(lines[6],
              "           1          5 ns          5 ns      2 ns      2 ns       0 ns       0 ns          3 ns"
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

// A row whose bounds are wider than the cost taken out of it is marked, with a footnote; the
// header says why once, when the range itself is wider than the likely cost.
TEST(Table, BoundsWiderThanTheCorrectionAreMarkedAndTheHeaderSaysWhy)
{
    jmt::Profile p = sample();
    p.corrected = true;
    p.probe_cost = p.cost_range.likely = {812, 640};
    p.cost_range.lo = {700, 560};
    p.cost_range.hi = {1200, 1200};
    p.cost_range.basis = jmt::CostBasis::Gaps;
    p.cost_range.top = jmt::CostTop::TrapAndRefill;
    p.gaps.samples = 12345;
    std::string t = table_of(p);
    EXPECT_EQ(t.find("wider than"), std::string::npos) << t;
    EXPECT_EQ(t.find("\u2020"), std::string::npos) << t;
    p.cost_range.hi = {1600, 1600};  // 900 ns wide, the refill assumed
    p.methods[0].bounds.wider_than_correction = true;
    t = table_of(p);
    EXPECT_NE(t.find("; wider than the 812 ns taken out, so rows' bounds are wider than their correction (the "
                     "refill after a trap is assumed, not measured; what the JVM paid per event was not measured, "
                     "see above)\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("org/postgresql/core/Utils.toInt(Ljava/lang/String;)I \u2020\n"), std::string::npos) << t;
    EXPECT_NE(t.find("getString(I)Ljava/lang/String;\n"), std::string::npos) << t;  // not marked
    // The marked row's times are its likely figures, the others' keep their bounds.
    for (const std::string &line : lines_of(t)) {
        const bool marked = line.find("\u2020\n") != std::string::npos || line.find("I \u2020") != std::string::npos;
        if (line.find("Utils.toInt") != std::string::npos || line.find("getString(I)") != std::string::npos)
            EXPECT_EQ(line.find("\u2248 ") != std::string::npos, marked) << line;
    }
    EXPECT_NE(t.find("\n\n\u2020 The bounds of these rows are wider than the probes' cost taken out of them"),
              std::string::npos)
        << t;
    p.cost_range.likely_from = jmt::CostSource::Windows;  // measured: the reason is the top alone
    EXPECT_NE(table_of(p).find("(the refill after a trap is assumed, not measured)\n"), std::string::npos);
    p.methods[0].probe_dominated = true;  // both marks, one blank line before the footnotes
    t = table_of(p);
    EXPECT_NE(t.find("toInt(Ljava/lang/String;)I * \u2020\n"), std::string::npos) << t;
    EXPECT_NE(t.find("them)\n\u2020 The bounds"), std::string::npos) << t;
}

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
    p.method_ids = 1;
    EXPECT_NE(table_of(p).find("(1 method id)\n"), std::string::npos) << table_of(p);
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
    jmt::settle_overhead(p);
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
    jmt::settle_overhead(p);
    EXPECT_EQ(lines_of(table_of(p))[2],
              "Probe events: 2.00M (800K/s); about 1.70 s of trap time, 4% of the JVM's 40.0 s on a CPU");
    p.overhead.jvm_cpu_early = true;  // gone at the end: the last reading before its exit
    EXPECT_EQ(lines_of(table_of(p))[2], "Probe events: 2.00M (800K/s); about 1.70 s of trap time, 4% of the JVM's "
                                        "40.0 s on a CPU (read up to 25.0 ms before it exited)");
    p.overhead.jvm_cpu_ns = 0;  // gone before any reading
    jmt::settle_overhead(p);
    EXPECT_EQ(lines_of(table_of(p))[2], "Probe events: 2.00M (800K/s); about 1.70 s of trap time (the JVM's CPU "
                                        "time is unknown: it was gone before it was read)");
    p.corrected = false;  // --raw: no cost, so no trap time
    p.probe_cost = {};
    p.overhead.jvm_cpu_ns = 3'000'000'000;
    jmt::settle_overhead(p);
    EXPECT_EQ(lines_of(table_of(p))[2], "Probe events: 2.00M (800K/s); the JVM was on a CPU for 3.00 s");
    json.str("");
    jmt::write_json(json, p);
    o = nlohmann::json::parse(json.str()).at("overhead");
    EXPECT_EQ(o.at("trap_ns"), 0);
    EXPECT_TRUE(o.at("share").is_null());
    EXPECT_EQ(o.at("jvm_cpu_ns"), 3'000'000'000);
}

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
    jmt::settle_overhead(p);
    EXPECT_FALSE(p.overhead.saturated);
    EXPECT_EQ(
        jmt::run_queue_text(p),
        "Run queue: the JVM's threads waited 50.0 ms for a CPU against 1.00 s on one (5% of their runnable time)");
    p.overhead.jvm_runq_ns = 500'000'000;
    p.overhead.events = 2'000'000;
    p.overhead.traced_events = 1'000'000;
    p.corrected = true;
    p.probe_cost = {400, 300};
    jmt::settle_overhead(p);
    EXPECT_TRUE(p.overhead.saturated);
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
    const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string &l) {
        return l.find("Calls") == 0 || l.find(" Calls") != std::string::npos;
    });
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

}  // namespace
