// What one probe event cost the JVM, from its CPU per I/O call before the
// probes and during the trace (cost/evidence.h), the JVM's work as read from
// /proc (jvm/jvm_work.h), and the likely cost it gives (cost/cost_range.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <ctime>

#include "cost/correction.h"
#include "cost/cost_range.h"
#include "cost/evidence.h"
#include "gaps.h"
#include "jvm/jvm_work.h"

namespace jmt {
namespace {

JvmWork work(uint64_t cpu_ns, uint64_t io_calls, uint64_t duration_ns = 1'000'000'000)
{
    return {cpu_ns, io_calls, duration_ns};
}

// 100 us of CPU per I/O call untraced, 500 us traced, 200 events per I/O call: 2 us per event.
TEST(PaidPerEvent, IsTheRiseInCpuPerIoCallOverTheEventsPerIoCall)
{
    std::string why;
    EXPECT_EQ(paid_per_event(work(1'000'000'000, 10'000), work(5'000'000'000, 10'000), 2'000'000, why), 2000u);
    EXPECT_TRUE(why.empty());
    // The untraced window's rate, not its amount: twice the traffic before, the same answer.
    EXPECT_EQ(paid_per_event(work(2'000'000'000, 20'000), work(5'000'000'000, 10'000), 2'000'000, why), 2000u);
    // Half the traffic traced, half the events: the same answer.
    EXPECT_EQ(paid_per_event(work(1'000'000'000, 10'000), work(2'500'000'000, 5'000), 1'000'000, why), 2000u);
}

TEST(PaidPerEvent, SaysWhyItIsNotMeasured)
{
    std::string why;
    EXPECT_EQ(paid_per_event(JvmWork{}, work(5'000'000'000, 10'000), 2'000'000, why), 0u);
    EXPECT_NE(why.find("not measured before"), std::string::npos) << why;
    EXPECT_EQ(paid_per_event(work(1'000'000'000, kMinWorkIoCalls - 1), work(5'000'000'000, 10'000), 2'000'000, why),
              0u);
    EXPECT_NE(why.find("before the trace"), std::string::npos) << why;
    EXPECT_EQ(paid_per_event(work(1'000'000'000, 10'000), work(kMinWorkCpuNs - 1, 10'000), 2'000'000, why), 0u);
    EXPECT_NE(why.find("in the trace"), std::string::npos) << why;
    // A batch JVM whose I/O is a log line now and then: its CPU per I/O call did not rise.
    EXPECT_EQ(paid_per_event(work(1'000'000'000, 1'000), work(900'000'000, 1'000), 2'000'000, why), 0u);
    EXPECT_NE(why.find("did not grow"), std::string::npos) << why;
    EXPECT_EQ(paid_per_event(work(1'000'000'000, 10'000), work(5'000'000'000, 10'000), 0, why), 0u);
}

TrapEvidence paid_evidence(uint64_t paid, uint64_t events, uint64_t traced_events)
{
    TrapEvidence e;
    e.gaps.samples = kMinGapSamples;
    e.gaps.edge_ns = 1000;
    e.calibrated = {1000, 800};
    e.jvm_ns_per_event = 3000;
    e.events = events;
    e.traced_events = traced_events;
    e.paid_ns_per_event = paid;
    return e;
}

// Split at the calibration's ratio (0.8): half the events traced, 1,800 ns on average:
// a traced event 2,000 ns, a filtered-out one 1,600 ns.
TEST(CostRange, TheLikelyCostIsWhatTheJvmPaidSplitAtTheCalibrationsRatio)
{
    const CostRange r = cost_range(paid_evidence(1800, 1'000'000, 500'000));
    EXPECT_EQ(r.likely_from, CostSource::Paid);
    EXPECT_EQ(r.paid_ns_per_event, 1800u);
    EXPECT_EQ(r.likely.traced_event_ns, 2000u);
    EXPECT_EQ(r.likely.rejected_event_ns, 1600u);
    EXPECT_EQ(r.hi.traced_event_ns, 3000u);  // the ends stay what they were
    EXPECT_EQ(r.lo.traced_event_ns, 1000u - 1000 / 32);
    // A traced event's share above the top: the top, and the filtered-out ones the rest of the average.
    const CostRange top = cost_range(paid_evidence(2900, 1'000'000, 500'000));
    EXPECT_EQ(top.likely.traced_event_ns, 3000u);
    EXPECT_EQ(top.likely.rejected_event_ns, 2800u);
}

TEST(CostRange, APaidCostOutsideTheRangeIsNotTaken)
{
    const CostRange low = cost_range(paid_evidence(500, 1'000'000, 500'000));  // under the gaps' edge
    EXPECT_EQ(low.likely_from, CostSource::Gaps);
    EXPECT_EQ(low.likely.traced_event_ns, 1250u);
    EXPECT_NE(low.paid_why.find("outside the range"), std::string::npos) << low.paid_why;
    const CostRange high = cost_range(paid_evidence(3100, 1'000'000, 500'000));  // over the JVM's CPU per event
    EXPECT_EQ(high.likely_from, CostSource::Gaps);
}

// The widest row: 1,000 calls of 1,000 events (all traced) and 2.1 ms of raw CPU each; the I/O
// threads' untraced CPU for the window is 0.6 s. At 2,000 ns per event it would keep 0.1 s, less
// than a third of 0.6 s: the cost is lowered until it keeps 0.2 s, 1,900 ns.
TEST(CostRange, TheWidestRowKeepsAThirdOfTheUntracedCpu)
{
    TrapEvidence e = paid_evidence(2000, 2'000'000, 2'000'000);
    e.widest.calls = 1000;
    e.widest.events_incl = 1'000'000;
    e.widest.traced_incl = 1'000'000;
    e.widest.cpu_incl_ns = 2'100'000'000;
    e.untraced_cpu_ns = 600'000'000;
    const CostRange r = cost_range(e);
    EXPECT_TRUE(r.paid_capped);
    EXPECT_EQ(r.likely.traced_event_ns, 1900u);
    // Its raw time holds more than the traps: nothing lowered.
    e.widest.cpu_incl_ns = 2'300'000'000;
    EXPECT_FALSE(cost_range(e).paid_capped);
    EXPECT_EQ(cost_range(e).likely.traced_event_ns, 2000u);
    // Never below the range's low end.
    e.widest.cpu_incl_ns = 900'000'000;
    EXPECT_EQ(cost_range(e).likely.traced_event_ns, 1000u - 1000 / 32);
}

// A window of a server: 100 us of CPU per I/O call untraced, 1.1 ms traced, 500 events per I/O
// call, all of them inside the adapter's calls: 2,000 ns per event paid, and the adapter (the
// widest row) keeps more than a third of 100 us per I/O call, so nothing is lowered.
Profile server_window()
{
    Profile p;
    p.corrected = true;
    p.calibrated_cost = {1000, 1000};
    p.gap_hist.assign(JMT_GAP_BUCKETS, 0);
    p.untraced_work = work(100'000'000, 1'000);
    p.traced_work = work(1'100'000'000, 1'000);
    p.overhead.events = 500'000;
    p.overhead.traced_events = 500'000;
    p.overhead.jvm_cpu_ns = 1'200'000'000;
    MethodRow adapter, getter;
    adapter.method = "service";
    adapter.stats.calls = 250;
    adapter.stats.events_incl = adapter.stats.traced_incl = 500'000;
    adapter.stats.wall_incl_ns = 1'200'000'000;
    adapter.stats.cpu_incl_ns = 1'050'000'000;
    getter.method = "get";
    getter.stats.calls = 1000;
    getter.stats.events_incl = getter.stats.traced_incl = 1000;
    getter.stats.wall_incl_ns = getter.stats.cpu_incl_ns = 2'100'000;
    p.methods = {getter, adapter};
    return p;
}

TEST(TrapEvidence, GathersWhatTheJvmPaidAndTheWidestRow)
{
    const TrapEvidence e = gather_evidence(server_window(), 2);
    EXPECT_EQ(e.paid_ns_per_event, 2000u);
    EXPECT_EQ(e.widest.calls, 250u);
    EXPECT_EQ(e.untraced_cpu_ns, 100'000'000u);  // 100 us per I/O call x the window's 1,000
}

// On a host whose traps cost 6 us, the traps are nearly all of the JVM's CPU time, and what it
// paid comes out a hair above /proc/PID/stat's ticks (7,919 ns against 7,908 seen): the I/O
// threads' own CPU time (schedstat) is then the top, and what the JVM paid is taken.
TEST(TrapEvidence, TheIoThreadsCpuTimeRaisesALaggingTop)
{
    Profile p = server_window();
    p.overhead.jvm_cpu_ns = 900'000'000;  // (0.9 s + two ticks) / 500,000 events: 1,840 ns
    const TrapEvidence e = gather_evidence(p, 2);
    EXPECT_EQ(e.jvm_ns_per_event, 2200u);  // the I/O threads' 1.1 s over 500,000 events
    EXPECT_EQ(cost_range(e).likely_from, CostSource::Paid);
    EXPECT_EQ(cost_range(e).likely.traced_event_ns, 2000u);
    // The ticks read more: they stay the top.
    p.overhead.jvm_cpu_ns = 1'200'000'000;
    EXPECT_EQ(gather_evidence(p, 2).jvm_ns_per_event, 2440u);
}

TEST(CorrectProfile, TakesOutWhatTheJvmPaid)
{
    Profile p = server_window();
    correct_profile(p, {}, 2);
    EXPECT_EQ(p.cost_source, CostSource::Paid);
    EXPECT_EQ(p.probe_cost.traced_event_ns, 2000u);
    EXPECT_EQ(p.methods[1].stats.cpu_incl_ns, 50'000'000u);  // 1.05 s less 500,000 x 2,000 ns
    EXPECT_EQ(p.methods[1].stats.wall_incl_ns, 200'000'000u);
    // The adapter's raw time a little smaller: it would keep 16.7 ms, under a third of the
    // untraced 100 ms; the cost is lowered until it keeps 33.3 ms.
    p = server_window();
    p.methods[1].stats.cpu_incl_ns = 1'016'666'667;
    correct_profile(p, {}, 2);
    EXPECT_TRUE(p.cost_range.paid_capped);
    EXPECT_NEAR(static_cast<double>(p.methods[1].stats.cpu_incl_ns), 33'333'333.0, 2'000'000.0);
}

TEST(JvmWork, ProcTextsParse)
{
    EXPECT_EQ(parse_io_calls("rchar: 10\nwchar: 20\nsyscr: 7\nsyscw: 5\nread_bytes: 0\n"), 12u);
    EXPECT_FALSE(parse_io_calls("rchar: 10\nsyscr: 7\n").has_value());
    EXPECT_EQ(parse_schedstat_ns("123456789 2000 17\n"), 123456789u);
    EXPECT_FALSE(parse_schedstat_ns("").has_value());
    EXPECT_TRUE(is_compiler_thread("C2 CompilerThre\n"));
    EXPECT_TRUE(is_compiler_thread("C1 CompilerThre"));
    EXPECT_FALSE(is_compiler_thread("http-nio-8080-e"));
}

// Only threads that made I/O calls count; a new thread counts from 0, a gone one is lost.
TEST(JvmWork, IsTheIoThreadsCpuAndIoBetweenTwoReadings)
{
    WorkReading before, after;
    before.at_ns = 1'000;
    after.at_ns = 5'000;
    before.threads[10] = {100, 4};
    after.threads[10] = {700, 10};  // I/O: 600 ns, 6 calls
    before.threads[11] = {100, 4};
    after.threads[11] = {900, 4};  // CPU only (a GC or timer thread): left out
    after.threads[12] = {50, 1};   // new: 50 ns, 1 call
    before.threads[13] = {5, 5};   // gone
    const JvmWork w = work_between(before, after);
    EXPECT_EQ(w.cpu_ns, 650u);
    EXPECT_EQ(w.io_calls, 7u);
    EXPECT_EQ(w.duration_ns, 4'000u);
}

uint64_t monotonic()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// This process read from /proc: 300 writes to /dev/null and a spin show in its next window.
TEST(JvmWork, TheMeterReadsAProcesssThreads)
{
    WorkMeter meter({getpid()});
    EXPECT_EQ(meter.next(monotonic()).duration_ns, 0u);  // the first reading starts the first window
    FILE *null = fopen("/dev/null", "w");
    ASSERT_NE(null, nullptr);
    for (int i = 0; i < 300; i++) {
        fputc('x', null);
        fflush(null);
    }
    fclose(null);
    // 20 ms on a CPU, however long that takes on a loaded host.
    const auto cpu_now = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
    };
    const uint64_t spin_until = cpu_now() + 20'000'000;
    while (cpu_now() < spin_until) {
    }
    const JvmWork w = meter.next(monotonic());
    EXPECT_GE(w.io_calls, 300u);
    // The spin's 20 ms, less what schedstat has not added yet of the running thread (up to a tick).
    EXPECT_GE(w.cpu_ns, 15'000'000u);
    EXPECT_GT(w.duration_ns, 20'000'000u);
    EXPECT_EQ(WorkMeter({999'999'999}).next(monotonic()).io_calls, 0u);  // no such process: nothing
}

}  // namespace
}  // namespace jmt
