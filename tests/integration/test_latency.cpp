// Latency histograms against the JVM's own timing of the same calls: demo.latency.Skewed's
// sleeps of a known skewed distribution, each call timed by the JVM around its call site. A
// percentile is right when it falls in the JVM's percentile's bucket or the next one (a bucket
// is at most 1/16 of its low edge wide; the JVM's timing also holds the call's own two probe
// events, a few us on a call of 1 ms and more). Counts are exact: the histogram's calls over a
// threshold in the workload's gap and --slower-than's list are the JVM's (but for calls a loaded
// host woke late into the gap, near the threshold, which the test counts and prints).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "harness.h"
#include "jmethodtime.h"

namespace {

using jmt_it::RunResult;
using nlohmann::json;

const char *const kClass = "demo/latency/Skewed";
constexpr int kCalls = 600;
constexpr uint64_t kThresholdNs = 7'000'000;  // --slower-than, in the workload's gap (4.5 to 9.5 ms)
constexpr uint64_t kEdgeNs = 7'077'888;       // the histogram's bucket edge in the gap (27 << 18)

class Latency : public jmt_it::BpfTest {
protected:
    // One traced run of Skewed; its sorted timings go to file.
    RunResult run(int seed, int scale, const std::string &file, std::vector<std::string> args = {})
    {
        jmt_it::RunSpec spec;
        spec.jvm = {"demo.latency.Skewed", {std::to_string(kCalls), std::to_string(seed), std::to_string(scale), file}};
        // --raw: each call's time from its entry probe to its return probe, which the JVM's timing
        // around the call holds (corrected, the events inside would come out of the tool's only).
        spec.jmt_args = {"--package", "demo/latency", "--raw"};
        spec.jmt_args.insert(spec.jmt_args.end(), {"--slower-than", "7ms", "--slow-calls", "1000"});
        spec.jmt_args.insert(spec.jmt_args.end(), args.begin(), args.end());
        return jmt_it::run_traced(spec);
    }
    std::string temp(const std::string &name) const { return dir_ + "/" + name; }
    void SetUp() override
    {
        BpfTest::SetUp();
        char tmpl[] = "/tmp/jmt-latency.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { (void)system(("rm -rf '" + dir_ + "'").c_str()); }

private:
    std::string dir_;
};

std::vector<uint64_t> read_timings(const std::string &file)
{
    std::ifstream in(file);
    std::vector<uint64_t> out;
    for (uint64_t ns; in >> ns;)
        out.push_back(ns);
    return out;
}

uint64_t nearest_rank(std::vector<uint64_t> sorted, double q)
{
    std::sort(sorted.begin(), sorted.end());
    const auto r = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(r, 1, sorted.size()) - 1];
}

// The tool's value lies in the JVM's value's bucket or the one next to it.
void expect_within_a_bucket(uint64_t tool_ns, uint64_t jvm_ns, const std::string &what)
{
    const long tool = jmt_lat_bucket(tool_ns), jvm = jmt_lat_bucket(jvm_ns);
    EXPECT_LE(std::labs(tool - jvm), 1) << what << ": the tool's " << tool_ns << " ns (bucket " << tool
                                        << ") against the JVM's " << jvm_ns << " ns (bucket " << jvm << ")";
}

const json &call_row(const json &report) { return jmt_it::method_row(report, kClass, "call", "(J)V"); }

uint64_t over(const std::vector<uint64_t> &jvm, uint64_t ns)
{
    return static_cast<uint64_t>(std::count_if(jvm.begin(), jvm.end(), [ns](uint64_t t) { return t >= ns; }));
}

// Calls the JVM timed within 5% of ns: a loaded host's late wake-up can put a sleep of the gap's
// edge there, and then the JVM's timing (which holds the call's own two traps) and the tool's may
// put it on either side. 0 on a quiet host: the counts are then asked to be equal.
uint64_t near(const std::vector<uint64_t> &jvm, uint64_t ns)
{
    return static_cast<uint64_t>(
        std::count_if(jvm.begin(), jvm.end(), [ns](uint64_t t) { return t >= ns * 0.95 && t < ns * 1.05; }));
}

void expect_count(uint64_t tool, const std::vector<uint64_t> &jvm, uint64_t ns, const std::string &what)
{
    const uint64_t truth = over(jvm, ns), band = near(jvm, ns);
    std::cout << "  " << what << ": " << tool << " calls from " << ns << " ns, the JVM's " << truth << " (" << band
              << " within 5%)" << std::endl;
    EXPECT_LE(tool, truth + band) << what;
    EXPECT_GE(tool + band, truth) << what;
}

// The histogram's calls, and those in buckets from kEdgeNs up.
void expect_counts(const json &latency, uint64_t calls, const std::vector<uint64_t> &jvm)
{
    uint64_t all = 0, above = 0;
    for (const json &b : latency.at("buckets")) {
        all += b[2].get<uint64_t>();
        if (b[0].get<uint64_t>() >= kEdgeNs)
            above += b[2].get<uint64_t>();
    }
    EXPECT_EQ(all, calls) << latency.dump();
    expect_count(above, jvm, kEdgeNs, "histogram");
}

void expect_percentiles(const json &latency, const std::vector<uint64_t> &jvm, const std::string &what)
{
    expect_within_a_bucket(latency.at("p50_ns"), nearest_rank(jvm, 0.50), what + " p50");
    expect_within_a_bucket(latency.at("p90_ns"), nearest_rank(jvm, 0.90), what + " p90");
    expect_within_a_bucket(latency.at("p99_ns"), nearest_rank(jvm, 0.99), what + " p99");
    expect_within_a_bucket(latency.at("max_ns"), *std::max_element(jvm.begin(), jvm.end()), what + " max");
    expect_within_a_bucket(latency.at("min_ns"), *std::min_element(jvm.begin(), jvm.end()), what + " min");
}

// The slow calls of call(J)V: another method of the workload may be slow too (a safepoint or a
// compile under load stalls it), and the JVM timed only call()'s.
json calls_of_call(const json &slow_calls)
{
    json out = json::array();
    for (const json &c : slow_calls)
        if (c.at("class") == kClass && c.at("method") == "call" && c.at("signature") == "(J)V")
            out.push_back(c);
    return out;
}

// --slower-than: exactly the calls the JVM timed over the threshold, each named with its path.
void expect_slow_calls(const json &report, const std::vector<uint64_t> &jvm, const std::string &what)
{
    const json slow_calls = calls_of_call(report.at("slow_calls"));
    expect_count(slow_calls.size(), jvm, kThresholdNs, what);
    for (const json &c : slow_calls) {
        EXPECT_EQ(c.at("path").back(), "demo/latency/Skewed.call(J)V");
        EXPECT_GE(c.at("wall_ns").get<uint64_t>(), kThresholdNs);
        // A sleep: blocked for most of it, and the parts add up to the whole.
        EXPECT_EQ(c.at("cpu_ns").get<uint64_t>() + c.at("runq_ns").get<uint64_t>() + c.at("blocked_ns").get<uint64_t>(),
                  c.at("wall_ns").get<uint64_t>());
        EXPECT_GT(c.at("blocked_ns").get<uint64_t>(), c.at("wall_ns").get<uint64_t>() / 2) << c.dump();
    }
}

json run_tool(const std::vector<std::string> &argv)
{
    jmt_it::Child tool(argv, false);
    const int rc = tool.wait_exit(60000);
    const std::string out = tool.drain(false, 5000);
    EXPECT_EQ(rc, 0) << tool.drain(true, 1000);
    return json::parse(out);
}

TEST_F(Latency, PercentilesAndCountsAreTheJvmsAndMergeAddsTheCalls)
{
    const RunResult one = run(1, 1, temp("one.txt"));
    ASSERT_EQ(jmt_it::calls_of(one.report, kClass, "call", "(J)V"), uint64_t(kCalls)) << one.jmt_stderr;
    const std::vector<uint64_t> jvm_one = read_timings(temp("one.txt"));
    ASSERT_EQ(jvm_one.size(), size_t(kCalls));
    const json &latency = call_row(one.report).at("latency");
    std::cout << "  tool: " << latency.at("p50_ns") << " " << latency.at("p90_ns") << " " << latency.at("p99_ns")
              << " max " << latency.at("max_ns") << "; " << one.done_line << std::endl;
    expect_counts(latency, kCalls, jvm_one);
    expect_percentiles(latency, jvm_one, "one run");
    expect_slow_calls(one.report, jvm_one, "--slower-than");

    // Merge: the percentiles of both runs' calls together.
    const RunResult two = run(2, 1, temp("two.txt"));
    std::vector<uint64_t> both = read_timings(temp("two.txt"));
    ASSERT_EQ(both.size(), size_t(kCalls));
    both.insert(both.end(), jvm_one.begin(), jvm_one.end());
    for (const auto &[name, report] : {std::pair{"one.json", &one.report}, std::pair{"two.json", &two.report}})
        std::ofstream(temp(name)) << report->dump();
    const json merged = run_tool({JMT_BINARY, "merge", "--json", temp("one.json"), temp("two.json")});
    const json &merged_latency = call_row(merged).at("latency");
    expect_counts(merged_latency, 2 * kCalls, both);
    expect_percentiles(merged_latency, both, "merged");
    // Each host's slow calls, tagged by their source.
    expect_count(calls_of_call(merged.at("slow_calls")).size(), both, kThresholdNs, "merged --slower-than");
    for (const json &c : merged.at("slow_calls"))
        EXPECT_FALSE(c.value("host", "").empty()) << c.dump();

    // diff: a p99 three times as long moved; against itself, none did.
    const RunResult slow = run(1, 3, temp("slow.txt"));
    std::ofstream(temp("slow.json")) << slow.report.dump();
    const json moved = run_tool({JMT_BINARY, "diff", "--json", temp("one.json"), temp("slow.json")});
    const json same = run_tool({JMT_BINARY, "diff", "--json", temp("one.json"), temp("one.json")});
    auto p99_moved = [](const json &diff) {
        for (const json &m : diff.at("methods"))
            if (m.at("method") == "call")
                return m.at("p99_moved").get<bool>();
        ADD_FAILURE() << "no call() in " << diff.dump();
        return false;
    };
    EXPECT_TRUE(p99_moved(moved));
    EXPECT_FALSE(p99_moved(same));
}

TEST_F(Latency, NoLatencyKeepsNoHistogram)
{
    const RunResult r = run(1, 1, temp("t.txt"), {"--no-latency"});
    ASSERT_EQ(jmt_it::calls_of(r.report, kClass, "call", "(J)V"), uint64_t(kCalls)) << r.jmt_stderr;
    EXPECT_FALSE(call_row(r.report).contains("latency")) << call_row(r.report).dump();
}

// The compat programs (kernels without bpf_loop, before 5.17; forced here) keep the percentiles
// and --slower-than's list: their return program makes no verdict, so the ring buffer's record fits
// 5.10's 512 bytes of stack beside the calls below it.
TEST_F(Latency, CompatProgramsKeepThePercentilesAndTheSlowCalls)
{
    setenv("JMT_TEST_COMPAT_PROGRAMS", "1", 1);
    const RunResult r = run(1, 1, temp("compat.txt"));
    unsetenv("JMT_TEST_COMPAT_PROGRAMS");
    ASSERT_EQ(jmt_it::calls_of(r.report, kClass, "call", "(J)V"), uint64_t(kCalls)) << r.jmt_stderr;
    EXPECT_NE(r.report.at("source").at("kernel").get<std::string>().find("without bpf_loop"), std::string::npos)
        << r.report.at("source").dump();
    const std::vector<uint64_t> jvm = read_timings(temp("compat.txt"));
    ASSERT_EQ(jvm.size(), size_t(kCalls));
    expect_counts(call_row(r.report).at("latency"), kCalls, jvm);
    expect_percentiles(call_row(r.report).at("latency"), jvm, "compat programs");
    expect_slow_calls(r.report, jvm, "compat --slower-than");
}

// The same on virtual threads (JDK 25): Skewed's calls on 8 virtual threads over this host's
// carriers, each sleep an unmount (the call open across it, its thread another carrier's after
// it). The JVM's own nearest-rank percentiles (its DONE line) against the histogram's, and its
// calls over 7 ms against --slower-than's list, each named with its virtual thread.
class LatencyVirtual : public jmt_it::Jdk25Test {};

TEST_F(LatencyVirtual, PercentilesAndSlowCallsAreTheJvmsAcrossUnmounts)
{
    jmt_it::RunSpec spec;
    spec.jvm = jmt_it::jdk25().attached({"demo.latency.Skewed", {std::to_string(kCalls), "3", "1", "-", "8"}});
    spec.jmt_args = {"--package", "demo/latency", "--raw", "--slower-than", "7ms", "--slow-calls", "1000"};
    const RunResult r = jmt_it::run_traced(spec);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    EXPECT_EQ(r.report.value("virtual_threads_not_followed", ""), "");
    ASSERT_EQ(jmt_it::calls_of(r.report, kClass, "call", "(J)V"), uint64_t(kCalls)) << r.jmt_stderr;
    // Most sleeps unmount (a sleep whose time is up before it parks does not: 596 of 600 here).
    EXPECT_GE(r.report.at("diagnostics").value("vt_unmounts", 0), kCalls / 2) << "the sleeps did not unmount";
    const json &latency = call_row(r.report).at("latency");
    std::cout << "  tool: " << latency.at("p50_ns") << " " << latency.at("p90_ns") << " " << latency.at("p99_ns")
              << " max " << latency.at("max_ns") << "; " << r.done_line << std::endl;
    for (const char *key : {"p50_ns", "p90_ns", "p99_ns", "max_ns", "min_ns"})
        expect_within_a_bucket(latency.at(key), jmt_it::done_value(r.done_line, key), key);
    const json slow_calls = calls_of_call(r.report.at("slow_calls"));
    // Exact but for the calls the JVM timed within 5% of 7 ms (its timing holds the call's own
    // two traps; the probes' does not): under load on virtual threads most calls are over it.
    const uint64_t over = jmt_it::done_value(r.done_line, "over_7ms"),
                   near = jmt_it::done_value(r.done_line, "near_7ms");
    EXPECT_LE(slow_calls.size(), over + near);
    EXPECT_GE(slow_calls.size() + near, over);
    for (const json &c : slow_calls) {
        EXPECT_NE(c.at("vthread").get<uint64_t>(), 0u) << "a virtual thread's call: " << c.dump();
        EXPECT_EQ(c.at("path").back(), "demo/latency/Skewed.call(J)V");
    }
}

}  // namespace
