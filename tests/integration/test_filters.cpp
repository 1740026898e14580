// --class / --method globs (decided in the kernel at first sight of each
// method) and --per-thread rows, on real JVMs (examples/java/demo/globs).
#include <map>
#include <set>
#include <string>

#include "harness.h"

using jmt_it::calls_of;
using jmt_it::find_method;
using jmt_it::RunSpec;

namespace {

const std::string kShop = "demo/globs/shop/Shop";
const std::string kInner = "demo/globs/shop/Shop$Inner";
const std::string kDecoy = "demo/globs/decoy/Inner";

uint64_t u64(const nlohmann::json &row, const char *field) { return row[field].get<uint64_t>(); }

// Inclusive elapsed time of the call paths whose last two frames are caller then callee (method
// names, "getB" then "getA"): the callee's time within the caller's calls.
uint64_t callee_time_in(const nlohmann::json &report, const std::string &caller, const std::string &callee)
{
    auto named = [](const nlohmann::json &frame, const std::string &method) {
        const std::string f = frame.get<std::string>();
        return f.find("." + method + "(") != std::string::npos;
    };
    uint64_t ns = 0;
    for (const auto &p : report.at("paths")) {
        const auto &frames = p.at("frames");
        const size_t n = frames.size();
        if (n >= 2 && named(frames[n - 2], caller) && named(frames[n - 1], callee))
            ns += p.at("wall_incl_ns").get<uint64_t>();
    }
    return ns;
}

// The glob semantics, independently of the kernel's matcher: '*' any run, '?' one byte.
bool glob(const char *p, const char *s)
{
    if (*p == '\0')
        return *s == '\0';
    if (*p == '*')
        return glob(p + 1, s) || (*s != '\0' && glob(p, s + 1));
    return *s != '\0' && (*p == '?' || *p == *s) && glob(p + 1, s + 1);
}

// Every row's field matches one of the globs; returns the rows that do not.
std::vector<std::string> rows_not_matching(const nlohmann::json &report, const char *field,
                                           const std::vector<std::string> &globs)
{
    std::vector<std::string> bad;
    for (const auto &m : report["methods"]) {
        const std::string v = m[field].get<std::string>();
        bool ok = false;
        for (const auto &g : globs)
            ok = ok || glob(g.c_str(), v.c_str());
        if (!ok)
            bad.push_back(m["class"].get<std::string>() + "." + m["method"].get<std::string>());
    }
    return bad;
}

// demo.globs.GlobMain N: the call tree of demo/globs/shop/Shop.java; times raw.
jmt_it::RunResult run_shop(int n, const std::vector<std::string> &filters, bool long_names = false)
{
    RunSpec spec;
    spec.jvm.main_class = "demo.globs.GlobMain";
    spec.jvm.args = {std::to_string(n)};
    if (long_names)
        spec.jvm.args.push_back("LONG");
    spec.jmt_args = {"--raw"};
    spec.jmt_args.insert(spec.jmt_args.end(), filters.begin(), filters.end());
    return jmt_it::run_traced(spec);
}

class Filter : public jmt_it::BpfTest {};

TEST_F(Filter, MethodGlobKeepsOnlyMatchingMethodsWithExactCounts)
{
    const int n = 200;
    auto r = run_shop(n, {"--method", "get*"});
    ASSERT_EQ(calls_of(r.report, kShop, "getA", "()I"), uint64_t(2 * n)) << r.report.dump(1);
    EXPECT_EQ(calls_of(r.report, kShop, "getB", "()I"), uint64_t(n));
    EXPECT_EQ(calls_of(r.report, kInner, "getC", "()I"), uint64_t(5 * n));
    EXPECT_EQ(calls_of(r.report, kDecoy, "getC", "()I"), uint64_t(n));
    EXPECT_EQ(find_method(r.report, kShop, "setA", "(I)V"), nullptr);
    EXPECT_EQ(find_method(r.report, kInner, "setC", "(I)V"), nullptr);
    EXPECT_EQ(find_method(r.report, kShop, "<init>", "()V"), nullptr);
    // No class constraint: the JDK's get* methods are traced too, and nothing else is.
    EXPECT_EQ(rows_not_matching(r.report, "method", {"get*"}), std::vector<std::string>{});
    EXPECT_GT(r.report["methods"].size(), 4u);
    EXPECT_EQ(r.report["diagnostics"]["glob_budget_out"], 0);
    // Not split by thread: no thread keys.
    EXPECT_FALSE(r.report["methods"][0].contains("tid"));
    EXPECT_FALSE(r.report["methods"][0].contains("thread"));

    // getA's only callee, setA, is untraced: its time stays in getA's exclusive time.
    const auto &get_a = jmt_it::method_row(r.report, kShop, "getA", "()I");
    EXPECT_NEAR(static_cast<double>(u64(get_a, "wall_excl_ns")), static_cast<double>(u64(get_a, "wall_incl_ns")),
                0.01 * u64(get_a, "wall_incl_ns"));
    // getB's callee getA is traced: getB's own unit of work against getA's three.
    const auto &get_b = jmt_it::method_row(r.report, kShop, "getB", "()I");
    EXPECT_LT(u64(get_b, "wall_excl_ns"), 0.6 * u64(get_b, "wall_incl_ns"));
}

TEST_F(Filter, MethodGlobLeavesUntracedCalleesInExclusiveTime)
{
    const int n = 200;
    // Everything of the shop traced: setA's time leaves getA's exclusive time.
    auto all = run_shop(n, {"--package", "demo/globs/shop"});
    const auto *all_get_a = find_method(all.report, kShop, "getA", "()I");
    const auto *all_set_a = find_method(all.report, kShop, "setA", "(I)V");
    ASSERT_TRUE(all_get_a && all_set_a) << all.report.dump(1);
    EXPECT_EQ(u64(*all_set_a, "calls"), uint64_t(3 * n));
    // getA: 1 unit of its own, setA 2 units: exclusive about a third of inclusive.
    const double all_ratio = double(u64(*all_get_a, "wall_excl_ns")) / double(u64(*all_get_a, "wall_incl_ns"));
    EXPECT_LT(all_ratio, 0.6) << all.report.dump(1);

    // Only get*: setA untraced, its time is getA's own now.
    auto gets = run_shop(n, {"--package", "demo/globs/shop", "--method", "get*"});
    const auto *get_a = find_method(gets.report, kShop, "getA", "()I");
    ASSERT_TRUE(get_a) << gets.report.dump(1);
    EXPECT_EQ(find_method(gets.report, kShop, "setA", "(I)V"), nullptr);
    const double ratio = double(u64(*get_a, "wall_excl_ns")) / double(u64(*get_a, "wall_incl_ns"));
    EXPECT_GT(ratio, 0.99);
    // And getA's inclusive time is of the same kind in both runs (3 units a call).
    const double all_incl = double(u64(*all_get_a, "wall_incl_ns")), incl = double(u64(*get_a, "wall_incl_ns"));
    EXPECT_GT(incl, 0.5 * all_incl);
    EXPECT_LT(incl, 2.0 * all_incl);
}

TEST_F(Filter, ClassGlobKeepsOnlyMatchingClasses)
{
    const int n = 150;
    auto r = run_shop(n, {"--class", "*Inner"});
    ASSERT_EQ(calls_of(r.report, kInner, "getC", "()I"), uint64_t(5 * n)) << r.report.dump(1);
    EXPECT_EQ(calls_of(r.report, kInner, "setC", "(I)V"), uint64_t(3 * n));
    EXPECT_EQ(calls_of(r.report, kDecoy, "getC", "()I"), uint64_t(n));
    EXPECT_EQ(jmt_it::rows_with_class_prefix(r.report, kShop + "."), 0u);
    EXPECT_EQ(find_method(r.report, kShop, "getA", "()I"), nullptr);
    EXPECT_EQ(rows_not_matching(r.report, "class", {"*Inner"}), std::vector<std::string>{});
    // setC's callee getC is traced: exclusive is inclusive less getC's calls from setC.
    const auto &set_c = jmt_it::method_row(r.report, kInner, "setC", "(I)V");
    EXPECT_LT(u64(set_c, "wall_excl_ns"), u64(set_c, "wall_incl_ns"));
}

TEST_F(Filter, ClassGlobIsAnchoredAndTakesTheDottedForm)
{
    const int n = 100;
    // A literal class: Shop, not Shop$Inner (anchored at the end), not the decoy.
    auto r = run_shop(n, {"--class", "demo.globs.shop.Shop"});
    ASSERT_EQ(calls_of(r.report, kShop, "getA", "()I"), uint64_t(2 * n)) << r.report.dump(1);
    EXPECT_EQ(calls_of(r.report, kShop, "getB", "()I"), uint64_t(n));
    EXPECT_EQ(calls_of(r.report, kShop, "setA", "(I)V"), uint64_t(3 * n));
    EXPECT_EQ(calls_of(r.report, kShop, "<init>", "()V"), uint64_t(n));
    EXPECT_EQ(r.report["methods"].size(), 4u) << r.report.dump(1);
    EXPECT_EQ(find_method(r.report, kInner, "getC", "()I"), nullptr);
    // With every Shop method traced, a method's inclusive less its exclusive time is its traced
    // callees' time within its calls, as the call paths hold it (getB calls getA, getA calls setA).
    // A share of the nominal work (getB 1 of 4 units) is not asserted: with 100 calls the JIT
    // compiles one loop before another (getB's own came out 0.64 of it in a CI run).
    const auto &get_a = jmt_it::method_row(r.report, kShop, "getA", "()I");
    const auto &get_b = jmt_it::method_row(r.report, kShop, "getB", "()I");
    const double a_callees = double(u64(get_a, "wall_incl_ns") - u64(get_a, "wall_excl_ns"));
    const double b_callees = double(u64(get_b, "wall_incl_ns") - u64(get_b, "wall_excl_ns"));
    EXPECT_GT(a_callees, 0.0);
    EXPECT_GT(b_callees, 0.0);
    EXPECT_NEAR(a_callees, double(callee_time_in(r.report, "getA", "setA")), 0.001 * a_callees + 1000);
    EXPECT_NEAR(b_callees, double(callee_time_in(r.report, "getB", "getA")), 0.001 * b_callees + 1000);
}

TEST_F(Filter, PackageClassAndMethodFiltersAllMustMatch)
{
    const int n = 150;
    // Decoy: class and method match, package not. Shop.getA: package and method, class not.
    // Shop$Inner.setC: package and class, method not. Only Shop$Inner.getC passes all three.
    auto r = run_shop(n, {"--package", "demo.globs.shop", "--class", "*Inner", "--method", "get*"});
    ASSERT_EQ(calls_of(r.report, kInner, "getC", "()I"), uint64_t(5 * n)) << r.report.dump(1);
    EXPECT_EQ(r.report["methods"].size(), 1u) << r.report.dump(1);
    EXPECT_EQ(r.report["packages"], nlohmann::json::array({"demo/globs/shop"}));
    // getC calls nothing: its exclusive time is its inclusive time.
    const auto &get_c = jmt_it::method_row(r.report, kInner, "getC", "()I");
    EXPECT_EQ(u64(get_c, "wall_excl_ns"), u64(get_c, "wall_incl_ns"));
}

TEST_F(Filter, RepeatedGlobsAreAlternatives)
{
    const int n = 100;
    auto r = run_shop(n, {"--package", "demo/globs", "--class", "*/Shop", "--class", "*decoy/*", "--method", "getA",
                          "--method", "set?", "--method", "<init>", "--method", "getC"});
    ASSERT_EQ(calls_of(r.report, kShop, "getA", "()I"), uint64_t(2 * n)) << r.report.dump(1);
    EXPECT_EQ(calls_of(r.report, kShop, "setA", "(I)V"), uint64_t(3 * n));
    EXPECT_EQ(calls_of(r.report, kShop, "<init>", "()V"), uint64_t(n));
    EXPECT_EQ(calls_of(r.report, kDecoy, "getC", "()I"), uint64_t(n));
    // Shop$Inner.getC matches a method glob, but its class matches neither class glob;
    // getB matches no method glob; the decoy has no <init> call (static methods only).
    EXPECT_EQ(find_method(r.report, kInner, "getC", "()I"), nullptr);
    EXPECT_EQ(find_method(r.report, kShop, "getB", "()I"), nullptr);
    EXPECT_EQ(r.report["methods"].size(), 4u) << r.report.dump(1);
    // getA's traced callee setA leaves its exclusive time.
    const auto &get_a = jmt_it::method_row(r.report, kShop, "getA", "()I");
    EXPECT_LT(u64(get_a, "wall_excl_ns"), 0.6 * u64(get_a, "wall_incl_ns"));
}

TEST_F(Filter, GlobOutOfStepsIsCountedAndNotTraced)
{
    const int n = 50;
    const std::string long_method(480, 'a');
    // '*' + 125 'a's + 'b' against the 480-character name: more than the kernel's step budget.
    const std::string pathological = "*" + std::string(125, 'a') + "b";
    ASSERT_EQ(pathological.size(), 127u);
    auto r = run_shop(n, {"--package", "demo/globs", "--method", pathological, "--method", "ping"}, true);
    ASSERT_EQ(calls_of(r.report, "demo/globs/LongNames", "ping", "()I"), uint64_t(n)) << r.report.dump(1);
    EXPECT_EQ(find_method(r.report, "demo/globs/LongNames", long_method, "()I"), nullptr);
    EXPECT_EQ(r.report["methods"].size(), 1u) << r.report.dump(1);
    // Given up once, for that one method: the verdict is kept.
    EXPECT_EQ(r.report["diagnostics"]["glob_budget_out"], 1) << r.report["diagnostics"].dump(1);

    // A cheap glob matches the same long name.
    auto cheap = run_shop(n, {"--package", "demo/globs", "--method", "a*a"}, true);
    EXPECT_EQ(calls_of(cheap.report, "demo/globs/LongNames", long_method, "()I"), uint64_t(n)) << cheap.report.dump(1);
    EXPECT_EQ(cheap.report["methods"].size(), 1u) << cheap.report.dump(1);
    EXPECT_EQ(cheap.report["diagnostics"]["glob_budget_out"], 0);
}

class PerThread : public jmt_it::BpfTest {};

// demo.globs.Workers N: worker-1..3 call task() 1000 N, 2000 N, 3000 N times, main 500 N.
TEST_F(PerThread, RowsSplitByThreadWithExactCountsAndNames)
{
    const int n = 2;
    RunSpec spec;
    spec.jvm.main_class = "demo.globs.Workers";
    spec.jvm.args = {std::to_string(n)};
    spec.jmt_args = {"--raw", "--per-thread", "--package", "demo/globs"};
    auto r = jmt_it::run_traced(spec);
    const std::string k = "demo/globs/Workers";
    const uint64_t total = jmt_it::done_value(r.done_line, "calls");
    ASSERT_EQ(total, uint64_t(6500 * n)) << r.done_line;

    std::map<std::string, const nlohmann::json *> task_by_thread, step_by_thread;
    std::set<uint64_t> task_tids;
    uint64_t task_sum = 0, step_sum = 0;
    for (const auto &m : r.report["methods"]) {
        ASSERT_TRUE(m.contains("tid") && m.contains("thread")) << m.dump();
        EXPECT_GT(m["tid"].get<uint64_t>(), 0u) << m.dump();
        if (m["class"] != k)
            continue;
        if (m["method"] == "task") {
            task_by_thread[m["thread"].get<std::string>()] = &m;
            task_tids.insert(m["tid"].get<uint64_t>());
            task_sum += u64(m, "calls");
        } else if (m["method"] == "step") {
            step_by_thread[m["thread"].get<std::string>()] = &m;
            step_sum += u64(m, "calls");
        }
    }
    // Each worker's row has exactly its calls, under its name (read in the kernel
    // when the thread first ran a traced method: the threads have exited by now).
    for (int w = 1; w <= 3; w++) {
        const std::string name = "worker-" + std::to_string(w);
        ASSERT_TRUE(task_by_thread.count(name)) << name << " missing: " << r.report.dump(1);
        EXPECT_EQ(u64(*task_by_thread[name], "calls"), uint64_t(1000 * w * n)) << name;
        ASSERT_TRUE(step_by_thread.count(name)) << name;
        EXPECT_EQ(u64(*step_by_thread[name], "calls"), uint64_t(2000 * w * n)) << name;
        // step() is task()'s only callee, on the same thread: per-thread arithmetic is exact.
        const auto &task = *task_by_thread[name];
        const auto &step = *step_by_thread[name];
        EXPECT_EQ(u64(task, "wall_excl_ns") + u64(step, "wall_incl_ns"), u64(task, "wall_incl_ns")) << name;
        EXPECT_EQ(task["tid"], step["tid"]) << name;
    }
    // The main thread's row, and one distinct thread id per thread.
    EXPECT_EQ(task_by_thread.size(), 4u) << r.report.dump(1);
    EXPECT_EQ(task_tids.size(), 4u);
    bool main_found = false;
    for (const auto &[name, row] : task_by_thread)
        if (u64(*row, "calls") == uint64_t(500 * n))
            main_found = !name.empty() && name.rfind("worker-", 0) != 0;
    EXPECT_TRUE(main_found) << r.report.dump(1);
    // The rows add up to the workload's own count.
    EXPECT_EQ(task_sum, total);
    EXPECT_EQ(step_sum, 2 * total);
    EXPECT_EQ(r.report["diagnostics"]["thread_rows_full"], 0);
}

TEST_F(PerThread, SplitRowsSumToTheUnsplitTotals)
{
    const int n = 1;
    RunSpec spec;
    spec.jvm.main_class = "demo.globs.Workers";
    spec.jvm.args = {std::to_string(n)};
    spec.jmt_args = {"--raw", "--package", "demo/globs", "--method", "task"};
    auto whole = jmt_it::run_traced(spec);
    const uint64_t unsplit = calls_of(whole.report, "demo/globs/Workers", "task", "(I)I");
    ASSERT_EQ(unsplit, uint64_t(6500 * n)) << whole.report.dump(1);
    EXPECT_EQ(whole.report["methods"].size(), 1u);

    spec.jmt_args.push_back("--per-thread");
    auto split = jmt_it::run_traced(spec);
    uint64_t sum = 0;
    std::set<std::string> names;
    for (const auto &m : split.report["methods"]) {
        ASSERT_EQ(m["method"], "task") << m.dump();
        sum += u64(m, "calls");
        names.insert(m["thread"].get<std::string>());
    }
    EXPECT_EQ(split.report["methods"].size(), 4u) << split.report.dump(1);
    EXPECT_EQ(sum, unsplit);
    for (const char *w : {"worker-1", "worker-2", "worker-3"})
        EXPECT_TRUE(names.count(w)) << w << ": " << split.report.dump(1);
}

// With the per-thread table full, the calls of threads without a row go to one
// row per method, "[not split: thread table full]", counted frame by frame in
// thread_rows_full, and the rows still add up to the workload's count. The
// table is made to fill with JMT_TEST_THREAD_ROWS=3: row ids 1 and 2 for the
// first two (thread, task) pairs of the workload's four.
TEST_F(PerThread, AFullTableLeavesTheRestInOneRowPerMethod)
{
    const int n = 1;
    RunSpec spec;
    spec.jvm.main_class = "demo.globs.Workers";
    spec.jvm.args = {std::to_string(n)};
    spec.jmt_args = {"--raw", "--per-thread", "--package", "demo/globs", "--method", "task"};
    setenv("JMT_TEST_THREAD_ROWS", "3", 1);
    auto r = jmt_it::run_traced(spec);
    unsetenv("JMT_TEST_THREAD_ROWS");
    const uint64_t total = jmt_it::done_value(r.done_line, "calls");
    ASSERT_EQ(total, uint64_t(6500 * n)) << r.done_line;

    uint64_t sum = 0, unsplit = 0;
    size_t split_rows = 0, unsplit_rows = 0;
    const std::set<uint64_t> per_thread_counts{500u * n, 1000u * n, 2000u * n, 3000u * n};
    for (const auto &m : r.report["methods"]) {
        ASSERT_EQ(m["method"], "task") << m.dump();
        sum += u64(m, "calls");
        if (m["tid"] == 0) {
            EXPECT_EQ(m["thread"], "[not split: thread table full]") << m.dump();
            unsplit += u64(m, "calls");
            unsplit_rows++;
        } else {
            // A split row holds one thread's exact count.
            EXPECT_TRUE(per_thread_counts.count(u64(m, "calls"))) << m.dump();
            split_rows++;
        }
    }
    EXPECT_EQ(split_rows, 2u) << r.report.dump(1);
    EXPECT_EQ(unsplit_rows, 1u) << r.report.dump(1);
    EXPECT_EQ(sum, total);
    EXPECT_EQ(r.report["diagnostics"]["thread_rows_full"], unsplit) << r.report["diagnostics"].dump(1);
}

}  // namespace
