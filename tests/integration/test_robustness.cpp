// On-CPU time, and numbers that stay right under threads, recursion,
// exceptions in every JIT mode, attaching mid-call, and thread churn.
// The workloads time themselves with the probes' cost included (deadline spins),
// so their times are compared with the tool's raw times (--raw).
#include <unistd.h>

#include <fstream>
#include <tuple>

#include "harness.h"

using jmt_it::calls_of;
using jmt_it::find_method;
using jmt_it::RunSpec;

namespace {

double ms(const nlohmann::json &row, const char *field) { return row[field].get<double>() / 1e6; }

// ms the machine spent on interrupts and on hypervisor steal (all CPUs, /proc/stat):
// time a thread can be current on its CPU without running its own code. The
// scheduler's thread CPU time (what the JVM reads) leaves it out; switch-to-switch
// on-CPU time (what the tracer measures) keeps it.
double irq_and_steal_ms()
{
    std::ifstream in("/proc/stat");
    std::string cpu;
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
    if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal))
        return 0;
    return static_cast<double>(irq + softirq + steal) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

class Robustness : public jmt_it::BpfTest {};

TEST_F(Robustness, SleepingIsElapsedNotOnCpu)
{
    RunSpec spec;
    spec.jvm.main_class = "demo.cpu.SleepSpin";
    spec.jvm.args = {"200"};
    spec.jmt_args = {"--raw", "--package", "demo/cpu"};
    // A switch-in the sched_switch program did not see (switch_unseen, which the report states:
    // "on-CPU time may be a little low") restarts the thread's on-CPU clock at its next probe, so
    // the spin's slice before it is lost. About one run in eight has one here: the exact checks
    // judge the first of up to three runs without one, and three in a row fail.
    constexpr int kRuns = 3;
    jmt_it::RunResult r;
    double interrupted_ms = 0;
    uint64_t unseen = 0;
    for (int run = 1; run <= kRuns; run++) {
        const double interrupted_before = irq_and_steal_ms();
        r = jmt_it::run_traced(spec);
        interrupted_ms = irq_and_steal_ms() - interrupted_before;
        unseen = r.report["diagnostics"]["switch_unseen"].get<uint64_t>();
        if (unseen == 0)
            break;
        std::cout << "  NOTE: run " << run << ": " << unseen
                  << " switch-ins of the traced thread were not seen (switch_unseen)" << std::endl;
    }
    ASSERT_EQ(unseen, 0u) << kRuns << " runs in a row with switch-ins the tracer did not see";
    const std::string k = "demo/cpu/SleepSpin";
    const auto *sleep = find_method(r.report, k, "sleepFor", "()V");
    const auto *spin = find_method(r.report, k, "spinFor", "()V");
    const auto *caller = find_method(r.report, k, "caller", "()V");
    ASSERT_TRUE(sleep && spin && caller) << r.report.dump(1);
    // Elapsed: each frame lies inside the JVM's own System.nanoTime window around its call (the
    // same CLOCK_MONOTONIC), so it is never longer, and shorter only by what runs between a clock
    // read and a probe: two traps of a few us, or a preemption there (2 ms, most of a time slice).
    for (const auto &[name, row, jvm_key] :
         {std::tuple{"sleepFor", sleep, "sleep_ns"}, std::tuple{"spinFor", spin, "spin_ns"},
          std::tuple{"caller", caller, "caller_ns"}}) {
        const double jvm_ms = static_cast<double>(jmt_it::done_value(r.done_line, jvm_key)) / 1e6;
        std::cout << "  " << name << ": " << ms(*row, "wall_incl_ns") << " ms elapsed, the JVM's window " << jvm_ms
                  << " ms" << std::endl;
        EXPECT_GE(jvm_ms, 200.0) << name << ": the JVM's own timing, " << r.done_line;
        EXPECT_LE(ms(*row, "wall_incl_ns"), jvm_ms + 0.001) << name << " elapsed, against the JVM's window";
        EXPECT_GE(ms(*row, "wall_incl_ns"), jvm_ms - 2.0) << name << " elapsed, against the JVM's window";
    }
    // On-CPU: a sleeping thread runs only to enter and leave the sleep (well under
    // 10 ms); a spinning thread runs all the time unless other threads take its core.
    EXPECT_LT(ms(*sleep, "cpu_incl_ns"), 10);
    EXPECT_LE(ms(*spin, "cpu_incl_ns"), ms(*spin, "wall_incl_ns"));
    const double jvm_cpu_ms = static_cast<double>(jmt_it::done_value(r.done_line, "cpu_ns")) / 1e6;
    if (jvm_cpu_ms >= 180) {
        // The JVM saw its thread on a CPU for at least 90% of the spin: so must we.
        EXPECT_GT(ms(*spin, "cpu_incl_ns"), 0.9 * 200 - 10);
    } else {
        std::cout << "  NOTE: the machine is oversubscribed (the JVM measured " << jvm_cpu_ms
                  << " ms of thread CPU for a 200 ms spin); the CPU-share floor is skipped, the exact "
                     "check below still runs"
                  << std::endl;
    }
    // The exact check: the kernel-side on-CPU time of caller() matches the thread CPU
    // time the JVM itself measured around the call, within 3% + 1 ms (the JVM's reads
    // sit just outside the traced frame, and each probe trap is charged to the thread),
    // plus the interrupt and steal time of the run (10 ms ticks), which only we count.
    EXPECT_NEAR(ms(*caller, "cpu_incl_ns"), jvm_cpu_ms, 0.03 * jvm_cpu_ms + 1 + interrupted_ms)
        << r.done_line << "; interrupt and steal time during the run: " << interrupted_ms << " ms";
    EXPECT_NEAR(ms(*caller, "cpu_incl_ns"), ms(*spin, "cpu_incl_ns") + ms(*sleep, "cpu_incl_ns"), 5);
    EXPECT_LE((*caller)["cpu_excl_ns"].get<uint64_t>(), 5'000'000u);
}

TEST_F(Robustness, ThreadsCountExactly)
{
    const int n = 40, threads = 4;
    RunSpec spec;
    spec.jvm.main_class = "demo.abc.Flow";
    spec.jvm.args = {std::to_string(n), "10", std::to_string(threads)};
    spec.jmt_args = {"--raw", "--package", "demo/abc"};
    auto r = jmt_it::run_traced(spec);
    const std::string k = "demo/abc/Flow";
    EXPECT_EQ(calls_of(r.report, k, "a", "()V"), uint64_t(threads * n));
    EXPECT_EQ(calls_of(r.report, k, "b", "()V"), uint64_t(threads * 2 * n));
    EXPECT_EQ(calls_of(r.report, k, "c", "()V"), uint64_t(threads * 5 * n));
    EXPECT_EQ(calls_of(r.report, k, "loop", "(I)V"), uint64_t(threads));
    // Per-thread stacks: each loop() frame encloses exactly its own thread's a() calls.
    const auto &loop = jmt_it::method_row(r.report, k, "loop", "(I)V");
    const auto &a = jmt_it::method_row(r.report, k, "a", "()V");
    EXPECT_GE(loop["wall_incl_ns"].get<uint64_t>(), a["wall_incl_ns"].get<uint64_t>());
    EXPECT_EQ(loop["wall_incl_ns"].get<uint64_t>() - loop["wall_excl_ns"].get<uint64_t>(),
              a["wall_incl_ns"].get<uint64_t>());
    EXPECT_GE(r.report["diagnostics"]["threads_traced"].get<uint64_t>(), uint64_t(threads));
}

TEST_F(Robustness, RecursionIsNotDoubleCounted)
{
    const int k = 12, m = 300;
    const uint64_t calls_per_fib = 2 * 233 - 1;  // fib(13) = 233
    RunSpec spec;
    spec.jvm.main_class = "demo.recursion.Fib";
    spec.jvm.args = {std::to_string(k), std::to_string(m)};
    spec.jmt_args = {"--raw", "--package", "demo/recursion"};
    auto r = jmt_it::run_traced(spec);
    const auto *fib = find_method(r.report, "demo/recursion/Fib", "fib", "(I)I");
    ASSERT_NE(fib, nullptr) << r.report.dump(1);
    EXPECT_EQ((*fib)["calls"].get<uint64_t>(), m * calls_per_fib);
    // Inclusive time counts the m outermost frames only: it matches the wall time the
    // JVM measured around the m calls (the loop adds only m iterations of overhead).
    const double wall = static_cast<double>(jmt_it::done_value(r.done_line, "wall_ns"));
    const double incl = (*fib)["wall_incl_ns"].get<double>();
    EXPECT_LE(incl, wall);
    EXPECT_GT(incl, 0.9 * wall) << "outermost inclusive " << incl << " ns, JVM wall " << wall << " ns";
    // Exclusive time of every frame adds up to the same span.
    EXPECT_NEAR((*fib)["wall_excl_ns"].get<double>(), incl, 0.01 * incl);
}

// A thrower that exits by exception half of the time, caught by its caller. extra_args: more
// jmethodtime options. Returns the frames dropped (their returns never fired).
uint64_t check_throwing(const std::vector<std::string> &jvm_flags, bool expect_no_drops,
                        const std::vector<std::string> &extra_args = {})
{
    const int rounds = 400, n = 100;
    RunSpec spec;
    spec.jvm.main_class = "demo.exceptions.Throwing";
    spec.jvm.args = {std::to_string(rounds), std::to_string(n)};
    spec.jvm.flags = jvm_flags;
    spec.jmt_args = {"--raw", "--package", "demo/exceptions"};
    spec.jmt_args.insert(spec.jmt_args.end(), extra_args.begin(), extra_args.end());
    auto r = jmt_it::run_traced(spec);
    EXPECT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    const std::string k = "demo/exceptions/Throwing";
    const auto *thrower = find_method(r.report, k, "thrower", "(I)I");
    const auto *tiny = find_method(r.report, k, "tiny", "(I)I");
    const auto *catcher = find_method(r.report, k, "catcher", "(I)I");
    EXPECT_TRUE(thrower && tiny && catcher) << r.report.dump(1);
    if (!thrower || !tiny || !catcher)
        return 0;
    // Entries are exact whatever the JIT did.
    EXPECT_EQ((*thrower)["calls"].get<uint64_t>(), uint64_t(rounds * n));
    EXPECT_EQ((*tiny)["calls"].get<uint64_t>(), uint64_t(rounds * n));
    EXPECT_EQ((*catcher)["calls"].get<uint64_t>(), uint64_t(rounds));
    const auto &diag = r.report["diagnostics"];
    // Every dropped frame is a call whose return never fired, and only a throwing
    // call can lose its return: at most the N/2 throwing calls of each per round.
    EXPECT_EQ((*thrower)["unreturned"].get<uint64_t>() + (*tiny)["unreturned"].get<uint64_t>(),
              diag["dropped_frames"].get<uint64_t>());
    EXPECT_LE(diag["dropped_frames"].get<uint64_t>(), uint64_t(rounds * n));
    if (expect_no_drops)
        EXPECT_EQ(diag["dropped_frames"], 0);
    // The caller's times stay right: its inclusive time is the JVM's wall time of
    // the rounds (10%: loop overhead and traps outside catcher), and it encloses
    // each thrower's 5 us spin.
    const double wall = static_cast<double>(jmt_it::done_value(r.done_line, "wall_ns"));
    const double catcher_incl = (*catcher)["wall_incl_ns"].get<double>();
    EXPECT_LE(catcher_incl, wall);
    EXPECT_GT(catcher_incl, 0.9 * wall);
    EXPECT_GT(catcher_incl, rounds * n * 5e3);
    EXPECT_EQ((*catcher)["wall_excl_ns"].get<uint64_t>() + (*thrower)["wall_incl_ns"].get<uint64_t>() +
                  (*tiny)["wall_incl_ns"].get<uint64_t>(),
              (*catcher)["wall_incl_ns"].get<uint64_t>());
    ::testing::Test::RecordProperty("dropped_frames", std::to_string(diag["dropped_frames"].get<uint64_t>()));
    std::cout << "  dropped_frames=" << diag["dropped_frames"] << " unmatched_returns=" << diag["unmatched_returns"]
              << std::endl;
    return diag["dropped_frames"].get<uint64_t>();
}

TEST_F(Robustness, ExceptionsTiered) { check_throwing({}, false); }

TEST_F(Robustness, ExceptionsC1Only) { check_throwing({"-XX:TieredStopAtLevel=1"}, false); }

// The compat programs (kernels without bpf_loop; forced here) with every option that adds to a
// dropped frame's totals: its thread's row, its call path (the JSON report), --foreign. They
// add a dropped frame in a global function of their own (5.10's verifier takes the drop loops
// then); the sums above hold.
TEST_F(Robustness, ExceptionsC1OnlyCompatProgramsPerThread)
{
    setenv("JMT_TEST_COMPAT_PROGRAMS", "1", 1);
    const uint64_t dropped = check_throwing({"-XX:TieredStopAtLevel=1"}, false, {"--per-thread", "--foreign"});
    unsetenv("JMT_TEST_COMPAT_PROGRAMS");
    // C1 inlines the thrower: frames are dropped (14,850 in each run on this host), through the
    // compat programs' own path.
    EXPECT_GT(dropped, 0u);
    RecordProperty("compat_dropped_frames", std::to_string(dropped));
}

TEST_F(Robustness, ExceptionsInterpreterAndC2)
{
    // Without C1 nothing is inlined while the probes are on: every return fires.
    check_throwing({"-XX:-TieredCompilation"}, true);
}

TEST_F(Robustness, AttachDuringDeepRecursion)
{
    const int depth = 3000, leaves = 1000;
    RunSpec spec;
    spec.jvm.main_class = "demo.recursion.Deep";
    spec.jvm.args = {std::to_string(depth), std::to_string(leaves)};
    spec.jmt_args = {"--raw", "--package", "demo/recursion"};
    auto r = jmt_it::run_traced(spec);
    const std::string k = "demo/recursion/Deep";
    EXPECT_EQ(calls_of(r.report, k, "leaf", "(I)I"), uint64_t(leaves));
    // down() was entered before attach at every level: its returns are ignored, counted.
    EXPECT_EQ(calls_of(r.report, k, "down", "(I)I"), 0u);
    const auto &diag = r.report["diagnostics"];
    EXPECT_GE(diag["unmatched_returns"].get<uint64_t>(), uint64_t(depth));
    EXPECT_EQ(diag["depth_overflow"], 0);
    const auto *leaf = find_method(r.report, k, "leaf", "(I)I");
    ASSERT_NE(leaf, nullptr);
    EXPECT_LE((*leaf)["wall_incl_ns"].get<uint64_t>(), r.report["duration_ns"].get<uint64_t>());
}

TEST_F(Robustness, DeepRecursionBeyondTheStackBound)
{
    // Attach first, then recurse 3000 levels: frames past the bound are counted as overflow,
    // their calls still counted, and the frames below stay intact.
    const int depth = 3000, leaves = 100;
    RunSpec spec;
    spec.jvm.main_class = "demo.recursion.Deep";
    spec.jvm.args = {std::to_string(depth), std::to_string(leaves), "first"};
    spec.jmt_args = {"--raw", "--package", "demo/recursion"};
    auto r = jmt_it::run_traced(spec);
    const std::string k = "demo/recursion/Deep";
    EXPECT_EQ(calls_of(r.report, k, "down", "(I)I"), uint64_t(depth + 1));
    EXPECT_EQ(calls_of(r.report, k, "leaf", "(I)I"), uint64_t(leaves));
    const auto &diag = r.report["diagnostics"];
    // down(3000..0) are 3001 frames; leaf() runs at 3002: all beyond 256 overflow.
    EXPECT_EQ(diag["depth_overflow"].get<uint64_t>(), uint64_t(depth + 1 - 256 + leaves));
    // Entered before attach, in the traced package: main, the lambda proxy's run()
    // (a hidden class demo/recursion/Deep$$Lambda$N) and lambda$main$0.
    EXPECT_EQ(diag["unmatched_returns"], 3);
    EXPECT_EQ(diag["dropped_frames"], 0);
    // The outermost frame's inclusive time is whole: down's exclusive times add up to it.
    const auto *down = find_method(r.report, k, "down", "(I)I");
    ASSERT_NE(down, nullptr);
    EXPECT_EQ((*down)["wall_excl_ns"], (*down)["wall_incl_ns"]);
}

TEST_F(Robustness, ThreadChurnSoak)
{
    // A minute of threads that start, call work() 10 times and end, 50 at a time.
    RunSpec spec;
    spec.jvm.main_class = "demo.threads.Churn";
    spec.jvm.args = {"60", "50"};
    spec.jmt_args = {"--raw", "--package", "demo/threads"};
    spec.workload_timeout_ms = 180000;
    auto r = jmt_it::run_traced(spec);
    const uint64_t threads = jmt_it::done_value(r.done_line, "threads");
    const uint64_t calls = jmt_it::done_value(r.done_line, "calls");
    ASSERT_GT(threads, 1000u) << r.done_line;
    EXPECT_EQ(calls_of(r.report, "demo/threads/Churn", "work", "(I)I"), calls);
    const auto &diag = r.report["diagnostics"];
    EXPECT_EQ(diag["thread_state_fail"], 0);
    EXPECT_EQ(diag["method_table_full"], 0);
    // Every worker got a state and every state was freed when its thread ended:
    // at most the main thread and a few JVM threads still hold one at the end.
    const uint64_t traced = diag["threads_traced"], ended = diag["threads_ended"];
    EXPECT_GE(traced, threads);
    EXPECT_GE(ended + 5, traced) << "per-thread states leaked: traced " << traced << ", freed " << ended;
    std::cout << "  threads=" << threads << " traced=" << traced << " ended=" << ended << std::endl;
}

}  // namespace
