// Classes that unload: ClassChurn defines one class 400 times, each
// time in a fresh loader with its method renamed m00000 ... m00399 (names of
// one length, so a freed name's memory fits the next one), calls it 50 times
// and lets the class unload. A method's key is the addresses of its name
// symbols; before the method table forgot unloaded classes, reused symbols
// filed calls under earlier names (114 of 400 names, some with 600 calls).
// Every name must come out exact, attached and launched, with and without
// --package.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "harness.h"

namespace {

constexpr int kRounds = 400;
constexpr int kCalls = 50;

// Every m##### row of demo/churn/Churned has exactly kCalls calls, one row per round's name,
// loop() has one call per round, and the kernel saw the classes unload.
void expect_exact_names(const nlohmann::json &report)
{
    std::map<std::string, uint64_t> calls;
    for (const auto &m : report.at("methods"))
        if (m.at("class") == "demo/churn/Churned" && m.at("method").get<std::string>().rfind("m", 0) == 0)
            calls[m.at("method").get<std::string>()] += m.at("calls").get<uint64_t>();
    EXPECT_EQ(calls.size(), static_cast<size_t>(kRounds)) << "one row per name";
    for (int r = 0; r < kRounds; r++) {
        char name[16];
        std::snprintf(name, sizeof(name), "m%05d", r);
        EXPECT_EQ(calls[name], static_cast<uint64_t>(kCalls)) << name;
    }
    EXPECT_EQ(jmt_it::calls_of(report, "demo/churn/Churned", "loop", "(JI)J"), static_cast<uint64_t>(kRounds));
    const auto &diag = report.at("diagnostics");
    EXPECT_GE(diag.at("classes_unloaded").get<uint64_t>(), static_cast<uint64_t>(kRounds) - 1) << diag.dump();
    EXPECT_GE(diag.at("methods_forgotten").get<uint64_t>(), diag.at("classes_unloaded").get<uint64_t>());
}

void attached(const std::vector<std::string> &filter)
{
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.churn.ClassChurn";
    spec.jvm.args = {std::to_string(kRounds), std::to_string(kCalls), "wait"};
    spec.jmt_args = filter;
    const auto r = jmt_it::run_traced(spec);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    expect_exact_names(r.report);
}

void launched(const std::vector<std::string> &filter)
{
    const std::string path = "/tmp/jmt-churn-" + std::to_string(getpid()) + ".json";
    std::vector<std::string> argv = {JMT_BINARY, "--json", "-o", path};
    argv.insert(argv.end(), filter.begin(), filter.end());
    argv.insert(argv.end(), {"--", JMT_JAVA, "-cp", JMT_JAVA_CLASSES, "demo.churn.ClassChurn", std::to_string(kRounds),
                             std::to_string(kCalls)});
    jmt_it::Child jmt(argv, false);
    const std::string done = jmt.wait_line(false, "DONE", 120000);
    ASSERT_EQ(jmt.wait_exit(120000), 0) << jmt.drain(true, 1000);
    std::printf("  %s\n", done.c_str());
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    unlink(path.c_str());
    expect_exact_names(nlohmann::json::parse(text.str()));
}

class Churn : public jmt_it::BpfTest {};

TEST_F(Churn, AttachedWithPackageEveryNameIsExact) { attached({"--package", "demo/churn"}); }

TEST_F(Churn, AttachedWithoutFilterEveryNameIsExact) { attached({}); }

TEST_F(Churn, LaunchedWithPackageEveryNameIsExact) { launched({"--package", "demo/churn"}); }

TEST_F(Churn, LaunchedWithoutFilterEveryNameIsExact) { launched({}); }

}  // namespace

namespace {

class Stress : public jmt_it::BpfTest {};

// 48 threads on the host's few CPUs calling tiny traced methods; the per-CPU caches
// and scratch buffers are shared by every program on a CPU, so a torn entry (a program preempted
// while writing it) would show as a count filed under the wrong name. Exact counts and names.
TEST_F(Stress, ManyThreadsOnFewCpusCountExactly)
{
    constexpr uint64_t kThreads = 48, kIterations = 20000;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.stress.ManyThreads";
    spec.jvm.args = {std::to_string(kThreads), std::to_string(kIterations)};
    spec.jmt_args = {"--package", "demo/stress", "--per-thread"};
    const auto r = jmt_it::run_traced(spec);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    const std::string k = "demo/stress/ManyThreads";
    std::map<std::string, uint64_t> calls;
    std::map<uint64_t, uint64_t> work_per_thread;
    for (const auto &m : r.report.at("methods")) {
        if (m.at("class") != k)  // the threads' lambda class, ManyThreads$$Lambda$1+0x...
            continue;
        calls[m.at("method").get<std::string>()] += m.at("calls").get<uint64_t>();
        if (m.at("method") == "tiny1")
            work_per_thread[m.at("tid").get<uint64_t>()] += m.at("calls").get<uint64_t>();
    }
    EXPECT_EQ(calls["tiny0"], 2 * kThreads * kIterations);
    EXPECT_EQ(calls["tiny1"], kThreads * kIterations);
    EXPECT_EQ(calls["tiny2"], kThreads * kIterations);
    EXPECT_EQ(calls["tiny3"], kThreads * kIterations);
    EXPECT_EQ(calls["work"], kThreads);
    EXPECT_EQ(calls.size(), 6u) << "tiny0..3, work, and the body of the threads' lambda";
    EXPECT_EQ(work_per_thread.size(), kThreads);
    for (const auto &[tid, n] : work_per_thread)
        EXPECT_EQ(n, kIterations) << "thread " << tid;
    const auto &diag = r.report.at("diagnostics");
    EXPECT_EQ(diag.at("scratch_busy").get<uint64_t>(), 0u);
    EXPECT_EQ(diag.at("thread_rows_full").get<uint64_t>(), 0u);
}

}  // namespace
