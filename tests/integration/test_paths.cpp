// Call paths aggregated in the kernel, read back through --folded and --tree:
// exact path counts from call trees built for it, bounded under recursion.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

#include "control/launch.h"
#include "harness.h"

namespace {

// "a;b;c value" lines of --folded output: path -> value.
std::map<std::string, uint64_t> folded_lines(const std::string &text)
{
    std::map<std::string, uint64_t> paths;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const size_t space = line.rfind(' ');
        EXPECT_NE(space, std::string::npos) << line;
        if (space != std::string::npos)
            paths[line.substr(0, space)] += std::stoull(line.substr(space + 1));
    }
    return paths;
}

jmt_it::RunResult run_folded(const std::string &main_class, const std::vector<std::string> &args,
                             const std::vector<std::string> &jmt_args)
{
    jmt_it::RunSpec spec;
    spec.jvm.main_class = main_class;
    spec.jvm.args = args;
    spec.jmt_args = jmt_args;
    spec.json = false;
    return jmt_it::run_traced(spec);
}

class Paths : public jmt_it::BpfTest {};

TEST_F(Paths, AbcFlowGivesExactlyItsFourPathsWithTheirCounts)
{
    const uint64_t n = 3000;
    auto r = run_folded("demo.abc.FixedWork", {std::to_string(n), "5"},
                        {"--package", "demo/abc", "--folded", "--metric", "calls"});
    const auto paths = folded_lines(r.jmt_stdout);
    // run(int) is the outermost traced frame entered after the attach (main was entered before).
    const std::string run = "demo.abc.FixedWork.run(int)", a = run + ";demo.abc.FixedWork.a()";
    const std::map<std::string, uint64_t> expected = {{run, 1},
                                                      {a, n},
                                                      {a + ";demo.abc.FixedWork.b()", 2 * n},
                                                      {a + ";demo.abc.FixedWork.b();demo.abc.FixedWork.c()", 4 * n},
                                                      {a + ";demo.abc.FixedWork.c()", n}};
    EXPECT_EQ(paths, expected) << r.jmt_stdout;
}

TEST_F(Paths, ExclusiveTimesPerPathKeepTheSeedsProportions)
{
    const uint64_t n = 3000;
    auto r = run_folded("demo.abc.FixedWork", {std::to_string(n), "10"},
                        {"--package", "demo/abc", "--folded", "--metric", "cpu"});
    const auto paths = folded_lines(r.jmt_stdout);
    const std::string run = "demo.abc.FixedWork.run(int)", a = run + ";demo.abc.FixedWork.a()";
    const std::string ab = a + ";demo.abc.FixedWork.b()", abc = ab + ";demo.abc.FixedWork.c()",
                      ac = a + ";demo.abc.FixedWork.c()";
    ASSERT_TRUE(paths.count(a) && paths.count(ab) && paths.count(abc) && paths.count(ac)) << r.jmt_stdout;
    // On-CPU time (a busy host cannot stretch it). Work units (FixedWork): a 45 exclusive, b 20
    // per call, c 10 per call: a;b 2N x 20 = 40N,
    // a;b;c 4N x 10 = 40N, a;c N x 10 = 10N against a's 45N; 20% tolerance for a noisy VM.
    const double unit = static_cast<double>(paths.at(ac)) / 10.0;
    EXPECT_NEAR(paths.at(a) / unit, 45.0, 9.0) << r.jmt_stdout;
    EXPECT_NEAR(paths.at(ab) / unit, 40.0, 8.0) << r.jmt_stdout;
    EXPECT_NEAR(paths.at(abc) / unit, 40.0, 8.0) << r.jmt_stdout;
}

TEST_F(Paths, RecursionPathsAreOnePerDepthWithExactCounts)
{
    const int k = 12, m = 50;
    auto r = run_folded("demo.recursion.Fib", {std::to_string(k), std::to_string(m)},
                        {"--package", "demo/recursion", "--folded", "--metric", "calls", "--raw"});
    const auto paths = folded_lines(r.jmt_stdout);
    // Nodes of fib(k)'s call tree at each depth: at(k, d) = at(k-1, d-1) + at(k-2, d-1).
    std::map<std::pair<int, int>, uint64_t> at;
    for (int kk = 0; kk <= k; kk++)
        for (int d = 0; d <= k; d++)
            at[{kk, d}] = d == 0 ? 1 : kk < 2 ? 0 : at[{kk - 1, d - 1}] + at[{kk - 2, d - 1}];
    std::map<std::string, uint64_t> expected;
    std::string path = "demo.recursion.Fib.fib(int)";
    for (int d = 0; d < k; d++, path += ";demo.recursion.Fib.fib(int)")
        if (at[{k, d}])
            expected[path] = m * at[{k, d}];
    EXPECT_EQ(paths, expected) << r.jmt_stdout;
}

TEST_F(Paths, DeepRecursionIsBoundedByTheStoredStack)
{
    const int depth = 3000, leaves = 100;
    auto r = run_folded("demo.recursion.Deep", {std::to_string(depth), std::to_string(leaves), "first"},
                        {"--package", "demo/recursion", "--folded", "--metric", "calls", "--raw"});
    const auto paths = folded_lines(r.jmt_stdout);
    // Frames beyond 256 traced levels are counted per method but not stored: no path goes deeper.
    size_t deepest = 0;
    uint64_t calls = 0;
    for (const auto &[p, v] : paths) {
        deepest = std::max<size_t>(deepest, std::count(p.begin(), p.end(), ';') + 1);
        calls += v;
    }
    EXPECT_EQ(deepest, 256u) << paths.size() << " paths";
    EXPECT_EQ(paths.size(), 256u);
    EXPECT_EQ(calls, 256u);  // down() at depths 1..256 once each
}

TEST_F(Paths, TreeViewShowsTheIndentedFlow)
{
    auto r = run_folded("demo.abc.FixedWork", {"500", "5"}, {"--package", "demo/abc", "--tree", "--min-percent", "0"});
    const std::string &t = r.jmt_stdout;
    EXPECT_NE(t.find("Call tree\n"), std::string::npos) << t;
    EXPECT_NE(t.find("  500 "), std::string::npos) << t;
    for (const char *line :
         {"  demo.abc.FixedWork.run(int)\n", "    demo.abc.FixedWork.a()\n", "      demo.abc.FixedWork.b()\n",
          "        demo.abc.FixedWork.c()\n", "      demo.abc.FixedWork.c()\n"})
        EXPECT_NE(t.find(line), std::string::npos) << line << "\n" << t;
}

TEST_F(Paths, PprofShowsTheSameTotalsAsJson)
{
    const std::string file = "/tmp/jmt-paths-" + std::to_string(getpid()) + ".pb.gz";
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.abc.FixedWork";
    spec.jvm.args = {"1000", "5"};
    spec.jmt_args = {"--package", "demo/abc", "--raw", "--pprof", file};
    auto r = jmt_it::run_traced(spec);
    auto u = [&](const char *m, const char *key) {
        return jmt_it::method_row(r.report, "demo/abc/FixedWork", m, "()V")[key].get<uint64_t>();
    };
    uint64_t calls = 0, wall = 0, cpu = 0;
    for (const auto &m : r.report["methods"]) {
        calls += m["calls"].get<uint64_t>();
        wall += m["wall_excl_ns"].get<uint64_t>();
        cpu += m["cpu_excl_ns"].get<uint64_t>();
    }
    std::vector<std::string> argv = {"bash",
                                     std::string(JMT_SOURCE_DIR) + "/tests/pprof/check_pprof.sh",
                                     file,
                                     std::to_string(calls),
                                     std::to_string(wall),
                                     std::to_string(cpu)};
    auto row = [&](const std::string &label, const char *index, uint64_t flat, uint64_t cum) {
        argv.insert(argv.end(), {label, index, std::to_string(flat), std::to_string(cum)});
    };
    // Every b() and c() call runs inside a(), every c() with b() inside b(), or in a() directly.
    row("demo.abc.FixedWork.a()", "calls", u("a", "calls"), u("a", "calls") + u("b", "calls") + u("c", "calls"));
    row("demo.abc.FixedWork.c()", "calls", u("c", "calls"), u("c", "calls"));
    for (const char *m : {"a", "b", "c"}) {
        row(std::string("demo.abc.FixedWork.") + m + "()", "wall", u(m, "wall_excl_ns"), u(m, "wall_incl_ns"));
        row(std::string("demo.abc.FixedWork.") + m + "()", "cpu", u(m, "cpu_excl_ns"), u(m, "cpu_incl_ns"));
    }
    jmt_it::Child check(argv, false);
    const int status = check.wait_exit(120000);
    const std::string out = check.drain(false, 1000) + check.drain(true, 1000);
    unlink(file.c_str());
    if (status == 77 && !(getenv("CI") && std::string(getenv("CI")) == "true"))
        GTEST_SKIP() << out;
    EXPECT_EQ(status, 0) << out;
}

TEST_F(Paths, FlameGraphOfARealTraceRendersInChromium)
{
    const std::string page = "/tmp/jmt-paths-" + std::to_string(getpid()) + ".html";
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.abc.FixedWork";
    spec.jvm.args = {"1000", "5"};
    spec.jmt_args = {"--package", "demo/abc", "--flamegraph", page};
    const char *path_env = getenv("PATH");
    std::string browser = jmt::find_executable("chromium", path_env ? path_env : "");
    if (browser.empty())
        browser = jmt::find_executable("chromium-browser", path_env ? path_env : "");
    if (browser.empty()) {
        if (jmt_it::under_ci())
            FAIL() << "chromium is not on PATH (.ci/install-deps installs it)";
        GTEST_SKIP() << "chromium is not on PATH (apt-get install chromium)";
    }
    std::cout << "  " << browser << std::endl;
    auto r = jmt_it::run_traced(spec);
    // The DOM after the page's script ran: d3 drew one SVG group per frame, labelled.
    jmt_it::Child chromium({browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000",
                            "--dump-dom", "file://" + page},
                           false);
    EXPECT_EQ(chromium.wait_exit(120000), 0);
    const std::string dom = chromium.drain(false, 2000);
    unlink(page.c_str());
    for (const char *label : {">demo.abc.FixedWork.run(int)<", ">demo.abc.FixedWork.a()<", ">demo.abc.FixedWork.b()<"})
        EXPECT_NE(dom.find(label), std::string::npos) << label << " not drawn";
    EXPECT_NE(dom.find("<svg class=\"flamegraph"), std::string::npos);
    EXPECT_NE(dom.find("outermost traced calls"), std::string::npos);
}

TEST_F(Paths, AFullPathTableCountsTheRestUnderTruncated)
{
    const uint64_t n = 500;
    // Two paths fit: run(int) and run;a. a;b and a;c find the table full, and everything above
    // them (a;b;c) is truncated too: 2N + N + 4N calls under [truncated].
    auto r = run_folded("demo.abc.FixedWork", {std::to_string(n), "5"},
                        {"--package", "demo/abc", "--folded", "--metric", "calls", "--max-paths", "2"});
    const auto paths = folded_lines(r.jmt_stdout);
    const std::string run = "demo.abc.FixedWork.run(int)";
    const std::map<std::string, uint64_t> expected = {
        {run, 1}, {run + ";demo.abc.FixedWork.a()", n}, {"[truncated]", 7 * n}};
    EXPECT_EQ(paths, expected) << r.jmt_stdout;
    // The tree view says how many frames were turned away: each entry of a;b and a;c.
    auto t = run_folded("demo.abc.FixedWork", {std::to_string(n), "5"},
                        {"--package", "demo/abc", "--tree", "--max-paths", "2", "--min-percent", "0"});
    EXPECT_NE(t.jmt_stdout.find("  [truncated]\n"), std::string::npos) << t.jmt_stdout;
    EXPECT_NE(t.jmt_stdout.find("paths_full: " + std::to_string(3 * n) +
                                " frames were counted under the call "
                                "path [truncated]"),
              std::string::npos)
        << t.jmt_stdout;
}

}  // namespace
