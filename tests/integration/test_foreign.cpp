// --foreign: the part of a traced method's exclusive time spent inside untraced
// callees, on a workload whose wait, untraced work and traced callback are known
// (examples/java/demo/foreign).
#include <unistd.h>

#include <fstream>

#include <regex>

#include "harness.h"

namespace {

constexpr char kClient[] = "demo/foreign/traced/Client";
constexpr char kLoop[] = "demo/foreign/traced/Client$Loop";
constexpr char kCall[] = "(JJ)J";
constexpr char kRun[] = "(J)J";

uint64_t get(const nlohmann::json &row, const char *key) { return row.at(key).get<uint64_t>(); }

jmt_it::RunResult run_foreign(uint64_t n, uint64_t ms, uint64_t iters, std::vector<std::string> extra)
{
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.foreign.ForeignMain";
    spec.jvm.args = {std::to_string(n), std::to_string(ms), std::to_string(iters)};
    spec.jmt_args = {"--package", "demo/foreign/traced"};
    spec.jmt_args.insert(spec.jmt_args.end(), extra.begin(), extra.end());
    return jmt_it::run_traced(spec);
}

class Foreign : public jmt_it::BpfTest {};

TEST_F(Foreign, SeparatesUntracedCalleesFromOwnCodeAndTracedCallbacks)
{
    const uint64_t n = 12, ms = 20, iters = 5'000'000;
    auto r = run_foreign(n, ms, iters, {"--foreign"});
    EXPECT_EQ(r.report.at("foreign"), true);
    const auto &call = jmt_it::method_row(r.report, kClient, "call", kCall);
    const auto &loop = jmt_it::method_row(r.report, kLoop, "run", kRun);
    EXPECT_EQ(get(call, "calls"), n);
    EXPECT_EQ(get(loop, "calls"), n);
    // Loop.run makes no call: nothing of it is foreign, exactly.
    EXPECT_EQ(get(loop, "wall_foreign_ns"), 0u);
    EXPECT_EQ(get(loop, "events_foreign"), 0u);
    // Inside call()'s untraced callees, exactly one traced event per call: Loop.run's entry
    // (its return resumes the foreign time).
    EXPECT_EQ(get(call, "traced_events_foreign"), n);
    // The wait is foreign and off the CPU: elapsed minus on-CPU foreign time covers the sleeps.
    const uint64_t sleeps_ns = n * ms * 1'000'000;
    EXPECT_GE(get(call, "wall_foreign_ns") - get(call, "cpu_foreign_ns"), sleeps_ns * 95 / 100);
    EXPECT_LE(get(call, "wall_foreign_ns"), get(call, "wall_excl_ns"));
    EXPECT_LE(get(call, "cpu_foreign_ns"), get(call, "cpu_excl_ns"));
    // Three loops of the same arithmetic and length: Wire.burn (call()'s on-CPU foreign time),
    // call()'s own loop (its on-CPU exclusive time less the foreign part) and Loop.run. Each is
    // within a factor of 2 of Loop.run (they are compiled apart, at different moments).
    const double loop_cpu = static_cast<double>(get(loop, "cpu_incl_ns"));
    const double burn_cpu = static_cast<double>(get(call, "cpu_foreign_ns"));
    const double own_cpu = static_cast<double>(get(call, "cpu_excl_ns") - get(call, "cpu_foreign_ns"));
    EXPECT_GT(loop_cpu, 0.0);
    EXPECT_GT(burn_cpu, loop_cpu / 2) << "burn " << burn_cpu << " loop " << loop_cpu;
    EXPECT_LT(burn_cpu, loop_cpu * 2) << "burn " << burn_cpu << " loop " << loop_cpu;
    EXPECT_GT(own_cpu, loop_cpu / 2) << "own " << own_cpu << " loop " << loop_cpu;
    EXPECT_LT(own_cpu, loop_cpu * 2) << "own " << own_cpu << " loop " << loop_cpu;
    EXPECT_EQ(r.report.at("diagnostics").at("foreign_lost").get<uint64_t>(), 0u);
}

TEST_F(Foreign, TableShowsTheColumnsAndSortsByThem)
{
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.foreign.ForeignMain";
    spec.jvm.args = {"3", "10", "100000"};
    spec.jmt_args = {"--package", "demo/foreign/traced", "--foreign", "--sort", "foreign"};
    spec.json = false;
    auto r = jmt_it::run_traced(spec);
    // The columns, right-aligned to cells as wide as "33.2 ms ±4%" (after the off-CPU ones: the
    // untraced callees sleep).
    EXPECT_TRUE(std::regex_search(r.jmt_stdout, std::regex("Blocked Excl +Foreign +CPU Foreign  Method\n")))
        << r.jmt_stdout;
    EXPECT_NE(r.jmt_stdout.find("by elapsed time in untraced callees"), std::string::npos) << r.jmt_stdout;
    // call() (30 ms of sleeps in untraced code) is the first row.
    const size_t header = r.jmt_stdout.find("Method\n");
    ASSERT_NE(header, std::string::npos);
    const std::string first = r.jmt_stdout.substr(header + 7, r.jmt_stdout.find('\n', header + 7) - header - 7);
    EXPECT_NE(first.find("demo/foreign/traced/Client.call(JJ)J"), std::string::npos) << r.jmt_stdout;
}

TEST_F(Foreign, OffByDefault)
{
    auto r = run_foreign(2, 1, 1000, {});
    EXPECT_EQ(r.report.at("foreign"), false);
    const auto &call = jmt_it::method_row(r.report, kClient, "call", kCall);
    EXPECT_FALSE(call.contains("wall_foreign_ns"));
    EXPECT_EQ(get(call, "calls"), 2u);
}

}  // namespace

namespace {

// A traced thread that sleeps and wakes 12 times in a short launch-mode trace: before the sched_switch
// program's switch-ins were checked (switch_unseen), one trace in about six double counted a
// slice of on-CPU time (cpu_clamped > 0, own on-CPU time 10-20 ms above own elapsed time); now
// about one in eight shows switch_unseen instead, and on-CPU time stays within elapsed time.
TEST_F(Foreign, OnCpuTimeNeverRunsAheadAcrossSleeps)
{
    uint64_t unseen = 0;
    const std::string path = "/tmp/jmt-foreign-" + std::to_string(getpid()) + ".json";
    for (int run = 0; run < 8; run++) {
        // Launch mode, where the trace starts with the JVM's threads (seen there most often).
        jmt_it::Child jmt({JMT_BINARY, "--json", "-o", path, "--raw", "--foreign", "--package", "demo/foreign/traced",
                           "--", JMT_JAVA, "-cp", JMT_JAVA_CLASSES, "demo.foreign.ForeignMain", "12", "20", "5000000"},
                          true);
        jmt.write_stdin("go\n");
        ASSERT_EQ(jmt.wait_exit(120000), 0) << jmt.drain(true, 1000);
        std::ifstream in(path);
        const nlohmann::json report = nlohmann::json::parse(in);
        unlink(path.c_str());
        const auto &call = jmt_it::method_row(report, kClient, "call", kCall);
        const auto &diag = report.at("diagnostics");
        EXPECT_EQ(diag.at("cpu_clamped").get<uint64_t>(), 0u) << "run " << run;
        const uint64_t own_wall = get(call, "wall_excl_ns") - get(call, "wall_foreign_ns");
        const uint64_t own_cpu = get(call, "cpu_excl_ns") - get(call, "cpu_foreign_ns");
        EXPECT_LE(own_cpu, own_wall + own_wall / 100) << "run " << run;
        unseen += diag.at("switch_unseen").get<uint64_t>();
    }
    std::cout << "  switch-ins resynchronised at a probe in 8 traces: " << unseen << "\n";
}

}  // namespace

namespace {

// --foreign with call paths: call()'s untraced callees are a frame of their own under it.
TEST_F(Foreign, FoldedStacksHaveAnUntracedCalleesFrame)
{
    const uint64_t n = 5, ms = 20;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.foreign.ForeignMain";
    spec.jvm.args = {std::to_string(n), std::to_string(ms), "1000000"};
    spec.jmt_args = {"--package", "demo/foreign/traced", "--foreign", "--folded"};
    spec.json = false;
    auto r = jmt_it::run_traced(spec);
    const std::string prefix = "demo.foreign.traced.Client.call(long, long);[untraced callees] ";
    const std::string lines = "\n" + r.jmt_stdout;  // every line starts after a '\n'
    const size_t at = lines.find("\n" + prefix);
    ASSERT_NE(at, std::string::npos) << r.jmt_stdout;
    const uint64_t value = std::stoull(lines.substr(at + 1 + prefix.size()));
    EXPECT_GE(value, n * ms * 1'000'000 * 95 / 100) << r.jmt_stdout;  // the sleeps, at least
    EXPECT_EQ(r.jmt_stdout.find("Client$Loop.run(long);[untraced callees]"), std::string::npos) << r.jmt_stdout;
}

}  // namespace
