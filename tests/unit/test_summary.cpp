#include <gtest/gtest.h>

#include <sstream>

#include "cost/correction.h"
#include "cost/overhead.h"
#include "report/report.h"
#include "report/summary.h"

namespace {

jmt::MethodRow row(const std::string &k, const std::string &m, uint64_t calls, uint32_t tid = 0)
{
    jmt::MethodRow r;
    r.klass = k;
    r.method = m;
    r.signature = "()V";
    r.tid = tid;
    r.thread = tid ? "worker" : "";
    r.stats.calls = calls;
    r.stats.wall_incl_ns = r.stats.wall_excl_ns = calls * 1000;
    return r;
}

jmt::Profile traced()
{
    jmt::Profile p;
    p.pid = 4242;
    p.duration_ns = 2'500'000'000ULL;
    p.packages = {"demo/abc"};
    p.corrected = true;
    p.probe_cost = {100, 80};
    p.overhead.events = 3'000'000;
    p.overhead.traced_events = 1'000'000;
    p.overhead.jvm_cpu_ns = 2'000'000'000ULL;
    p.methods = {row("demo/abc/A", "a", 400000), row("demo/abc/B", "b", 100000)};
    jmt::settle_overhead(p);
    return p;
}

// The first line of the table's report: the summary's first line is the same text.
std::string header_line(const jmt::Profile &p)
{
    std::ostringstream out;
    jmt::write_table(out, p, {});
    return out.str().substr(0, out.str().find('\n'));
}

TEST(Summary, SaysWhatWasTracedTheProbeCostAndTheCalls)
{
    const jmt::Profile p = traced();
    const auto lines = jmt::summary_lines(p);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "Traced pid 4242 for 2.50 s: package demo/abc");
    EXPECT_EQ(header_line(p), "Traced pid 4242 for 2.50 s: package demo/abc");
    // 1M traced x 100 ns + 2M others x 80 ns = 260 ms of the JVM's 2 s: 13%.
    EXPECT_EQ(lines[1], "Probe events: 3.00M (1.20M/s); about 260 ms of trap time, 13% of the JVM's 2.00 s on a CPU");
    EXPECT_EQ(lines[2], "2 methods, 500000 calls");
}

// --raw: the times keep the probes' cost, but the calibration still prices the traps
// for the overhead line; no cost is taken out (probe_cost stays 0).
TEST(Summary, RawTimesStillHaveTheTrapTimeOfTheCalibration)
{
    jmt::Profile p = traced();
    p.corrected = false;
    p.probe_cost = {};
    p.calibrated_cost = {100, 80};
    const jmt::MethodStats before = p.methods[0].stats;
    jmt::correct_profile(p, {});
    EXPECT_EQ(p.probe_cost.traced_event_ns, 0u);
    EXPECT_EQ(p.probe_cost.rejected_event_ns, 0u);
    EXPECT_EQ(p.methods[0].stats.wall_incl_ns, before.wall_incl_ns);
    // Priced at the likely cost of the calibration's range (no gaps, nothing paid measured: the
    // calibration itself): 1M traced x 100 ns + 2M others x 80 ns.
    EXPECT_EQ(jmt::overhead_ns(p.overhead, jmt::trap_cost(p)), 260'000'000u);
    EXPECT_EQ(jmt::overhead_text(p),
              "Probe events: 3.00M (1.20M/s); about 260 ms of trap time, 13% of the JVM's 2.00 s on a CPU");
}

TEST(Summary, NonZeroDiagnosticsInOneLine)
{
    jmt::Profile p = traced();
    p.diag.depth_overflow = 3;
    p.diag.paths_full = 12;
    p.diag.entries = 99;  // event counts are no warning
    const auto lines = jmt::summary_lines(p);
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[3], "Diagnostics (see the report): depth_overflow 3, paths_full 12");
}

TEST(Summary, SaysWhyNothingShowed)
{
    jmt::Profile p;
    p.pid = 7;
    p.duration_ns = 1'000'000'000ULL;
    p.method_globs = {"get*"};
    const auto lines = jmt::summary_lines(p);
    ASSERT_EQ(lines.size(), 2u);  // no events: no overhead line
    EXPECT_EQ(lines[0], "Traced pid 7 for 1.00 s: method get*");
    EXPECT_EQ(lines[1], "No probe events came from the JVM while tracing: it ran no Java method, or its probes are off "
                        "(start it with -XX:+DTraceMethodProbes).");
}

TEST(Summary, PerThreadCountsMethodsAndThreads)
{
    jmt::Profile p = traced();
    p.per_thread = true;
    p.methods = {row("demo/abc/A", "a", 10, 11), row("demo/abc/A", "a", 5, 12), row("demo/abc/B", "b", 1, 12)};
    EXPECT_EQ(jmt::summary_lines(p).back(), "2 methods in 2 threads, 16 calls");
}

TEST(Summary, AnIntervalSaysWhichOne)
{
    jmt::Profile p = traced();
    p.interval = 3;
    p.end_unix_ns = 1'700'000'000'123'000'000ULL;
    const std::string line = "Interval 3 ending 2023-11-14T22:13:20.123Z (2.50 s), pid 4242: package demo/abc";
    EXPECT_EQ(jmt::summary_lines(p)[0], line);
    EXPECT_EQ(header_line(p), line);
}

TEST(Summary, WantedWhenTheReportIsNotOnTheTerminal)
{
    EXPECT_TRUE(jmt::summary_wanted(true, true));
    EXPECT_TRUE(jmt::summary_wanted(false, false));
    EXPECT_TRUE(jmt::summary_wanted(true, false));
    EXPECT_FALSE(jmt::summary_wanted(false, true));
}

}  // namespace

namespace {

// Probes shared with another tracer (--shared-probes): where the JVM's CPU time per event is
// the top, it holds the other tracer's programs too; without it, the top doubles, so every
// corrected time's bound widens; the header says why.
TEST(SharedProbes, BoundsAllowTwiceTheProbeCostAndTheHeaderSaysWhy)
{
    jmt::Profile alone = traced();
    alone.calibrated_cost = {1000, 800};
    alone.methods[0].stats.events_incl = alone.methods[0].stats.events_excl = 400;
    jmt::Profile measured = alone, measured_shared = alone;
    measured_shared.shared_probes = {"pid 77 (jmethodtime)"};
    jmt::correct_profile(measured, {}, 2);
    jmt::correct_profile(measured_shared, {}, 2);
    EXPECT_EQ(measured_shared.cost_range.hi.traced_event_ns, measured.cost_range.hi.traced_event_ns);
    alone.overhead.jvm_cpu_ns = 0;
    jmt::Profile shared = alone;
    shared.shared_probes = {"pid 77 (jmethodtime)"};
    jmt::correct_profile(alone, {}, 2);
    jmt::correct_profile(shared, {}, 2);
    // No gaps, no JVM CPU time: the low end is the calibration / 2 (500 and 400 ns), the top the
    // likely cost (the calibration's 1000 ns) x 2, for both kinds of event; x 2 again when shared.
    EXPECT_EQ(alone.cost_range.lo.traced_event_ns, 500u);
    EXPECT_EQ(alone.cost_range.lo.rejected_event_ns, 400u);
    EXPECT_EQ(alone.cost_range.hi.traced_event_ns, 2000u);
    EXPECT_EQ(alone.cost_range.hi.rejected_event_ns, 2000u);
    EXPECT_EQ(shared.cost_range.lo.traced_event_ns, 500u);
    EXPECT_EQ(shared.cost_range.lo.rejected_event_ns, 400u);
    EXPECT_EQ(shared.cost_range.hi.traced_event_ns, 4000u);
    EXPECT_EQ(shared.cost_range.hi.rejected_event_ns, 4000u);
    // a()'s 400 ms hold 400 filtered-out events: its low bound takes out 400 x the top (0.8 ms
    // alone, 1.6 ms shared), its high bound 400 x 400 ns whether shared or not.
    const auto &a = alone.methods[0].bounds.wall_incl_ns, &s = shared.methods[0].bounds.wall_incl_ns;
    EXPECT_EQ(a[0], 399'200'000u);
    EXPECT_EQ(s[0], 398'400'000u);
    EXPECT_EQ(a[1], 399'840'000u);
    EXPECT_EQ(s[1], 399'840'000u);
    std::ostringstream out;
    jmt::write_table(out, shared, {});
    EXPECT_NE(out.str().find("\nProbes shared with pid 77 (jmethodtime): every event also ran its programs"),
              std::string::npos)
        << out.str();
    std::ostringstream plain;
    jmt::write_table(plain, alone, {});
    EXPECT_EQ(plain.str().find("Probes shared"), std::string::npos);
}

}  // namespace
