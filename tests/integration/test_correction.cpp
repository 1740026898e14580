// Times corrected for the probes' own cost: on a fixed-work A/B/C flow
// whose c() takes a few microseconds, a few times one probe event's cost, the
// corrected inclusive times match the JVM's own untraced timing; the raw ones do not.
//
// The JVM also times its traced run, so the test knows what one event really
// cost this JVM during the trace ("paid"): (traced a() - untraced a()) / 16
// events per a(). That separates the two things the correction rests on:
// - attribution: each frame holds exactly its events' cost (a frame of k
//   events measures its untraced time plus k x paid);
// - calibration: the sampler's cost is close to what the JVM paid.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <utility>

#include <csignal>

#include "cost/cost_range.h"
#include "cost/probe_windows.h"
#include "harness.h"

namespace {

constexpr double kEventsPerA = 16;  // entries and returns of a(), its 2 b() and its 5 c()

struct Method {
    double incl = 0;    // ns per call, as reported
    double cpu = 0;     // on-CPU ns per call, as reported
    double events = 0;  // probe events inside one call
};

Method per_call(const nlohmann::json &report, const char *name)
{
    const auto &row = jmt_it::method_row(report, "demo/abc/FixedWork", name, "()V");
    const double calls = row["calls"].get<double>();
    EXPECT_EQ(row["events_incl"], row["traced_events_incl"]) << name << ": every event is a traced one";
    return {row["wall_incl_ns"].get<double>() / calls, row["cpu_incl_ns"].get<double>() / calls,
            row["events_incl"].get<double>() / calls};
}

// A run in which the host took the CPU away from the JVM for tens of ms measures the
// host, not the tracer: the stall lands in whichever frames were open and in the JVM's
// own timing of the traced run (seen once: "one event cost the JVM 1945 ns", twice the
// usual, with b() and c() at their usual cost). FixedWork times its traced run in 20
// batches; a run whose slowest batch is over kMaxSlowestBatchPct of the median one, or
// disturbed otherwise, is run again, up to kAttempts runs in all, and the least disturbed one
// is judged (least_disturbed_run).
constexpr int kAttempts = 3;
constexpr uint64_t kMaxSlowestBatchPct = 130;

// How much longer the host itself took for the same register-only loop during the traced run
// than beside the untraced timing (FixedWork's ref_ns, traced_ref_ns): 1.05 when another tenant of
// the core or the CPU's clock made everything 5% slower, which the untraced times do not know.
double host_speed(const std::string &done_line)
{
    const double before = double(jmt_it::done_value(done_line, "ref_ns"));
    const double during = double(jmt_it::done_value(done_line, "traced_ref_ns"));
    const double speed = before > 0 && during > 0 ? during / before : 1.0;
    std::printf("  the host ran the reference loop in %.0f ns before the trace, %.0f ns during it (x%.3f)\n", before,
                during, speed);
    return speed;
}

// The JVM's own untraced time per a(), at the host's speed during the trace (speed: host_speed's,
// which prints it; the one-argument form reads it), ns.
double untraced_a_ns(const std::string &done_line, double speed)
{
    return speed * double(jmt_it::done_value(done_line, "a_ns"));
}
double untraced_a_ns(const std::string &done_line) { return untraced_a_ns(done_line, host_speed(done_line)); }

// What one probe event cost the JVM during the trace by its own timing of a():
// (traced a() - untraced a()) / kEventsPerA, ns.
double paid_per_event(const std::string &done_line, double untraced_a)
{
    return (double(jmt_it::done_value(done_line, "traced_a_ns")) - untraced_a) / kEventsPerA;
}

// The worst of a run's signals of disturbance, each over its limit (over 1: disturbed), printed with its name.
double worst_signal(std::initializer_list<std::pair<const char *, double>> signals)
{
    const auto &worst = *std::max_element(signals.begin(), signals.end(),
                                          [](const auto &a, const auto &b) { return a.second < b.second; });
    std::printf("  the host's disturbance of this run: %.2f of the most a judged run may have (%s)\n", worst.second,
                worst.first);
    return worst.second;
}

// How far the host disturbed a traced run: a slow batch (over kMaxSlowestBatchPct of the median
// one), or, when the range rests on the gaps, an untraced timing that puts less than 97% of one
// trap on an event (the JVM cannot pay less than the gaps' edge, one trap with no Java code: its
// untraced timing was taken in a slow spell of the host; the edge itself, not the range's low end a
// bucket under it: a run whose JVM paid 768 ns per event by its own timing, under an 800 ns edge,
// failed the U=400 test by 10 ns of 3,580).
double trace_disturbance(const jmt_it::RunResult &r)
{
    const double edge = r.report["probe_cost"]["gaps"]["edge_ns"].get<double>();
    const double paid = paid_per_event(r.done_line, untraced_a_ns(r.done_line));
    const bool on_gaps = r.report["probe_cost"]["range"]["basis"] == "gaps";
    return worst_signal(
        {{"slowest batch", double(jmt_it::done_value(r.done_line, "slowest_batch_pct")) / double(kMaxSlowestBatchPct)},
         {"untraced timing", !on_gaps   ? 0
                             : paid > 0 ? 0.97 * edge / paid
                                        : 2.0}});
}

// A run the test judges, and how far the host disturbed it.
struct JudgedRun {
    jmt_it::RunResult run;
    double disturbance = 0;
};

// Runs run_once until a run is not disturbed (disturbance at most 1), up to kAttempts times, and
// gives the least disturbed (a run in a noisy hour had judged the last of three, its trace 24%
// slower by its gaps' edge than its windows, where the first had read the reference loop at the
// same speed in the trace as before it). A run without a report is given at once.
JudgedRun least_disturbed_run(const std::function<jmt_it::RunResult()> &run_once,
                              const std::function<double(const jmt_it::RunResult &)> &disturbance)
{
    JudgedRun best;
    for (int attempt = 1; attempt <= kAttempts; attempt++) {
        jmt_it::RunResult r = run_once();
        if (!r.report.contains("probe_cost"))
            return {std::move(r), 0};
        const double d = disturbance(r);
        if (attempt == 1 || d < best.disturbance)
            best = {std::move(r), d};
        if (best.disturbance <= 1)
            break;
        std::printf("  NOTE: the host disturbed this run; running it again\n");
    }
    return best;
}

struct Bounds {
    double lo = 0, hi = 0;  // ns per call
};

// A row's elapsed inclusive time per call at either end of its bounds.
Bounds wall_bounds_per_call(const nlohmann::json &row)
{
    const double calls = row["calls"].get<double>();
    return {row["bounds"]["wall_incl_ns"][0].get<double>() / calls,
            row["bounds"]["wall_incl_ns"][1].get<double>() / calls};
}

// FixedWork's c() argument: its untraced time, us.
std::string c_us_arg(double c_us)
{
    char arg[32];
    std::snprintf(arg, sizeof arg, "%.2f", c_us);
    return arg;
}

// c_us: c()'s untraced time; 5 us makes a() about 67 us, its 16 events about a quarter of it
// at 1 us per event (the A/B/C flow at U=1000 in docs/accuracy.md).
// sorts_per_ten_a: FixedWork's cheap JDK calls beside a() (its SORTS_PER_TEN_A).
jmt_it::RunResult run_fixed_work(bool raw, double c_us = 5, int sorts_per_ten_a = 0)
{
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.abc.FixedWork";
    const std::string c_arg = c_us_arg(c_us);
    spec.jvm.args = {c_us < 5 ? "20000" : "10000", c_arg};  // about 1 s of traced calls
    if (sorts_per_ten_a > 0)
        spec.jvm.args = {sorts_per_ten_a > 10 ? "300" : "2000", c_arg, std::to_string(sorts_per_ten_a)};
    spec.jmt_args = {"--package", "demo/abc"};
    if (raw)
        spec.jmt_args.push_back("--raw");
    return least_disturbed_run([&] { return jmt_it::run_traced(spec); }, trace_disturbance).run;
}

// How far a corrected time with `events` probe events inside may lie from the JVM's untraced
// time (truth, ns): FixedWork makes no I/O, so what the JVM paid is not measured and the likely
// cost is the gaps' edge plus its refill, a share that moved from 4% to 44% of the edge between
// runs on one host. Its events may hold that refill's width more or less than was taken out,
// and the JVM's own timing moves 3% between batches. Where that timing puts less on an event
// (paid, ns) than the range's low end, one trap, the untraced timing is that much too long per
// event, and that is allowed too (a CI run at 8 us per event: the JVM paid 7,789 ns under a low
// end of 7,936 in all three attempts, and a() came out 0.939x, 13.0 us off of 12.8 allowed).
double refill_allowance(const nlohmann::json &report, double events, double truth, double paid)
{
    const auto &pc = report["probe_cost"];
    const double edge = pc["gaps"]["edge_ns"].get<double>();
    const double refill = double(jmt::edge_plus_refill(uint64_t(edge))) - edge;
    const double short_of_a_trap = std::max(0.0, pc["range"]["traced_event_ns"][0].get<double>() - paid);
    std::printf("  the gaps' edge %.0f ns, its refill %.0f ns (likely cost from %s); the untraced timing puts %.0f "
                "ns less than one trap on an event\n",
                edge, refill, pc["source"].dump().c_str(), short_of_a_trap);
    return 0.03 * truth + (pc["source"] == "gaps" ? events * refill : 0) + events * short_of_a_trap;
}

class Correction : public jmt_it::BpfTest {};

TEST_F(Correction, CorrectedTimesMatchUntracedTimesRawOnesDoNot)
{
    for (bool raw : {false, true}) {
        SCOPED_TRACE(raw ? "--raw" : "corrected");
        auto r = run_fixed_work(raw);
        ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
        EXPECT_EQ(r.report["times"], raw ? "raw" : "corrected");
        const char *names[] = {"a", "b", "c"};
        // The JVM's untraced times, at the speed the host itself ran during the trace (the
        // reference loop makes no call, so no probe touches it).
        const double speed = host_speed(r.done_line);
        const double truth[] = {speed * double(jmt_it::done_value(r.done_line, "a_ns")),
                                speed * double(jmt_it::done_value(r.done_line, "b_ns")),
                                speed * double(jmt_it::done_value(r.done_line, "c_ns"))};
        const double paid = paid_per_event(r.done_line, truth[0]);
        const double cost = r.report["probe_cost"]["traced_event_ns"].get<double>();
        const Method m[] = {per_call(r.report, "a"), per_call(r.report, "b"), per_call(r.report, "c")};
        const auto &pc = r.report["probe_cost"];
        std::printf("%s: one event cost the JVM %.0f ns, taken out %.0f ns (%s), calibrated at %s ns (%s samples), "
                    "range %s\n",
                    raw ? "raw" : "corrected", paid, cost, pc["source"].dump().c_str(),
                    pc["calibrated_traced_event_ns"].dump().c_str(), pc["calibration_samples"].dump().c_str(),
                    pc["range"]["traced_event_ns"].dump().c_str());
        // The A/B/C flow: a() encloses 2 b() and 1 c(), b() encloses 2 c(); a frame holds the
        // events of its callees and its own return.
        EXPECT_EQ(m[0].events, 15);
        EXPECT_EQ(m[1].events, 5);
        EXPECT_EQ(m[2].events, 1);
        ASSERT_GT(paid, 100.0) << r.done_line << ": a probe event costs a trap into the kernel";
        for (int i = 0; i < 3; i++) {
            const double measured = m[i].incl + (raw ? 0 : m[i].events * cost);  // as the probes saw it
            std::printf("  %s(): untraced %.0f ns, measured %.0f, corrected %.0f, with the cost paid %.0f\n", names[i],
                        truth[i], measured, m[i].incl, measured - m[i].events * paid);
            // Attribution, within the 10% the JVM's own timing moves between its batches.
            EXPECT_NEAR(measured - m[i].events * paid, truth[i], 0.10 * truth[i]) << names[i];
            if (raw) {
                EXPECT_EQ(m[i].incl, measured);
                // c() holds one event of about 20% of its time, a() and b() more.
                EXPECT_GT(m[i].incl - truth[i], 0.5 * m[i].events * paid) << names[i] << ": raw times keep the cost";
            } else {
                // The attribution's few %, plus the calibration's error: one event is 20% of c().
                EXPECT_NEAR(m[i].incl, truth[i], 0.20 * truth[i]) << names[i] << "() corrected";
                // The bounds hold the JVM's own untraced time (give or take the 3% its own
                // timing moves between batches), and are at most half the probe time taken out.
                const auto &row = jmt_it::method_row(r.report, "demo/abc/FixedWork", names[i], "()V");
                const double calls = row["calls"].get<double>();
                const auto [lo, hi] = wall_bounds_per_call(row);
                std::printf("  %s(): bounds %.0f to %.0f ns per call\n", names[i], lo, hi);
                EXPECT_LE(lo, m[i].incl) << names[i];
                EXPECT_GE(hi, m[i].incl) << names[i];
                EXPECT_LE(lo, 1.03 * truth[i]) << names[i] << "(): the bounds hold the untraced time";
                EXPECT_GE(hi, 0.97 * truth[i]) << names[i] << "(): the bounds hold the untraced time";
                // As wide as the range (its events between the gaps' edge and the JVM's CPU per
                // event), less what the low end cuts off: it takes out at most the row's on-CPU time
                // (the high end's on-CPU time: what is left of it at the range's low end).
                const auto &range = r.report["probe_cost"]["range"]["traced_event_ns"];
                const double cpu_hi = row["bounds"]["cpu_incl_ns"][1].get<double>() / calls;
                const double width = std::min(m[i].events * (range[1].get<double>() - range[0].get<double>()), cpu_hi);
                EXPECT_NEAR(hi - lo, width, 0.01 * width + 2) << names[i];
            }
        }
        // The traps cost the JVM with --raw too: the overhead line's trap time is the events at
        // the measured range's likely cost, within 40% of what the JVM paid (when the host did
        // not disturb the run: a stall inflates what the JVM "paid", not the traps).
        const double events = r.report["overhead"]["events"].get<double>();
        EXPECT_GT(r.report["overhead"]["trap_ns"].get<double>(), 0) << r.report["overhead"].dump();
        if (jmt_it::done_value(r.done_line, "slowest_batch_pct") <= kMaxSlowestBatchPct)
            EXPECT_NEAR(r.report["overhead"]["trap_ns"].get<double>(), events * paid, 0.40 * events * paid)
                << r.report["overhead"].dump();
        if (raw) {
            // --raw takes nothing out, but still calibrates: the overhead line prices the traps.
            EXPECT_EQ(r.report["probe_cost"]["traced_event_ns"].get<uint64_t>(), 0u);
            EXPECT_EQ(r.report["probe_cost"]["rejected_event_ns"].get<uint64_t>(), 0u);
            EXPECT_GT(r.report["probe_cost"]["calibrated_traced_event_ns"].get<uint64_t>(), 0u)
                << r.report["probe_cost"].dump();
            EXPECT_GT(r.report["probe_cost"]["calibration_samples"].get<uint64_t>(), 1u)
                << r.report["probe_cost"].dump();
        }
        if (!raw) {
            // The JVM pays 750 to 1250 ns per event from one run to the next on this VM, while the
            // calibration's own probes cost 860 to 990 ns: 40% catches a calibration of something else.
            EXPECT_NEAR(cost, paid, 0.40 * paid) << "the calibration against what the JVM paid";
            // On-CPU time is corrected the same way (the work never blocks).
            EXPECT_NEAR(m[0].cpu, truth[0], 0.20 * truth[0]) << "a() on-CPU, corrected";
            // The range holds what the JVM paid per event: from the gaps' edge to its CPU per event.
            const auto &range = r.report["probe_cost"]["range"];
            EXPECT_GE(range["traced_event_ns"][1].get<double>(), range["jvm_cpu_ns_per_event"].get<double>())
                << range.dump();
            EXPECT_LE(range["traced_event_ns"][0].get<double>(), 1.03 * paid) << range.dump();
            EXPECT_GE(range["traced_event_ns"][1].get<double>(), 0.97 * paid) << range.dump();
            // Traps a quarter of a(): the aim is 5% (docs/accuracy.md, U=1000).
            const double allowed = refill_allowance(r.report, m[0].events, truth[0], paid);
            std::printf("  a() corrected / untraced: %.3f (traps %.2fx its body at %.0f ns per event; within "
                        "%.1f%% allowed)\n",
                        m[0].incl / truth[0], m[0].events * paid / truth[0], paid, 100 * allowed / truth[0]);
            EXPECT_NEAR(m[0].incl, truth[0], allowed) << "a(), traps a quarter of its time";
        }
    }
}

// The A/B/C flow at U=400 (docs/accuracy.md): a() sized from the event cost this host shows so
// that its 15 events inside cost about 0.6 of its body; the corrected a() near the JVM's own
// untraced timing (refill_allowance), its bounds around it.
TEST_F(Correction, TrapsHalfOfABodyStillCorrectWithinTheRefillsWidth)
{
    const auto probe = run_fixed_work(false);
    ASSERT_EQ(probe.jmt_exit, 0) << probe.jmt_stderr;
    const double edge = probe.report["probe_cost"]["range"]["traced_event_ns"][0].get<double>();
    const double a5 = double(jmt_it::done_value(probe.done_line, "a_ns"));  // a() at c() = 5 us
    const double c_us = std::max(0.3, 15 * edge / 0.6 / (a5 / 5));
    auto r = run_fixed_work(false, c_us);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    const double truth = untraced_a_ns(r.done_line);
    const double paid = paid_per_event(r.done_line, truth);
    const Method a = per_call(r.report, "a");
    const auto [lo, hi] = wall_bounds_per_call(jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V"));
    std::printf("  c() %.2f us: a() untraced %.0f ns, corrected %.0f [%.0f, %.0f] (%.3fx); traps %.2fx its body; "
                "the JVM paid %.0f ns per event, the gaps' edge %.0f, taken out %s\n",
                c_us, truth, a.incl, lo, hi, a.incl / truth, a.events * paid / truth, paid,
                r.report["probe_cost"]["gaps"]["edge_ns"].get<double>(),
                r.report["probe_cost"]["traced_event_ns"].dump().c_str());
    // The aim is 10% (docs/accuracy.md, U=400).
    EXPECT_NEAR(a.incl, truth, refill_allowance(r.report, a.events, truth, paid)) << "a() corrected";
    EXPECT_LE(lo, 1.03 * truth);
    EXPECT_GE(hi, 0.97 * truth);
}

// The JVM's CPU time per event bounds its average event only. Beside a sort's cheap JDK calls
// (ten sorts per a(), each about 1,400 events with almost no code between them: some 300 times
// a()'s CPU time) that average comes near the gaps' edge, while a()'s events, in code that
// refills more after each trap, cost the JVM more (1.20 to 1.48 us, against an average of 0.99 to
// 1.16 us and an edge of 1.01 to 1.09 us). The top is then the trap plus its most refill, and
// a()'s bounds still hold its untraced time (with the average as the top: [1.10x, 1.12x]).
TEST_F(Correction, BoundsHoldWhenCheapEventsMakeMostOfTheTrace)
{
    auto r = run_fixed_work(false, 2, 100);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    const double truth = untraced_a_ns(r.done_line);
    const double paid = paid_per_event(r.done_line, truth);
    const Method a = per_call(r.report, "a");
    const auto &row = jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V");
    EXPECT_EQ(row["calls"], 300);
    const auto [lo, hi] = wall_bounds_per_call(row);
    const auto &range = r.report["probe_cost"]["range"];
    const double edge = r.report["probe_cost"]["gaps"]["edge_ns"].get<double>();
    const double average = range["jvm_cpu_ns_per_event"].get<double>();
    const double top = range["traced_event_ns"][1].get<double>();
    std::printf("  a() untraced %.0f ns, corrected %.0f [%.0f, %.0f] (%.3fx); the JVM paid %.0f ns per event in "
                "a(), %.0f on average, the gaps' edge %.0f, the top %.0f (%s)\n",
                truth, a.incl, lo, hi, a.incl / truth, paid, average, edge, top, range["top"].dump().c_str());
    // The sorts' events are most of the trace's: the JVM's average is near one trap.
    const auto &o = r.report["overhead"];
    EXPECT_GT(o["events"].get<double>(), 10 * o["traced_events"].get<double>()) << o.dump();
    EXPECT_GE(top, average);
    const double one_event = edge + double(jmt::refill_bound_ns(uint64_t(edge)));
    EXPECT_GE(top, one_event);
    EXPECT_EQ(range["top"], average >= one_event ? "jvm_cpu" : "trap_and_refill");
    EXPECT_LE(lo, 1.03 * truth) << "a()'s events cost the JVM more than its average event";
    EXPECT_GE(hi, 0.97 * truth);
    EXPECT_NEAR(a.incl, truth, refill_allowance(r.report, a.events, truth, paid)) << "a() corrected";
}

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

// How far the host disturbed a windows run, as the largest of its signals over its limit (over 1:
// disturbed). As in trace_disturbance: a slow batch, or an untraced timing that puts less than 97%
// of one trap on an event (whatever the range rests on); a host in another phase in the
// trace than in the windows (their gaps' edges over 10% apart: the JVM's timing of the traced run, the
// reference, then holds another cost per event than the windows); and, the same test as the
// reference's, windows that put less than 97% of one trap of their own gaps on an event (measured
// before the trace's edge was added: 638 ns at a 960 ns edge in a CI run whose host was slow
// throughout, where the JVM paid 1,194 ns); and a host whose register-only reference loop ran over 2%
// slower in the traced run than beside the untraced timing: a slow phase in the trace alone, which its
// gaps' edge need not show (a CI run: the loop 2.9% slower, the edge 800 ns in the trace and 784 ns in
// the windows, the JVM paying 1,110 ns per event against the windows' 782 ns; 1 in 8 runs of the day
// had such a trace).
double windows_disturbance(const jmt_it::RunResult &r)
{
    constexpr double kMaxHostSlowdown = 0.02;
    const auto &w = r.report["probe_cost"]["windows"];
    const double edge = r.report["probe_cost"]["gaps"]["edge_ns"].get<double>();
    const double windows_edge = w["gaps_edge_ns"].get<double>();
    const double windows_own = w["per_event_ns"].get<double>() - (edge - windows_edge);
    const double speed = host_speed(r.done_line);
    const double paid = paid_per_event(r.done_line, untraced_a_ns(r.done_line, speed));
    return worst_signal(
        {{"slowest batch", double(jmt_it::done_value(r.done_line, "slowest_batch_pct")) / double(kMaxSlowestBatchPct)},
         {"untraced timing", paid > 0 ? 0.97 * edge / paid : 2.0},
         {"reference loop", (speed - 1) / kMaxHostSlowdown},
         {"phase", windows_edge > 0 ? std::fabs(edge - windows_edge) / (0.1 * windows_edge) : 0},
         {"windows under a trap", windows_edge <= 0 ? 0
                                  : windows_own > 0 ? 0.97 * windows_edge / windows_own
                                                    : 2.0}});
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

// What docs/accuracy.md claims of a() corrected with the windows, of its untraced time: 12% at
// U=1000, 20% at U=400. On this host kind the windows read 0.72x to 0.88x of what the JVM paid in
// the trace (it paid 1.31 to 1.49 us per event, the gaps' edge 0.96 to 0.98 us), and a() came out
// 1.05x to 1.10x and 0.97x to 1.17x, past the 5% and 10% the windows met before.
constexpr double kWindowsToleranceU1000 = 0.12;
constexpr double kWindowsToleranceU400 = 0.20;
// Where an event costs the JVM several times a()'s own work per event, the windows' reading per
// event decides a(): on a host at 6 to 8 us per event, a CI run's undisturbed windows read 0.915x
// and 1.056x of what the JVM paid, and a() came out 1.126x and 0.743x. Each event may be off by
// this share of what the JVM paid for it, where that allows more than the tolerances above.
constexpr double kWindowsPerEventShare = 0.10;

// What both ProbeWindows tests ask of a judged run at c_us: the cost from the windows, as the JVM
// paid it within 30%, and a() corrected within kWindowsToleranceU1000 of its untraced time at
// U=1000 and kWindowsToleranceU400 at U=400, inside its bounds; false when there is no report. A run the host disturbed
// whose windows the range refused, saying the host's pace moved in them (two CI runs of a noisy
// hour had all three attempts disturbed; in one, the least disturbed's windows read 708 ns per
// event where the JVM paid 1,142 ns, their own 820 ns under their gaps' edge of 944 ns), rests on
// the gaps: a() within their refill's width (refill_allowance).
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
    const std::string why = pc["range"]["paid_not_measured"].get<std::string>();
    if (judged.disturbance > 1 && pc["source"] == "gaps" && why.find("the host") != std::string::npos) {
        std::printf("  NOTE: every attempt disturbed, and the windows refused: %s\n", why.c_str());
        EXPECT_LT(w["per_event_ns"].get<double>(), pc["range"]["traced_event_ns"][0].get<double>()) << why;
        EXPECT_NEAR(a.incl, truth, refill_allowance(r.report, a.events, truth, paid)) << "a() corrected on the gaps";
    } else {
        EXPECT_EQ(pc["source"], "windows") << w.dump() << " " << why;
        const double windows_ns = w["per_event_ns"].get<double>();
        EXPECT_NEAR(windows_ns, paid, 0.3 * paid) << "the windows against the JVM's timing";
        // A judged run still disturbed: its windows saw another pace of the host than its trace, and
        // a() may be off by what they misread per event, by the JVM's own timing (a CI run: every
        // attempt's reference loop 2.5 to 7% slower in the trace; the windows 7,756 ns per event where
        // the JVM paid 7,373, a() 0.779x at U=400).
        const double misread = judged.disturbance > 1 ? a.events * std::fabs(windows_ns - paid) : 0;
        if (misread > 0)
            std::printf("  NOTE: every attempt disturbed; a() may be off by %.0f ns more, what the windows misread\n",
                        misread);
        const double per_event = a.events * kWindowsPerEventShare * paid;
        EXPECT_NEAR(a.incl, truth,
                    std::max((c_us < 5 ? kWindowsToleranceU400 : kWindowsToleranceU1000) * truth, per_event) + misread)
            << "a() corrected (the events' share: " << per_event << " ns)";
    }
    EXPECT_LE(lo, 1.03 * truth);
    EXPECT_GE(hi, 0.97 * truth);
    return true;
}

// The A/B/C flow at U=1000 (c() 5 us) and U=400 (c() 2 us), its 16 events about a quarter and
// a half of a()'s time: with the windows' cost taken out, the corrected a() is within 12% and 20%
// of the JVM's untraced timing (kWindowsToleranceU1000, kWindowsToleranceU400). With 8 cycles of windows, a() came out 0.986x to 1.027x at U=1000
// and 0.970x to 1.021x at U=400 (10 runs of both tests). In a noisy hour the trace paid more than
// the windows after it: the host ran the reference loop 2 to 4% slower in the trace than before
// it, and the JVM paid 900 to 1,110 ns per event there against 780 to 860 ns in the windows, its
// gaps' edge unmoved (a() up to 1.069x). Such runs, and those whose trace and windows saw
// different phases of the host or whose windows read less than one trap of their own gaps per
// event, are run again (run_lingering); the least disturbed of three is judged.
TEST_F(ProbeWindows, WhatTheJvmPaidAfterTheTraceCorrectsTheFlow)
{
    for (const double c_us : {5.0, 2.0}) {
        const int iterations = c_us < 5 ? 20000 : 10000;
        const JudgedRun judged = run_lingering(c_us, iterations);
        ASSERT_TRUE(expect_windows_correct_a(judged, c_us));
        const jmt_it::RunResult &r = judged.run;
        EXPECT_EQ(r.report["probe_cost"]["windows"]["before_trace"], false);
        EXPECT_EQ(jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V")["calls"], iterations)
            << "calls after the report's totals were read";
    }
}

// A JVM that exits with its trace, a batch job: no windows after the trace can run, and
// --cost-before measures them before it. The A/B/C flow at U=1000 and U=400 as above, the
// windows before the trace, the JVM then at the same work: a() within 12% at U=1000 (0.989x to
// 1.018x in 7 runs, the noisy hour's included; 0.958x and 1.064x on 2026-11-28) and 20% at U=400
// (0.977x to 1.003x; 0.979x).
TEST_F(ProbeWindows, BeforeTheTraceCorrectTheFlowOfAJvmThatExits)
{
    for (const double c_us : {5.0, 2.0}) {
        const int iterations = c_us < 5 ? 20000 : 10000;
        const JudgedRun judged = run_leading(c_us, iterations);
        ASSERT_TRUE(expect_windows_correct_a(judged, c_us));
        const jmt_it::RunResult &r = judged.run;
        EXPECT_EQ(r.report["probe_cost"]["windows"]["before_trace"], true);
        // The timed run, and the lead's calls between the new programs' attach and the test's line.
        const uint64_t calls = jmt_it::method_row(r.report, "demo/abc/FixedWork", "a", "()V")["calls"].get<uint64_t>();
        EXPECT_GE(calls, uint64_t(iterations));
        EXPECT_LE(calls, uint64_t(iterations) * 11 / 10);
        // The a() under way at the attach is left out, its b() calls after it are not.
        const uint64_t b_calls =
            jmt_it::method_row(r.report, "demo/abc/FixedWork", "b", "()V")["calls"].get<uint64_t>();
        EXPECT_GE(b_calls, 2 * calls);
        EXPECT_LE(b_calls, 2 * calls + 2);
    }
}
}  // namespace

namespace {

class Overhead : public jmt_it::BpfTest {};

// The overhead line: what the probes cost the JVM over the trace. FixedWork's traced run
// keeps its main thread on a CPU, so the JVM's CPU time covers it, and the trap time is the
// window's events at about what the JVM paid per event.
TEST_F(Overhead, TrapTimeAndTheJvmsCpuTimeAreWhatTheJvmLost)
{
    const uint64_t n = 10000;
    auto r = run_fixed_work(false);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    const auto &o = r.report.at("overhead");
    const auto &diag = r.report.at("diagnostics");
    std::printf("overhead: %s\n", o.dump().c_str());
    // Every event of the window, traced or filtered out: entries and returns as the programs saw them.
    EXPECT_EQ(o.at("events").get<uint64_t>(), diag.at("entries").get<uint64_t>() + diag.at("returns").get<uint64_t>());
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
}

}  // namespace
