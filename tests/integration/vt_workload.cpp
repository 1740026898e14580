#include "vt_workload.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace jmt_it {

namespace {

constexpr char kTasksClass[] = "demo/vt/VirtualTasks";

}  // namespace

VtJdk vt_jdk25()
{
    return {[](JavaCommand c) { return jdk25().launched(std::move(c)); },
            [](JavaCommand c) { return jdk25().attached(std::move(c)); }};
}

VtJdk vt_jdk(const RootJdk &root)
{
    return {[&root](JavaCommand c) {
                c.java = root.launcher();
                c.classpath = root.classpath();
                return c;
            },
            [&root](JavaCommand c) { return root.command(std::move(c)); }};
}

std::vector<std::string> Tasks::args(bool early) const
{
    std::vector<std::string> a = {mode, std::to_string(threads), std::to_string(rounds), std::to_string(block_ms),
                                  std::to_string(work_us)};
    if (early)
        a.push_back("early");
    return a;
}

VtRun launch_main(const VtJdk &jdk, const std::string &main, const std::vector<std::string> &args,
                  const std::vector<std::string> &more, const std::vector<std::string> &jvm_flags)
{
    VtRun r;
    const std::string out = "/tmp/jmt-vthreads-" + std::to_string(getpid()) + ".json";
    std::vector<std::string> argv = {JMT_BINARY, "--json", "--raw", "--package", "demo/vt", "-o", out};
    argv.insert(argv.end(), more.begin(), more.end());
    const JavaCommand java = jdk.launched({main, args, jvm_flags, false});
    argv.push_back("--");
    for (const std::string &a : java_argv(java))
        argv.push_back(a);
    Child jmt(argv, true);
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

VtRun launch(const VtJdk &jdk, const Tasks &t, const std::vector<std::string> &more,
             const std::vector<std::string> &jvm_flags)
{
    return launch_main(jdk, "demo.vt.VirtualTasks", t.args(false), more, jvm_flags);
}

VtRun attach(const VtJdk &jdk, const Tasks &t, const std::vector<std::string> &jvm_flags)
{
    RunSpec spec;
    spec.jvm = jdk.attached({"demo.vt.VirtualTasks", t.args(true), jvm_flags});
    spec.jmt_args = {"--package", "demo/vt", "--raw"};
    RunResult rr = run_traced(spec);
    return {rr.report, rr.done_line};
}

uint64_t u64(const nlohmann::json &row, const char *key) { return row.at(key).get<uint64_t>(); }

void expect_followed(const VtRun &r, const Tasks &t, bool launched, bool unmounts)
{
    ASSERT_FALSE(r.report.is_null());
    const uint64_t steps = t.threads * t.rounds;
    ASSERT_EQ(done_value(r.done, "steps"), steps);
    const auto &d = r.report.at("diagnostics");
    EXPECT_EQ(r.report.at("virtual_threads_not_followed").get<std::string>(), "");
    EXPECT_TRUE(r.report.at("virtual_threads").get<bool>());

    // Exact counts: no call lost to an unmount, none left open.
    EXPECT_EQ(calls_of(r.report, kTasksClass, "step", "(Ljava/lang/Object;)V"), steps);
    EXPECT_EQ(calls_of(r.report, kTasksClass, "block", "(Ljava/lang/Object;)V"), steps);
    EXPECT_EQ(calls_of(r.report, kTasksClass, "work", "()V"), 2 * steps);
    if (launched) {
        EXPECT_EQ(calls_of(r.report, kTasksClass, "task", "()V"), t.threads);
        EXPECT_EQ(u64(d, "unmatched_returns"), 0u);
    } else {
        // Attached while every virtual thread waited inside task() for GO (and main() in
        // Harness.awaitGo): their entries came before the trace, so no task() call completes in
        // it, and the returns without an entry are exactly those of task() and the run() of
        // the method reference's class (demo/vt/VirtualTasks$$Lambda, traced too) on each
        // virtual thread, and of main().
        EXPECT_EQ(calls_of(r.report, kTasksClass, "task", "()V"), 0u);
        EXPECT_EQ(calls_of(r.report, kTasksClass, "main", "([Ljava/lang/String;)V"), 0u);
        EXPECT_EQ(u64(d, "unmatched_returns"), 2 * t.threads + 1) << "the returns of frames entered before";
    }
    EXPECT_EQ(u64(d, "dropped_frames"), 0u);
    EXPECT_EQ(u64(d, "vt_frames_lost"), 0u);
    EXPECT_EQ(u64(d, "vt_unfollowed"), 0u);
    if (unmounts)
        EXPECT_GE(u64(d, "vt_unmounts"), steps) << "each step() unmounts at least once inside block()";
    else
        EXPECT_LE(u64(d, "vt_unmounts"), t.threads)
            << "the JDK pins step()'s blocks: only the wait for GO in task() unmounts";
    EXPECT_EQ(u64(d, "vt_unmounts"), u64(d, "vt_mounts"));

    // Elapsed per call within 10% of the JVM's own timing of the same calls.
    const auto &step = method_row(r.report, kTasksClass, "step", "(Ljava/lang/Object;)V");
    const auto &work = method_row(r.report, kTasksClass, "work", "()V");
    const double jvm_step = static_cast<double>(done_value(r.done, "step_ns")) / steps;
    const double tool_step = static_cast<double>(u64(step, "wall_incl_ns")) / steps;
    std::printf("  step(): %.2f ms per call (JVM: %.2f); on a CPU %.2f ms, waiting for one %.2f, blocked %.2f "
                "(JVM: blocked %.2f); %llu unmounts\n",
                tool_step / 1e6, jvm_step / 1e6, u64(step, "cpu_incl_ns") / 1e6 / steps,
                u64(step, "runq_incl_ns") / 1e6 / steps, u64(step, "blocked_incl_ns") / 1e6 / steps,
                done_value(r.done, "blocked_ns") / 1e6 / steps, static_cast<unsigned long long>(u64(d, "vt_unmounts")));
    EXPECT_NEAR(tool_step, jvm_step, 0.10 * jvm_step);

    // Time off a CPU is the rest of step()'s elapsed: its CPU is bounded above by the kernel's
    // count of the carriers' CPU over the run (schedstat), below by work()'s spin. Not a share of
    // the JVM's timing of block(), which holds the unmount and mount code on a CPU too, a trap per
    // method it runs: its share off a CPU falls as a probe event costs more.
    ASSERT_LE(u64(step, "cpu_incl_ns"), u64(step, "wall_incl_ns"));
    const uint64_t carriers_cpu = done_value(r.done, "carrier_cpu_ns");
    std::printf("  steps' CPU %.1f ms; from GO to the end their carriers' %.1f ms (kernel), the JVM's %.1f ms\n",
                u64(step, "cpu_incl_ns") / 1e6, carriers_cpu / 1e6, done_value(r.done, "cpu_ns") / 1e6);
    EXPECT_LE(u64(step, "cpu_incl_ns"), carriers_cpu) << "time blocked counted on a CPU, or CPU counted twice";
    EXPECT_LE(u64(step, "cpu_incl_ns"), done_value(r.done, "cpu_ns")) << "over the JVM's own CPU clock";

    // On a CPU (or waiting for one) at least for the work each call spins for, work_us of the JVM's
    // clock; step() holds it. Not the JVM's own timing of work(), which also holds what passed while
    // its carrier was neither on a CPU nor runnable (the host or a safepoint held the carriers).
    // Such a pause inside a spin costs that call at most its work_us: 5% is 2 of 48 calls.
    const double spun = 2.0 * static_cast<double>(steps) * static_cast<double>(t.work_us) * 1000;
    EXPECT_GE(static_cast<double>(u64(work, "cpu_incl_ns") + u64(work, "runq_incl_ns")), 0.95 * spun);
    EXPECT_GE(static_cast<double>(done_value(r.done, "work_ns")), spun) << "each work() spins for work_us";
    EXPECT_GE(u64(step, "cpu_incl_ns"), u64(work, "cpu_incl_ns"));
}

}  // namespace jmt_it
