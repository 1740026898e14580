// What one probe event costs the JVM, from windows after the trace with one
// probe detached (cost/probe_windows.h): the solution from each kind's least
// disturbed windows, why it is not measured, and how the header and JSON state it.
#include <utility>
#include <vector>

#include "../common/report_fixture.h"
#include "cost/cost_range.h"
#include "cost/evidence.h"
#include "cost/probe_windows.h"
#include "gaps.h"

namespace jmt {
namespace {

using report_fixture::lines_of;
using report_fixture::sample;
using report_fixture::table_of;

// A window of 10,000 traced calls of w ns of work each, every call with one
// entry and one return event (and `rejected` more pairs of filtered-out
// methods'), e and r ns per entry and return event besides the programs, and
// programs of 150 ns (entry) and 160 ns (return).
ProbeWindow window(ProbeWindowKind kind, double w, double e, double r, uint64_t rejected = 0)
{
    const uint64_t calls = 10'000, pairs = calls * (1 + rejected);
    const bool entry = kind != ProbeWindowKind::ReturnOnly, ret = kind != ProbeWindowKind::EntryOnly;
    ProbeWindow out;
    out.kind = kind;
    out.entries = entry ? pairs : 0;
    out.returns = ret ? pairs : 0;
    out.traced_calls = entry ? calls : 0;
    out.entry_prog_ns = 150 * out.entries;
    out.return_prog_ns = 160 * out.returns;
    out.cpu_ns = static_cast<uint64_t>(double(calls) * w + e * double(out.entries) + r * double(out.returns)) +
                 out.entry_prog_ns + out.return_prog_ns;
    return out;
}

// n cycles as the tool runs them, each one's first window without the programs' run time.
std::vector<ProbeWindow> cycles(int n, double w, double e, double r, uint64_t rejected = 0)
{
    std::vector<ProbeWindow> v;
    for (int i = 0; i < n; i++)
        for (ProbeWindowKind k :
             {ProbeWindowKind::Both, ProbeWindowKind::ReturnOnly, ProbeWindowKind::Both, ProbeWindowKind::EntryOnly}) {
            v.push_back(window(k, w, e, r, rejected));
            if (v.size() % 4 == 1) {
                v.back().programs_timed = false;
                v.back().cpu_ns -= v.back().entry_prog_ns + v.back().return_prog_ns;
                v.back().entry_prog_ns = v.back().return_prog_ns = 0;
            }
        }
    return v;
}

// 8 us of work per call, 700 ns per entry and 640 ns per return besides the programs (150
// and 160 ns): 850 and 800 ns with them, 825 ns per event on average.
TEST(ProbeWindows, TellAnEntrysCostFromAReturnsWithTheProgramsIncluded)
{
    const ProbeWindowsCost c = solve_probe_windows(cycles(kProbeWindowCycles, 8000, 700, 640));
    EXPECT_EQ(c.entry_ns, 850u);
    EXPECT_EQ(c.return_ns, 800u);
    EXPECT_EQ(c.per_event_ns, 825u);
    EXPECT_EQ(c.windows, uint64_t(4 * kProbeWindowCycles));
    EXPECT_TRUE(c.why.empty()) << c.why;
    // Filtered-out methods' events too, three pairs per traced call: the same costs per event.
    const ProbeWindowsCost f = solve_probe_windows(cycles(kProbeWindowCycles, 8000, 700, 640, 3));
    EXPECT_EQ(f.entry_ns, 850u);
    EXPECT_EQ(f.return_ns, 800u);
}

// Windows of each kind that ran 20% slower per call (another tenant on the core, a slow
// phase of the host) leave the figures alone while each kind keeps one undisturbed window
// (both probes: two); a kind with every window disturbed moves them.
TEST(ProbeWindows, DisturbedWindowsLeaveTheFiguresWhileEachKindHasAnUndisturbedOne)
{
    std::vector<ProbeWindow> v = cycles(kProbeWindowCycles, 8000, 700, 640);
    for (size_t i = 0; i < v.size(); i++)  // all but windows 15 to 18: entry alone, both, return alone, both
        if (i < 15 || i > 18)
            v[i].cpu_ns += v[i].cpu_ns / 5;
    ProbeWindowsCost c = solve_probe_windows(v);
    EXPECT_EQ(c.entry_ns, 850u);
    EXPECT_EQ(c.return_ns, 800u);
    // Every return-alone window disturbed: what they added reads as work per call, and
    // an entry's cost as that much less (the both-probe windows less the return alone's).
    v = cycles(kProbeWindowCycles, 8000, 700, 640);
    for (ProbeWindow &w : v)
        if (w.kind == ProbeWindowKind::ReturnOnly)
            w.cpu_ns += w.cpu_ns / 20;
    c = solve_probe_windows(v);
    EXPECT_LT(c.entry_ns, 850u - 300);
    EXPECT_EQ(c.return_ns, 800u);
}

// A host slower in the trace than in the windows after it (the trace's gaps' edge 200 ns over
// that of the both-probe windows with the programs untimed): each figure is the trace's edge
// plus the windows' cost above theirs. The windows with the programs timed do not count (their
// gaps hold the timing). Without the trace's edge, or without enough gaps in the windows, the
// figures stay as measured.
TEST(ProbeWindows, SitOnTheGapsEdgeOfTheTrace)
{
    std::vector<ProbeWindow> v = cycles(kProbeWindowCycles, 8000, 700, 640);
    for (ProbeWindow &w : v) {
        w.gap_hist.assign(JMT_GAP_BUCKETS, 0);
        if (w.kind == ProbeWindowKind::Both)
            w.gap_hist[jmt_gap_bucket(w.programs_timed ? 700 : 800)] = 1000;
    }
    const uint64_t edge = jmt_gap_bucket_low_ns(jmt_gap_bucket(800));
    ProbeWindowsCost c = solve_probe_windows(v, edge + 200);
    EXPECT_EQ(c.gaps_edge_ns, edge);
    EXPECT_EQ(c.trace_gaps_edge_ns, edge + 200);
    EXPECT_EQ(c.entry_ns, 1050u);
    EXPECT_EQ(c.return_ns, 1000u);
    EXPECT_EQ(c.per_event_ns, 1025u);
    c = solve_probe_windows(v, 0);
    EXPECT_EQ(c.per_event_ns, 825u);
    EXPECT_EQ(c.trace_gaps_edge_ns, 0u);
    EXPECT_EQ(c.programs_timing_ns, 0u);
    // The timed windows' edge 96 ns over the untimed ones': what timing the programs added to an
    // event beyond their run time (kernel.bpf_stats), which the trace does not pay, goes.
    std::vector<ProbeWindow> timed_higher = v;
    for (ProbeWindow &w : timed_higher)
        if (w.kind == ProbeWindowKind::Both && w.programs_timed) {
            w.gap_hist.assign(JMT_GAP_BUCKETS, 0);
            w.gap_hist[jmt_gap_bucket(896)] = 1000;
        }
    c = solve_probe_windows(timed_higher, edge + 200);
    const uint64_t timing = jmt_gap_bucket_low_ns(jmt_gap_bucket(896)) - edge;
    EXPECT_GE(timing, 64u);
    EXPECT_EQ(c.programs_timing_ns, timing);
    EXPECT_EQ(c.entry_ns, 1050u - timing);
    EXPECT_EQ(c.return_ns, 1000u - timing);
    // A trace edge under the windows' by more than a return costs: not a cost, with why.
    std::vector<ProbeWindow> far = v;
    for (ProbeWindow &w : far)
        if (w.kind == ProbeWindowKind::Both && !w.programs_timed)
            std::swap(w.gap_hist[jmt_gap_bucket(800)], w.gap_hist[jmt_gap_bucket(1000)]);
    c = solve_probe_windows(far, 100);
    EXPECT_EQ(c.per_event_ns, 0u);
    EXPECT_FALSE(c.why.empty());
    for (ProbeWindow &w : v)
        if (w.kind == ProbeWindowKind::Both && !w.programs_timed)
            w.gap_hist[jmt_gap_bucket(800)] = 999 / kProbeWindowCycles;  // under 1,000 gaps in all: too few
    c = solve_probe_windows(v, edge + 200);
    EXPECT_EQ(c.per_event_ns, 825u);
    EXPECT_EQ(c.gaps_edge_ns, 0u);
}

TEST(ProbeWindows, SayWhyTheyDoNotMeasure)
{
    // The JVM went quiet with the trace: the first window alone, without calls.
    ProbeWindow quiet = window(ProbeWindowKind::Both, 8000, 700, 640);
    quiet.traced_calls = 10;
    ProbeWindowsCost c = solve_probe_windows({quiet});
    EXPECT_EQ(c.per_event_ns, 0u);
    EXPECT_NE(c.why.find("too few traced calls"), std::string::npos) << c.why;
    // Work per call that changed from window to window: the probes cost nothing or less.
    std::vector<ProbeWindow> v = cycles(2, 8000, 700, 640);
    for (ProbeWindow &w : v)
        if (w.kind != ProbeWindowKind::Both)
            w.cpu_ns *= 2;
    c = solve_probe_windows(v);
    EXPECT_EQ(c.per_event_ns, 0u);
    EXPECT_NE(c.why.find("did not follow its probes"), std::string::npos) << c.why;
    // The entry-alone windows without enough traced calls (the JVM quiet after the first).
    v = cycles(kProbeWindowCycles, 8000, 700, 640);
    for (ProbeWindow &w : v)
        if (w.kind == ProbeWindowKind::EntryOnly)
            w.traced_calls = kMinProbeWindowCalls - 1;
    c = solve_probe_windows(v);
    EXPECT_EQ(c.per_event_ns, 0u);
    EXPECT_NE(c.why.find("too few traced calls"), std::string::npos) << c.why;
}

// A JVM without I/O: 2,000,000 traced events in 10 s of its CPU time (5,000 ns per event at most),
// its gaps all at edge_ns (0: none), calibrated at 900 ns a traced event.
Profile no_io_profile(uint64_t edge_ns)
{
    Profile p;
    p.gap_hist.assign(JMT_GAP_BUCKETS, 0);
    if (edge_ns)
        p.gap_hist[jmt_gap_bucket(edge_ns)] = 100'000;
    p.overhead.events = 2'000'000;
    p.overhead.traced_events = 2'000'000;
    p.overhead.jvm_cpu_ns = 10'000'000'000;
    p.calibrated_cost = {900, 700};
    return p;
}

// Without I/O to measure it by, the windows' cost is what the JVM paid; with I/O, the I/O's.
TEST(ProbeWindows, AreTheLikelyCostWhereTheJvmMakesNoIo)
{
    Profile p = no_io_profile(0);
    p.probe_windows.per_event_ns = 1200;
    TrapEvidence e = gather_evidence(p, 2);
    EXPECT_TRUE(e.paid_by_windows);
    EXPECT_EQ(e.paid_ns_per_event, 1200u);
    CostRange r = cost_range(e);
    EXPECT_EQ(r.likely_from, CostSource::Windows);
    EXPECT_EQ(r.likely.traced_event_ns, 1200u);
    // Not measured: the I/O's reason and the windows' together.
    p.probe_windows = {};
    p.probe_windows.why = "the JVM made too few traced calls after the trace";
    e = gather_evidence(p, 2);
    EXPECT_FALSE(e.paid_by_windows);
    EXPECT_NE(e.paid_why.find("; the JVM made too few traced calls after the trace"), std::string::npos) << e.paid_why;
}

// The windows' figure rests on the trace's gaps' edge and their own two (the programs timed and
// not), each known to a bucket: a figure up to two buckets under the range's low end (the edge
// less one bucket) is the low end; further under, it is refused, with why.
TEST(ProbeWindows, AFigureUnderTheLowEndByTheirEdgesBucketsIsTheLowEnd)
{
    Profile p = no_io_profile(800);
    p.probe_windows.per_event_ns = 760;
    CostRange r = cost_range(gather_evidence(p, 2));
    const uint64_t lo = r.lo.traced_event_ns;
    EXPECT_EQ(lo, 800u - 800 / 32);
    EXPECT_EQ(r.likely_from, CostSource::Windows) << r.paid_why;
    EXPECT_EQ(r.likely.traced_event_ns, lo);
    p.probe_windows.per_event_ns = lo - 2 * (lo / 32) - 1;
    r = cost_range(gather_evidence(p, 2));
    EXPECT_EQ(r.likely_from, CostSource::Gaps);
    EXPECT_NE(r.paid_why.find("outside the range"), std::string::npos) << r.paid_why;
}

// Windows refused say why from their own gaps: their own reading under one trap of their gaps
// (a CI run: 820 ns against an edge of 944 ns, 708 ns on the trace's edge of 832 ns), their edge
// over 10% off the trace's, or else the JVM's work per call.
TEST(ProbeWindows, ARefusedFigureSaysWhatTheirGapsShow)
{
    Profile p = no_io_profile(832);
    p.probe_windows.per_event_ns = 708;
    p.probe_windows.gaps_edge_ns = 944;
    p.probe_windows.trace_gaps_edge_ns = 832;
    CostRange r = cost_range(gather_evidence(p, 2));
    EXPECT_EQ(r.likely_from, CostSource::Gaps);
    EXPECT_NE(r.paid_why.find("put 708 ns on an event, outside the range: their own reading, 820 ns, is under one "
                              "trap of their gaps (944 ns): the host's pace changed"),
              std::string::npos)
        << r.paid_why;
    // Over the top (the JVM's 5,010 ns per event), the edges 13% apart: another pace in the trace.
    p.probe_windows.per_event_ns = 6000;
    p.probe_windows.gaps_edge_ns = 736;
    p.probe_windows.trace_gaps_edge_ns = 832;
    r = cost_range(gather_evidence(p, 2));
    EXPECT_EQ(r.likely_from, CostSource::Gaps);
    EXPECT_NE(r.paid_why.find("another pace in them than in the trace (their gaps' edge 736 ns, the trace's 832 ns)"),
              std::string::npos)
        << r.paid_why;
    // The edges 4% apart.
    p.probe_windows.gaps_edge_ns = 800;
    r = cost_range(gather_evidence(p, 2));
    EXPECT_EQ(r.likely_from, CostSource::Gaps);
    EXPECT_NE(r.paid_why.find("outside the range: its work per call changed"), std::string::npos) << r.paid_why;
}

// Run after a trace stopped with its JVM at work, where nothing else measures what it paid.
TEST(ProbeWindows, RunWhereTheyCanMeasureAndNothingElseDoes)
{
    Profile p;
    p.duration_ns = 1'000'000'000;
    p.overhead.events = 200'000;  // 100,000 traced calls a second: 12,000 a window
    p.overhead.traced_events = 200'000;
    const ProbeWindowsFacts at_work{false, false, true, true};
    EXPECT_TRUE(plan_probe_windows(p, at_work).run);
    // Not wanted, nothing to say: --raw, -i, or what the JVM paid measured by its I/O.
    for (const ProbeWindowsFacts &f :
         {ProbeWindowsFacts{true, false, true, true}, ProbeWindowsFacts{false, true, true, true}}) {
        const ProbeWindowsPlan plan = plan_probe_windows(p, f);
        EXPECT_FALSE(plan.run);
        EXPECT_TRUE(plan.why.empty()) << plan.why;
    }
    Profile served = p;
    served.untraced_work = {1'000'000'000, 10'000, 1'000'000'000};
    served.traced_work = {3'000'000'000, 10'000, 1'000'000'000};
    EXPECT_FALSE(plan_probe_windows(served, at_work).run);
    // Wanted, but they cannot measure: each says why.
    auto why = [&](const Profile &prof, const ProbeWindowsFacts &f) {
        const ProbeWindowsPlan plan = plan_probe_windows(prof, f);
        EXPECT_FALSE(plan.run);
        return plan.why;
    };
    EXPECT_NE(why(p, {false, false, false, true}).find("the JVM exited (--cost-before measures before the trace)"),
              std::string::npos);
    EXPECT_NE(why(p, {false, false, true, false}).find("shared"), std::string::npos);
    Profile shared = p;
    shared.shared_probes = {"bpftrace"};
    EXPECT_NE(why(shared, at_work).find("shared"), std::string::npos);
    Profile quiet = p;
    quiet.overhead.traced_events = 2 * 4000;  // 4,000 traced calls a second: 480 a window
    EXPECT_NE(why(quiet, at_work).find("too few traced calls"), std::string::npos);
}

// A profile corrected by windows' cost: 1.18 us per entry, 1.12 us per return (1.15 us per event).
Profile corrected_by_windows(uint64_t windows, uint64_t duration_ns)
{
    Profile p = sample();
    p.corrected = true;
    p.probe_cost = {1200, 1000};
    p.calibrated_cost = {900, 700};
    p.cost_range.lo = {800, 620};
    p.cost_range.hi = {5000, 5000};
    p.cost_range.likely = p.probe_cost;
    p.cost_range.paid_ns_per_event = 1150;
    p.cost_range.likely_from = CostSource::Windows;
    p.cost_source = CostSource::Windows;
    p.probe_windows.entry_ns = 1180;
    p.probe_windows.return_ns = 1120;
    p.probe_windows.per_event_ns = 1150;
    p.probe_windows.windows = windows;
    p.probe_windows.duration_ns = duration_ns;
    return p;
}

TEST(ProbeWindows, TheHeaderAndJsonSayTheCostRestsOnThem)
{
    Profile p = corrected_by_windows(16, 3'300'000'000);
    const auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 3u);
    EXPECT_NE(lines[1].find("what the JVM paid per event (1.15 us on average: 1.18 us per entry, 1.12 us per "
                            "return), measured in its own code after the trace: 16 windows in 3.30 s with both "
                            "probes, or one of them detached"),
              std::string::npos)
        << lines[1];
    EXPECT_EQ(lines[1].find("gaps' edge"), std::string::npos) << lines[1];
    // Scaled to a trace whose gaps' edge was higher than the windows'.
    p.probe_windows.gaps_edge_ns = 800;
    p.probe_windows.trace_gaps_edge_ns = 992;
    const std::string scaled = lines_of(table_of(p))[1];
    EXPECT_NE(scaled.find("one of them detached, on the trace's gaps' edge (992 ns; 800 ns in the windows)"),
              std::string::npos)
        << scaled;
    std::ostringstream json;
    write_json(json, p);
    const auto cost = nlohmann::json::parse(json.str()).at("probe_cost");
    EXPECT_EQ(cost.at("source"), "windows");
    EXPECT_EQ(cost.at("windows").at("entry_ns"), 1180);
    EXPECT_EQ(cost.at("windows").at("return_ns"), 1120);
    EXPECT_EQ(cost.at("windows").at("windows"), 16);
    EXPECT_EQ(cost.at("windows").at("gaps_edge_ns"), 800);
    EXPECT_EQ(cost.at("windows").at("trace_gaps_edge_ns"), 992);
}

}  // namespace
// --cost-before: the windows ran before the trace, which the header, the JSON and the reasons say.
TEST(ProbeWindows, BeforeTheTraceTheyAreSaidToBe)
{
    const ProbeWindowsCost cut = probe_windows_cost({}, 1'000'000, {}, true);
    EXPECT_TRUE(cut.before_trace);
    EXPECT_EQ(cut.per_event_ns, 0u);
    EXPECT_EQ(cut.why, "the windows before the trace were cut short");
    EXPECT_EQ(probe_windows_cost({}, 1'000'000, {}, false).why, "the windows after the trace were cut short");
    const ProbeWindowsCost few = solve_probe_windows({ProbeWindow{}}, 0, true);
    EXPECT_EQ(few.why.rfind("the JVM made too few traced calls before the trace", 0), 0u) << few.why;
    Profile p = corrected_by_windows(20, 4'100'000'000);
    p.probe_windows.before_trace = true;
    const auto lines = lines_of(table_of(p));
    ASSERT_GE(lines.size(), 2u);
    EXPECT_NE(lines[1].find("measured in its own code before the trace: 20 windows in 4.10 s"), std::string::npos)
        << lines[1];
    std::ostringstream json;
    write_json(json, p);
    const auto windows = nlohmann::json::parse(json.str()).at("probe_cost").at("windows");
    EXPECT_EQ(windows.at("before_trace"), true);
    EXPECT_EQ(windows.at("programs_timing_ns"), 0);
}

}  // namespace jmt
