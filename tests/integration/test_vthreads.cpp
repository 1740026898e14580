// Virtual threads (JDK 21+) on JDK 25 (jdk25(): Temurin's, else Debian's from the
// root, in a container): calls that
// unmount (sleep, Object.wait, a contended synchronized) and go on on another
// carrier keep exact counts, and their times are their own virtual thread's.
// The workload (demo.vt.VirtualTasks) times itself with System.nanoTime and the
// process's CPU clock in the same traced run.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "harness.h"

using jmt_it::calls_of;
using jmt_it::done_value;
using jmt_it::method_row;

namespace {

constexpr char kClass[] = "demo/vt/VirtualTasks";

struct Tasks {
    std::string mode;
    uint64_t threads = 8, rounds = 5, block_ms = 20, work_us = 500;
    std::vector<std::string> args(bool early) const
    {
        std::vector<std::string> a = {mode, std::to_string(threads), std::to_string(rounds), std::to_string(block_ms),
                                      std::to_string(work_us)};
        if (early)
            a.push_back("early");
        return a;
    }
};

struct VtRun {
    nlohmann::json report;
    std::string done;
};

// jmethodtime --json --raw --package demo/vt [MORE] -o REPORT -- java [JVM_FLAGS] ... (launch mode).
VtRun launch(const Tasks &t, const std::vector<std::string> &more = {}, const std::vector<std::string> &jvm_flags = {})
{
    VtRun r;
    const std::string out = "/tmp/jmt-vthreads-" + std::to_string(getpid()) + ".json";
    std::vector<std::string> argv = {JMT_BINARY, "--json", "--raw", "--package", "demo/vt", "-o", out};
    argv.insert(argv.end(), more.begin(), more.end());
    const jmt_it::JavaCommand java =
        jmt_it::jdk25().launched({"demo.vt.VirtualTasks", t.args(false), jvm_flags, false});
    argv.push_back("--");
    for (const std::string &a : jmt_it::java_argv(java))
        argv.push_back(a);
    jmt_it::Child jmt(argv, true);
    EXPECT_FALSE(jmt.wait_line(false, "READY", 60000).empty()) << jmt.drain(true, 1000);
    jmt.write_stdin("go\n");
    r.done = jmt.wait_line(false, "DONE", 120000);
    EXPECT_EQ(jmt.wait_exit(60000), 0) << jmt.drain(true, 1000);
    std::cout << "  workload: " << r.done << std::endl;
    std::ifstream in(out);
    try {
        r.report = nlohmann::json::parse(in);
    } catch (const std::exception &e) {
        ADD_FAILURE() << "no JSON report (" << e.what() << "): " << jmt.drain(true, 1000);
    }
    unlink(out.c_str());
    return r;
}

// The JVM runs with its virtual threads started and waiting inside task(); jmethodtime -p
// attaches at READY (a mid-run attach).
VtRun attach(const Tasks &t)
{
    jmt_it::RunSpec spec;
    spec.jvm = jmt_it::jdk25().attached({"demo.vt.VirtualTasks", t.args(true)});
    spec.jmt_args = {"--package", "demo/vt", "--raw"};
    jmt_it::RunResult rr = jmt_it::run_traced(spec);
    return {rr.report, rr.done_line};
}

uint64_t u64(const nlohmann::json &row, const char *key) { return row.at(key).get<uint64_t>(); }

// What every run must show; task(): entered by every thread (launched), or before the attach.
void expect_followed(const VtRun &r, const Tasks &t, bool launched)
{
    ASSERT_FALSE(r.report.is_null());
    const uint64_t steps = t.threads * t.rounds;
    ASSERT_EQ(done_value(r.done, "steps"), steps);
    const auto &d = r.report.at("diagnostics");
    EXPECT_EQ(r.report.at("virtual_threads_not_followed").get<std::string>(), "");
    EXPECT_TRUE(r.report.at("virtual_threads").get<bool>());

    // Exact counts: no call lost to an unmount, none left open.
    EXPECT_EQ(calls_of(r.report, kClass, "step", "(Ljava/lang/Object;)V"), steps);
    EXPECT_EQ(calls_of(r.report, kClass, "block", "(Ljava/lang/Object;)V"), steps);
    EXPECT_EQ(calls_of(r.report, kClass, "work", "()V"), 2 * steps);
    if (launched) {
        EXPECT_EQ(calls_of(r.report, kClass, "task", "()V"), t.threads);
        EXPECT_EQ(u64(d, "unmatched_returns"), 0u);
    } else {
        EXPECT_LE(u64(d, "unmatched_returns"), 3 * t.threads) << "returns of task() and its callers entered before";
    }
    EXPECT_EQ(u64(d, "dropped_frames"), 0u);
    EXPECT_EQ(u64(d, "vt_frames_lost"), 0u);
    EXPECT_EQ(u64(d, "vt_unfollowed"), 0u);
    EXPECT_GE(u64(d, "vt_unmounts"), steps) << "each step() unmounts at least once inside block()";
    EXPECT_EQ(u64(d, "vt_unmounts"), u64(d, "vt_mounts"));

    // Elapsed per call within 10% of the JVM's own timing of the same calls.
    const auto &step = method_row(r.report, kClass, "step", "(Ljava/lang/Object;)V");
    const auto &work = method_row(r.report, kClass, "work", "()V");
    const double jvm_step = static_cast<double>(done_value(r.done, "step_ns")) / steps;
    const double tool_step = static_cast<double>(u64(step, "wall_incl_ns")) / steps;
    std::printf("  step(): %.2f ms per call (JVM: %.2f); on a CPU %.2f ms, waiting for one %.2f, blocked %.2f "
                "(JVM: blocked %.2f); %llu unmounts\n",
                tool_step / 1e6, jvm_step / 1e6, u64(step, "cpu_incl_ns") / 1e6 / steps,
                u64(step, "runq_incl_ns") / 1e6 / steps, u64(step, "blocked_incl_ns") / 1e6 / steps,
                done_value(r.done, "blocked_ns") / 1e6 / steps, static_cast<unsigned long long>(u64(d, "vt_unmounts")));
    EXPECT_NEAR(tool_step, jvm_step, 0.10 * jvm_step);

    // Time off a CPU: at least 90% of the time the JVM measured blocked.
    const double off_cpu = static_cast<double>(u64(step, "wall_incl_ns") - u64(step, "cpu_incl_ns"));
    EXPECT_GE(off_cpu, 0.9 * static_cast<double>(done_value(r.done, "blocked_ns")));

    // On a CPU (or waiting for one) at least for the work the JVM timed inside; step() holds it.
    EXPECT_GE(static_cast<double>(u64(work, "cpu_incl_ns") + u64(work, "runq_incl_ns")),
              0.95 * static_cast<double>(done_value(r.done, "work_ns")));
    EXPECT_GE(u64(step, "cpu_incl_ns"), u64(work, "cpu_incl_ns"));

    // No CPU counted twice: the steps' CPU summed stays within the JVM's CPU over the run.
    std::printf("  steps' CPU %.1f ms, the JVM's %.1f ms from GO to the end\n", u64(step, "cpu_incl_ns") / 1e6,
                done_value(r.done, "cpu_ns") / 1e6);
    EXPECT_LE(u64(step, "cpu_incl_ns"), done_value(r.done, "cpu_ns"));
}

class VirtualThreads : public jmt_it::Jdk25Test {};

TEST_F(VirtualThreads, SleepUnmountsAndTheFramesFollow)
{
    const Tasks t{"sleep"};
    expect_followed(launch(t), t, true);
}

TEST_F(VirtualThreads, ObjectWaitInsideSynchronizedUnmountsAndTheFramesFollow)
{
    const Tasks t{"wait"};
    expect_followed(launch(t), t, true);
}

// One lock for all: threads blocked on it unmount (JDK 24+), and a thread woken while the
// lock is taken again goes back to wait without its frames ever reaching the carrier.
TEST_F(VirtualThreads, AContendedSynchronizedUnmountsAndTheFramesFollow)
{
    const Tasks t{"contended", 6, 3, 10, 500};
    expect_followed(launch(t), t, true);
}

// 64 virtual threads on as many carriers as CPUs: most wait unmounted for a carrier.
// HotSpot resolves one freeze and one thaw per GC barrier set and oop size; the hooks are on the
// ones this JVM resolved: with the serial collector's card table and without compressed oops too.
TEST_F(VirtualThreads, OtherCollectorsAndWideOopsAreFollowed)
{
    const Tasks t{"sleep", 8, 3, 10, 200};
    expect_followed(launch(t, {}, {"-XX:+UseSerialGC", "-XX:-UseCompressedOops"}), t, true);
}

TEST_F(VirtualThreads, MoreVirtualThreadsThanCarriers)
{
    const Tasks t{"sleep", 64, 3, 10, 200};
    expect_followed(launch(t), t, true);
}

// --per-thread: a call open across an unmount is its virtual thread's row, whatever its carriers.
TEST_F(VirtualThreads, PerThreadRowsNameTheVirtualThreads)
{
    const Tasks t{"sleep"};
    const VtRun r = launch(t, {"--per-thread"});
    ASSERT_FALSE(r.report.is_null());
    std::set<uint64_t> vthreads;
    uint64_t steps = 0;
    for (const auto &m : r.report.at("methods")) {
        if (m.at("method") != "step")
            continue;
        EXPECT_NE(u64(m, "vthread"), 0u) << "every step() unmounts: " << m.dump();
        EXPECT_EQ(u64(m, "tid"), 0u);
        EXPECT_EQ(m.at("thread").get<std::string>(), "virtual thread " + std::to_string(u64(m, "vthread")));
        EXPECT_EQ(u64(m, "calls"), t.rounds) << "each virtual thread's own steps";
        vthreads.insert(u64(m, "vthread"));
        steps += u64(m, "calls");
    }
    EXPECT_EQ(vthreads.size(), t.threads);
    EXPECT_EQ(steps, t.threads * t.rounds);
}

// ZGC's references carry colour bits: the report says the virtual threads are not followed.
TEST_F(VirtualThreads, UnderZgcTheReportSaysTheyAreNotFollowed)
{
    const Tasks t{"sleep", 4, 2, 5, 100};
    const VtRun r = launch(t, {}, {"-XX:+UseZGC"});
    ASSERT_FALSE(r.report.is_null());
    EXPECT_NE(r.report.at("virtual_threads_not_followed").get<std::string>().find("ZGC"), std::string::npos);
    EXPECT_EQ(r.report.at("diagnostics").at("vt_unmounts").get<uint64_t>(), 0u);
    // No hook is attached where the layout says ZGC: none of the workload's unmounts or
    // mounts traps into one.
    EXPECT_EQ(r.report.at("diagnostics").at("vt_unfollowed").get<uint64_t>(), 0u);
    EXPECT_EQ(done_value(r.done, "steps"), t.threads * t.rounds);
}

TEST_F(VirtualThreads, AttachedMidRunTheNewCallsAreExact)
{
    const Tasks t{"sleep"};
    expect_followed(attach(t), t, false);
}

}  // namespace
