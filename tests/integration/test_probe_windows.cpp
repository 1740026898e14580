// What one probe event cost the JVM, measured in windows with one probe detached
// (cost/probe_windows.h) after the trace or before it (--cost-before), corrects the A/B/C flow
// as the JVM's own timing says; and what the trace cost the JVM in all (the overhead line).
#include <cmath>
#include <csignal>
#include <cstdio>

#include "cost/probe_windows.h"
#include "fixed_work.h"

namespace {

using namespace fixed_work;

// jmethodtime's JSON report on stdout into r.report; false (a failure added) when it is not JSON.
bool parse_report(jmt_it::Child &jmt, jmt_it::RunResult &r)
{
    const std::string out = jmt.drain(false, 5000);
    r.jmt_stderr = jmt.drain(true, 1000);
    try {
        r.report = nlohmann::json::parse(out);
    } catch (const std::exception &e) {
        ADD_FAILURE() << "not JSON (" << e.what() << "): " << out << "\n" << r.jmt_stderr;
        return false;
    }
    return true;
}

// How far the host's pace in the windows was from its pace in the trace: FixedWork's reference
// loop timed in each (windows_ref_ns, traced_ref_ns), |ratio - 1|. A CI run whose windows read
// 6,674 ns per event where the JVM had paid 5,794 in the trace passed every other signal.
double windows_pace_change(const std::string &done_line)
{
    const double windows_ref = double(jmt_it::done_value(done_line, "windows_ref_ns"));
    const double traced_ref = double(jmt_it::done_value(done_line, "traced_ref_ns"));
    EXPECT_GT(windows_ref, 0) << "no reference loop timed in the windows: " << done_line;
    const double change = windows_ref > 0 && traced_ref > 0 ? std::fabs(windows_ref / traced_ref - 1) : 0;
    std::printf("  the host ran the reference loop in %.0f ns in the windows, %.0f ns in the trace (%+.1f%%)\n",
                windows_ref, traced_ref, 100 * (windows_ref / traced_ref - 1));
    return change;
}

// How far the host disturbed a windows run, as the largest of its signals over its limit (over 1:
// disturbed), by the JVM's own timings alone (nothing jmethodtime computes): a slow batch, a
// register-only reference loop over 2% slower in the traced run than beside the untraced timing
// (a slow phase in the trace alone), and a reference loop over 2% faster or slower in the windows
// than in the trace (windows_pace_change: the windows then time another host than the trace did).
double windows_disturbance(const jmt_it::RunResult &r)
{
    constexpr double kMaxHostSlowdown = 0.02;
    return worst_signal(
        {{"slowest batch", double(jmt_it::done_value(r.done_line, "slowest_batch_pct")) / double(kMaxSlowestBatchPct)},
         {"reference loop", (host_speed(r.done_line) - 1) / kMaxHostSlowdown},
         {"windows' pace", windows_pace_change(r.done_line) / kMaxHostSlowdown}});
}

// Windows runs of FixedWork in mode ("linger" or "lead") with iterations timed a() calls at c_us,
// each driven by drive once the JVM is ready, the least disturbed given (windows_disturbance).
JudgedRun windows_runs(const char *mode, double c_us, int iterations,
                       const std::function<void(jmt_it::Workload &, jmt_it::RunResult &)> &drive)
{
    return least_disturbed_run(
        [&] {
            jmt_it::RunResult r;
            jmt_it::Workload java({"demo.abc.FixedWork", {std::to_string(iterations), c_us_arg(c_us), "0", mode}});
            if (java.ready())
                drive(java, r);
            return r;
        },
        windows_disturbance);
}

// FixedWork at work after its timed run (its LINGER), traced until Ctrl-C: jmethodtime measures
// what an event costs the JVM in windows after the trace with one probe detached
// (cost/probe_windows.h) and takes that out. The JVM works on only from the line the test sends
// once jmethodtime says it measures (its report's totals read by then), so the counts hold the
// timed run alone.
JudgedRun run_lingering(double c_us, int iterations)
{
    return windows_runs("linger", c_us, iterations, [](jmt_it::Workload &java, jmt_it::RunResult &r) {
        jmt_it::Child jmt({JMT_BINARY, "-p", java.pid_text(), "--json", "--package", "demo/abc"}, false);
        if (jmt_it::wait_tracing(jmt).empty())
            return;
        java.child().write_stdin("go\n", false);
        r.done_line = java.child().wait_line(false, "DONE", 120000);
        std::printf("  workload: %s\n", r.done_line.c_str());
        jmt.signal(SIGINT);
        const std::string measuring = jmt.wait_line(true, "Measuring", 30000);
        EXPECT_FALSE(measuring.empty()) << "no windows after the trace: " << jmt.drain(true, 1000);
        java.child().write_stdin("linger\n", false);
        r.jmt_exit = jmt.wait_exit(60000);
        java.child().write_stdin("stop\n", true);
        // The host's pace in the windows, which the JVM timed while they ran, beside DONE's.
        const std::string lingered = java.child().wait_line(false, "LINGERED", 30000);
        EXPECT_FALSE(lingered.empty()) << "FixedWork did not say how fast the host ran in the windows";
        if (!lingered.empty())
            r.done_line += lingered.substr(lingered.find(' '));
        EXPECT_EQ(java.child().wait_exit(30000), 0);
        parse_report(jmt, r);
    });
}

// FixedWork calling a() before its timed run (its LEAD), traced with --cost-before until it
// exits: jmethodtime measures what an event costs the JVM in windows before the trace, loads its
// programs anew and traces; the test lets the timed run start once jmethodtime says it traces.
JudgedRun run_leading(double c_us, int iterations)
{
    return windows_runs("lead", c_us, iterations, [](jmt_it::Workload &java, jmt_it::RunResult &r) {
        jmt_it::Child jmt({JMT_BINARY, "-p", java.pid_text(), "--json", "--cost-before", "--package", "demo/abc"},
                          false);
        const std::string measuring = jmt.wait_line(true, "Measuring", 30000);
        EXPECT_NE(measuring.find("before the trace"), std::string::npos) << measuring << jmt.drain(true, 1000);
        if (jmt_it::wait_tracing(jmt).empty())
            return;
        java.child().write_stdin("go\n", true);
        r.done_line = java.child().wait_line(false, "DONE", 120000);
        std::printf("  workload: %s\n", r.done_line.c_str());
        EXPECT_EQ(java.child().wait_exit(30000), 0);
        r.jmt_exit = jmt.wait_exit(60000);
        parse_report(jmt, r);
    });
}

class ProbeWindows : public jmt_it::BpfTest {};

// Attempts of each ProbeWindows check. The windows run at another time than the trace, and this
// host's trap cost moves by a quarter between phases (its gaps' edge 0.99 or 1.25 us) that neither
// FixedWork's reference loops nor its batches see: an attempt in two or three crossed one on
// 2026-11-30, and the range then refused the windows or they misread the trace's cost. Only the
// JVM's own signals may excuse a run, so such an attempt misses and runs again; a steady error
// of the windows misses all five (kCheckAttempts, 3, for the other timing tests).
constexpr int kWindowsCheckAttempts = 5;

// What docs/accuracy.md claims of a() corrected with the windows, of its untraced time: 12% at
// U=1000, 20% at U=400.
constexpr double kWindowsToleranceU1000 = 0.12;
constexpr double kWindowsToleranceU400 = 0.20;
// Where an event costs the JVM several times a()'s own work per event, the windows' reading per
// event decides a(): each event may be off by this share of what the JVM paid for it, where that
// allows more than the tolerances above.
constexpr double kWindowsPerEventShare = 0.10;

// What both ProbeWindows tests ask of a judged run at c_us: the cost from the windows, as the JVM
// paid it within 30%, and a() corrected within kWindowsToleranceU1000 of its untraced time at
// U=1000 and kWindowsToleranceU400 at U=400, or each event within kWindowsPerEventShare of what
// the JVM paid, inside its bounds; false when there is no report. Only a run the JVM's own timings
// say the host disturbed (windows_disturbance) is held to what is claimed without the windows
// (claimed_tolerance), and only there may the range have refused them.
bool expect_windows_correct_a(const JudgedRun &judged, double c_us)
{
    const jmt_it::RunResult &r = judged.run;
    EXPECT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    if (!r.report.contains("probe_cost")) {
        ADD_FAILURE() << "no report: " << r.jmt_stderr;
        return false;
    }
    const auto &pc = r.report["probe_cost"];
    const auto &w = pc["windows"];
    const double truth = untraced_a_ns(r.done_line);
    const double paid = paid_per_event(r.done_line, truth);
    const auto &row = jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V");
    const Method a = per_call(r.report, "a");
    const auto [lo, hi] = wall_bounds_per_call(row);
    std::printf("  c() %.0f us: a() %s calls, untraced %.0f ns, corrected %.0f [%.0f, %.0f] (%.3fx); the JVM paid "
                "%.0f ns per event, the windows %s %s ns (%s per entry, %s per return, %s windows, their programs' "
                "timing %s ns taken out), the gaps' edge %s (%s in the windows)\n",
                c_us, row["calls"].dump().c_str(), truth, a.incl, lo, hi, a.incl / truth, paid,
                w["before_trace"] == true ? "before the trace" : "after the trace", w["per_event_ns"].dump().c_str(),
                w["entry_ns"].dump().c_str(), w["return_ns"].dump().c_str(), w["windows"].dump().c_str(),
                w["programs_timing_ns"].dump().c_str(), pc["gaps"]["edge_ns"].dump().c_str(),
                w["gaps_edge_ns"].dump().c_str());
    EXPECT_EQ(w["windows"], 4 * jmt::kProbeWindowCycles);
    const bool disturbed = judged.disturbance > 1;
    if (disturbed)
        std::printf("  NOTE: every attempt disturbed by the JVM's own timings: held to the claim without windows "
                    "(%s)\n",
                    pc["range"]["paid_not_measured"].dump().c_str());
    if (!disturbed || pc["source"] != "gaps") {
        EXPECT_EQ(pc["source"], "windows") << w.dump() << " " << pc["range"]["paid_not_measured"].dump();
        EXPECT_NEAR(w["per_event_ns"].get<double>(), paid, 0.3 * paid) << "the windows against the JVM's timing";
    }
    const double claimed = disturbed ? claimed_tolerance(a.events, truth, paid)
                                     : std::max((c_us < 5 ? kWindowsToleranceU400 : kWindowsToleranceU1000) * truth,
                                                a.events * kWindowsPerEventShare * paid);
    EXPECT_NEAR(a.incl, truth, claimed) << "a() corrected (" << claimed / truth << " of its untraced time allowed)";
    const Span span = untraced_span(r.done_line);
    EXPECT_LE(lo, 1.03 * span.high);
    EXPECT_GE(hi, 0.97 * span.low);
    return true;
}

// One windows check at c_us in one of kWindowsCheckAttempts attempts: FixedWork run by run
// (run_lingering or run_leading), a() corrected as expect_windows_correct_a asks, the windows
// before the trace or after it as before_trace says, then more(the judged run, its iterations).
void windows_check(double c_us, JudgedRun (*run)(double, int), bool before_trace,
                   const std::function<void(const jmt_it::RunResult &, int)> &more)
{
    one_of_attempts(
        [&] {
            const int iterations = c_us < 5 ? 20000 : 10000;
            const JudgedRun judged = run(c_us, iterations);
            ASSERT_TRUE(expect_windows_correct_a(judged, c_us));
            EXPECT_EQ(judged.run.report["probe_cost"]["windows"]["before_trace"], before_trace);
            more(judged.run, iterations);
        },
        kWindowsCheckAttempts);
}

// The A/B/C flow at U=1000 (c() 5 us) and U=400 (c() 2 us), its 16 events about a quarter and
// a half of a()'s time: with the windows' cost taken out, the corrected a() is within 12% and 20%
// of the JVM's untraced timing (kWindowsToleranceU1000, kWindowsToleranceU400) in one of
// kWindowsCheckAttempts attempts, each the least disturbed of kAttempts runs (run_lingering).
TEST_F(ProbeWindows, WhatTheJvmPaidAfterTheTraceCorrectsTheFlow)
{
    for (const double c_us : {5.0, 2.0})
        windows_check(c_us, run_lingering, false, [](const jmt_it::RunResult &r, int iterations) {
            EXPECT_EQ(jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V")["calls"], iterations)
                << "calls after the report's totals were read";
        });
}

// A JVM that exits with its trace, a batch job: no windows after the trace can run, and
// --cost-before measures them before it. The A/B/C flow at U=1000 and U=400 as above, the
// windows before the trace, the JVM then at the same work: a() within 12% at U=1000 and 20% at
// U=400.
TEST_F(ProbeWindows, BeforeTheTraceCorrectTheFlowOfAJvmThatExits)
{
    for (const double c_us : {5.0, 2.0})
        windows_check(c_us, run_leading, true, [](const jmt_it::RunResult &r, int iterations) {
            // The timed run, and the lead's calls between the new programs' attach and the test's line.
            const uint64_t calls =
                jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V")["calls"].get<uint64_t>();
            EXPECT_GE(calls, uint64_t(iterations));
            EXPECT_LE(calls, uint64_t(iterations) * 11 / 10);
            // The a() under way at the attach is left out, its b() calls after it are not.
            const uint64_t b_calls =
                jmt_it::method_row(r.report, "demo/abc/FixedWork", "b", "()V")["calls"].get<uint64_t>();
            EXPECT_GE(b_calls, 2 * calls);
            EXPECT_LE(b_calls, 2 * calls + 2);
        });
}
}  // namespace

namespace {

class Overhead : public jmt_it::BpfTest {};

// The overhead line: what the probes cost the JVM over the trace. FixedWork's traced run
// keeps its main thread on a CPU, so the JVM's CPU time covers it, and the trap time is the
// window's events at about what the JVM paid per event.
TEST_F(Overhead, TrapTimeAndTheJvmsCpuTimeAreWhatTheJvmLost)
{
    one_of_attempts([] {
        const uint64_t n = 10000;
        auto r = run_fixed_work(false);
        ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
        const auto &o = r.report.at("overhead");
        const auto &diag = r.report.at("diagnostics");
        std::printf("overhead: %s\n", o.dump().c_str());
        // Every event of the window, traced or filtered out: entries and returns as the programs saw them.
        EXPECT_EQ(o.at("events").get<uint64_t>(),
                  diag.at("entries").get<uint64_t>() + diag.at("returns").get<uint64_t>());
        EXPECT_EQ(o.at("traced_events").get<uint64_t>(), 2 * diag.at("traced_calls").get<uint64_t>());
        EXPECT_GE(o.at("traced_events").get<uint64_t>(), kEventsPerA * n);
        // The harness reaps the JVM as soon as it exits, often before the tool reads its CPU time at
        // the end: then the last reading counts, up to 25 ms before the exit.
        ASSERT_FALSE(o.at("jvm_cpu_ns").is_null()) << o.dump();
        const double jvm_cpu = o.at("jvm_cpu_ns").get<double>();
        const double traced_loop = double(n) * double(jmt_it::done_value(r.done_line, "traced_a_ns"));
        const double unread = o.at("jvm_cpu_early").get<bool>() ? 25e6 : 0;
        // The loop's elapsed time, less 20% for the time another task may have had its CPU.
        EXPECT_GE(jvm_cpu, 0.8 * traced_loop - unread) << "the traced loop ran on a CPU";
        EXPECT_LE(jvm_cpu, 2.0 * r.report.at("duration_ns").get<double>()) << "two CPUs at most";
        // Trap time: every event at what the JVM paid for one, within the calibration's 40%.
        const double paid = paid_per_event(r.done_line, untraced_a_ns(r.done_line));
        const double trap = o.at("trap_ns").get<double>();
        EXPECT_NEAR(trap, o.at("events").get<double>() * paid, 0.40 * o.at("events").get<double>() * paid);
        EXPECT_DOUBLE_EQ(o.at("share").get<double>(), trap / jvm_cpu);
    });
}

}  // namespace
