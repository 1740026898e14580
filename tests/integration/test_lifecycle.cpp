// Ending a trace: duration, SIGTERM, SIGINT; and bad input, each a one-line error.
#include <errno.h>
#include <signal.h>
#include <algorithm>
#include <set>
#include <string>
#include <unistd.h>

#include "harness.h"

using jmt_it::Child;

namespace {

nlohmann::json stop_with(int sig, const std::vector<std::string> &extra = {})
{
    jmt_it::BusyFlow jvm;
    std::vector<std::string> argv = {JMT_BINARY, "-p", jvm.pid_text(), "--json", "--package", "demo/abc"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Child jmt(argv, false);
    jmt_it::wait_tracing(jmt);
    if (sig)
        usleep(500000), jmt.signal(sig);
    EXPECT_EQ(jmt.wait_exit(30000), 0) << jmt.drain(true, 1000);
    auto report = nlohmann::json::parse(jmt.drain(false, 5000));
    // The JVM keeps running, unharmed, after the tracer detached.
    EXPECT_EQ(kill(jvm.pid(), 0), 0);
    return report;
}

// Flow's a() on its one thread: the b() and c() calls it makes (b() calls c() twice; a() calls
// b(), c(), b()), in the order they are entered and in the order they return.
constexpr char kFlowEntries[] = "bcccbcc";
constexpr char kFlowReturns[] = "ccbcccb";

// The (b, c) calls counted from one a() cut by the attach (its calls entered after it: a suffix
// of the entries) or by the end (its calls returned before it: a prefix of the returns).
std::set<std::pair<uint64_t, uint64_t>> cut_counts(const std::string &order, bool suffix)
{
    std::set<std::pair<uint64_t, uint64_t>> out;
    for (size_t k = 0; k <= order.size(); k++) {
        const std::string part = suffix ? order.substr(k) : order.substr(0, k);
        out.insert({std::count(part.begin(), part.end(), 'b'), std::count(part.begin(), part.end(), 'c')});
    }
    return out;
}

// Counted: the calls entered after the attach and returned before the end. Every whole a()
// adds exactly 2 b() and 5 c(); the a() open at the attach (its own return unmatched, not
// counted) adds a suffix of its entries, the a() open at the end (not returned, not counted) a
// prefix of its returns. So b - 2a and c - 5a are one pair of each, nothing else.
void expect_flow_tree(const nlohmann::json &report)
{
    const uint64_t a = jmt_it::calls_of(report, "demo/abc/Flow", "a", "()V");
    const uint64_t b = jmt_it::calls_of(report, "demo/abc/Flow", "b", "()V");
    const uint64_t c = jmt_it::calls_of(report, "demo/abc/Flow", "c", "()V");
    EXPECT_GT(a, 0u);
    ASSERT_GE(b, 2 * a) << "a " << a << " c " << c;
    ASSERT_GE(c, 5 * a) << "a " << a << " b " << b;
    std::set<std::pair<uint64_t, uint64_t>> possible;
    for (const auto &[b0, c0] : cut_counts(kFlowEntries, true))
        for (const auto &[b1, c1] : cut_counts(kFlowReturns, false))
            possible.insert({b0 + b1, c0 + c1});
    EXPECT_EQ(possible.count({b - 2 * a, c - 5 * a}), 1u)
        << "a " << a << " b " << b << " c " << c << ": b - 2a = " << b - 2 * a << " and c - 5a = " << c - 5 * a
        << " are no attach and end inside a()";
}

class Lifecycle : public jmt_it::BpfTest {};

TEST_F(Lifecycle, DurationEndsTheTrace)
{
    auto report = stop_with(0, {"-d", "1"});
    const uint64_t d = report["duration_ns"];
    EXPECT_GE(d, 1'000'000'000u);
    EXPECT_LT(d, 3'000'000'000u);
    expect_flow_tree(report);
}

// The end's totals are one cut of the trace. Read with 50 ms after each method's
// (JMT_TEST_SNAPSHOT_PAUSE_MS), they would count the a() calls that close meanwhile without
// the c() calls read before them, or the reverse, while the probes ran on: a CI run under
// load once counted 6,145 c() for 1,230 a() (five fewer than a() makes). The probes are
// detached before the read, so Flow's tree holds exactly.
TEST_F(Lifecycle, TheEndsTotalsAreOneCutOfTheTrace)
{
    setenv("JMT_TEST_SNAPSHOT_PAUSE_MS", "50", 1);
    auto report = stop_with(0, {"-d", "1"});
    unsetenv("JMT_TEST_SNAPSHOT_PAUSE_MS");
    expect_flow_tree(report);
}

TEST_F(Lifecycle, SigtermEndsWithAReport)
{
    auto report = stop_with(SIGTERM);
    expect_flow_tree(report);
}

TEST_F(Lifecycle, SigintEndsWithAReport)
{
    auto report = stop_with(SIGINT);
    expect_flow_tree(report);
}

// --max-overhead: Flow busy-waits on System.nanoTime(), every call a trap, so the traps take
// about all of the JVM's CPU time: the guard detaches after its two 1 s windows, well before -d,
// says why in one line, and the report covers the trace until then.
TEST_F(Lifecycle, MaxOverheadDetachesWhenTheTrapsTakeTooMuch)
{
    jmt_it::BusyFlow jvm;
    Child jmt({JMT_BINARY, "-p", jvm.pid_text(), "--json", "--package", "demo/abc", "--max-overhead", "50", "-d", "20"},
              false);
    EXPECT_EQ(jmt.wait_exit(30000), 0);
    const std::string err = jmt.drain(true, 1000);
    EXPECT_NE(err.find("of the JVM's CPU time for 2 s in a row, over --max-overhead 50%: detached from pid " +
                       jvm.pid_text()),
              std::string::npos)
        << err;
    auto report = nlohmann::json::parse(jmt.drain(false, 5000));
    const uint64_t d = report["duration_ns"];
    EXPECT_GE(d, 2'000'000'000u);
    EXPECT_LT(d, 6'000'000'000u);
    EXPECT_GT(report["overhead"]["share"].get<double>(), 0.5) << report["overhead"].dump();
    expect_flow_tree(report);
    EXPECT_EQ(kill(jvm.pid(), 0), 0);  // detached, the JVM runs on
}

// --max-overhead with --raw: the times stay as measured, but the probe cost is still
// calibrated, so the guard prices the traps and detaches as it does without --raw.
TEST_F(Lifecycle, MaxOverheadWorksWithRaw)
{
    jmt_it::BusyFlow jvm;
    Child jmt({JMT_BINARY, "-p", jvm.pid_text(), "--json", "--raw", "--package", "demo/abc", "--max-overhead", "50",
               "-d", "20"},
              false);
    EXPECT_EQ(jmt.wait_exit(30000), 0);
    const std::string err = jmt.drain(true, 1000);
    EXPECT_NE(err.find("of the JVM's CPU time for 2 s in a row, over --max-overhead 50%: detached from pid " +
                       jvm.pid_text()),
              std::string::npos)
        << err;
    auto report = nlohmann::json::parse(jmt.drain(false, 5000));
    EXPECT_EQ(report["times"], "raw");
    EXPECT_LT(report["duration_ns"].get<uint64_t>(), 6'000'000'000u);
    // Flow's every call traps: the guard's price of them is most of the JVM's CPU, as without --raw.
    EXPECT_GT(report["overhead"]["share"].get<double>(), 0.5) << report["overhead"].dump();
    expect_flow_tree(report);
    EXPECT_EQ(kill(jvm.pid(), 0), 0);  // detached, the JVM runs on
}

// Under the limit the guard never ends the trace. FixedWork's work is sized from the event cost
// this host shows (a short trace first): c() of 5 event costs (at least 5 us), so the traps of a()'s
// 16 events are about a fifth of its CPU time, on a 0.5 us host as on an 8 us one.
TEST_F(Lifecycle, MaxOverheadLeavesACheapTraceAlone)
{
    jmt_it::RunSpec probe;
    probe.jvm.main_class = "demo.abc.FixedWork";
    probe.jvm.args = {"2000", "5"};
    probe.jmt_args = {"--package", "demo/abc"};
    const auto first = jmt_it::run_traced(probe);
    ASSERT_EQ(first.jmt_exit, 0) << first.jmt_stderr;
    const double event_us = first.report["probe_cost"]["traced_event_ns"].get<double>() / 1000;
    const double c_us = std::max(5.0, 5 * event_us);
    // About 1.6 s of traced calls: a() is 13.5 c() of work and 16 events.
    const uint64_t iterations = static_cast<uint64_t>(1.6e6 / (13.5 * c_us + 16 * event_us));
    std::printf("  one event costs %.2f us here: c() of %.1f us, %llu calls of a()\n", event_us, c_us,
                static_cast<unsigned long long>(iterations));
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.abc.FixedWork";
    spec.jvm.args = {std::to_string(iterations), std::to_string(c_us)};
    spec.jmt_args = {"--package", "demo/abc", "--max-overhead", "60"};
    auto r = jmt_it::run_traced(spec);
    ASSERT_EQ(r.jmt_exit, 0) << r.jmt_stderr;
    EXPECT_EQ(r.jmt_stderr.find("max-overhead"), std::string::npos) << r.jmt_stderr;
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/abc/FixedWork", "c", "()V"), 5 * iterations);
    EXPECT_LT(r.report["overhead"]["share"].get<double>(), 0.6) << r.report["overhead"].dump();
}

// Runs the tool on bad input: non-zero exit, one line on stderr that contains `needle`.
void expect_error(const std::vector<std::string> &args, const std::string &needle)
{
    std::vector<std::string> argv = {JMT_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    Child jmt(argv, false);
    EXPECT_NE(jmt.wait_exit(30000), 0);
    std::string err = jmt.drain(true, 2000);
    EXPECT_NE(err.find(needle), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_TRUE(jmt.drain(false, 1000).empty());
}

class Errors : public jmt_it::BpfTest {};

TEST_F(Errors, NoSuchProcess)
{
    // The highest pid Linux can give (PID_MAX_LIMIT - 1) that no process holds; above it is a usage error.
    int pid = 4194303;
    while (kill(pid, 0) == 0 || errno != ESRCH)
        pid--;
    expect_error({"-p", std::to_string(pid)}, "no process with pid " + std::to_string(pid));
}

// A bad option value: exit 2, one line naming the option, the value and what is expected.
TEST(Usage, BadOptionValuesAreOneLineAndExit2)
{
    struct Case {
        std::vector<std::string> args;
        std::string line;
    };
    const std::vector<Case> cases = {
        {{"-p", "abc"}, "jmethodtime: --pid: 'abc' is not a process id (a positive integer up to 4194303)\n"},
        {{"-p", "999999999"},
         "jmethodtime: --pid: '999999999' is not a process id (a positive integer up to 4194303)\n"},
        {{"-p", "1", "-d", "-1"},
         "jmethodtime: --duration: '-1' is not a number of seconds above 0 and at most 1e9 (without -d the trace "
         "runs until Ctrl-C, SIGTERM or the JVM's exit)\n"},
        {{"-p", "1", "-i", "0"}, "jmethodtime: --interval: '0' is not a number of seconds from 0.1 to 1e9\n"},
        {{"-p", "1", "--top", "-3"}, "jmethodtime: --top: '-3' is not a number of rows (an integer, 0 for all)\n"},
        {{"-p", "1", "--min-calls", "5x"},
         "jmethodtime: --min-calls: '5x' is not a number of calls (an integer, 0 for every method)\n"},
        {{"-p", "1", "--max-paths", "99999999999999999999999"},
         "jmethodtime: --max-paths: '99999999999999999999999' is not a number of call paths (an integer from 1 to "
         "65534)\n"},
        {{"-p", "1", "--bogus"},
         "jmethodtime: The following argument was not expected: --bogus (jmethodtime --help lists the options)\n"},
        {{"-p"}, "jmethodtime: --pid: needs a value (jmethodtime --help lists what each option takes)\n"},
    };
    for (const Case &c : cases) {
        std::vector<std::string> argv = {JMT_BINARY};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        Child jmt(argv, false);
        EXPECT_EQ(jmt.wait_exit(30000), 2) << c.line;
        EXPECT_EQ(jmt.drain(true, 2000), c.line);
        EXPECT_TRUE(jmt.drain(false, 1000).empty()) << c.line;
    }
}

TEST_F(Errors, NotAJvm) { expect_error({"-p", std::to_string(getpid())}, "is not a JVM"); }

// Off and not switchable (its attach mechanism off): the one line names the flag to start it with.
TEST_F(Errors, ProbesOff)
{
    jmt_it::Workload java({"demo.abc.Flow", {"1", "1"}, {"-XX:+DisableAttachMechanism"}, false});
    ASSERT_TRUE(java.ready());
    expect_error({"-p", java.pid_text()}, "-XX:+DTraceMethodProbes");
}

TEST(Usage, BadPackage) { expect_error({"-p", "1", "--package", "org//x"}, "empty segment"); }

}  // namespace

// A JVM that exits while jmethodtime starts, at any moment: a report (exit 0, the exit said),
// or one line, exit 1, that says the JVM is gone; never another error, a crash or a hang.
TEST_F(Errors, AJvmThatExitsWhileTheTracerStartsIsOneLineOrAReport)
{
    int reported = 0, refused = 0;
    for (const int sleep_ms : {200, 500, 900, 1400, 2000, 3000}) {
        SCOPED_TRACE("the JVM exits " + std::to_string(sleep_ms) + " ms after its calls");
        jmt_it::JavaCommand command;
        command.main_class = "demo.launch.Startup";
        command.args = {"1", "0", std::to_string(sleep_ms)};
        jmt_it::Workload jvm(command, "DONE");
        ASSERT_TRUE(jvm.ready());
        Child jmt({JMT_BINARY, "-p", jvm.pid_text(), "--package", "demo/launch"}, false);
        const int exit = jmt.wait_exit(60000);
        const std::string err = jmt.drain(true, 2000);
        if (exit == 0) {
            EXPECT_NE(err.find("exited"), std::string::npos) << err;
            reported++;
            continue;
        }
        EXPECT_EQ(exit, 1) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        const bool gone = err.find("exited before its probes were attached: nothing was traced") != std::string::npos ||
                          err.find("no process with pid " + jvm.pid_text()) != std::string::npos;
        EXPECT_TRUE(gone) << err;
        refused++;
    }
    std::printf("  %d traces reported the exit, %d refused in one line\n", reported, refused);
}
