#include <gtest/gtest.h>

#include "cost/calibrate.h"
#include "cost/correction.h"
#include "model/profile.h"

namespace {

jmt::MethodRow row(const std::string &k, const std::string &m, const std::string &s, uint64_t calls, uint64_t incl,
                   uint64_t excl, uint64_t cpu_incl = 0, uint64_t cpu_excl = 0, uint64_t unreturned = 0)
{
    jmt::MethodRow r;
    r.klass = k;
    r.method = m;
    r.signature = s;
    r.stats.calls = calls;
    r.stats.wall_incl_ns = incl;
    r.stats.wall_excl_ns = excl;
    r.stats.cpu_incl_ns = cpu_incl;
    r.stats.cpu_excl_ns = cpu_excl;
    r.stats.unreturned = unreturned;
    return r;
}

std::vector<std::string> names_of(const std::vector<jmt::MethodRow> &rows)
{
    std::vector<std::string> out;
    for (const auto &r : rows)
        out.push_back(r.klass + "." + r.method + r.signature);
    return out;
}

using Names = std::vector<std::string>;

TEST(MethodStats, PlusEqualsSumsEveryField)
{
    jmt::MethodStats a = row("", "", "", 1, 2, 3, 4, 5, 6).stats;
    jmt::MethodStats b = row("", "", "", 10, 20, 30, 40, 50, 60).stats;
    a.events_incl = 7, a.events_excl = 8, a.traced_incl = 9, a.traced_excl = 10;
    b.events_incl = 70, b.events_excl = 80, b.traced_incl = 90, b.traced_excl = 100;
    jmt::MethodStats &ref = (a += b);
    EXPECT_EQ(&ref, &a);
    EXPECT_EQ(a.calls, 11u);
    EXPECT_EQ(a.wall_incl_ns, 22u);
    EXPECT_EQ(a.wall_excl_ns, 33u);
    EXPECT_EQ(a.cpu_incl_ns, 44u);
    EXPECT_EQ(a.cpu_excl_ns, 55u);
    EXPECT_EQ(a.unreturned, 66u);
    EXPECT_EQ(a.events_incl, 77u);
    EXPECT_EQ(a.events_excl, 88u);
    EXPECT_EQ(a.traced_incl, 99u);
    EXPECT_EQ(a.traced_excl, 110u);
    EXPECT_EQ(b.calls, 10u);
}

// The A/B/C flow's a(): 15 events inside (all traced), 4 of them exclusive; with a 100 ns
// traced and 60 ns rejected event cost.
TEST(WithoutProbeCost, SubtractsEachKindOfEventAtItsCost)
{
    jmt::MethodStats s;
    s.calls = 1;
    s.wall_incl_ns = 10'000, s.wall_excl_ns = 4'000, s.cpu_incl_ns = 9'000, s.cpu_excl_ns = 3'000;
    s.events_incl = 15 + 10, s.traced_incl = 15;  // 10 rejected events inside too
    s.events_excl = 4 + 10, s.traced_excl = 4;
    const jmt::MethodStats c = jmt::without_probe_cost(s, {100, 60});
    EXPECT_EQ(c.wall_incl_ns, 10'000u - 1'500 - 600);
    EXPECT_EQ(c.cpu_incl_ns, 9'000u - 1'500 - 600);
    EXPECT_EQ(c.wall_excl_ns, 4'000u - 400 - 600);
    EXPECT_EQ(c.cpu_excl_ns, 3'000u - 400 - 600);
    EXPECT_EQ(c.calls, 1u);
    EXPECT_EQ(c.events_incl, 25u);  // counts are kept
}

// The traps are on-CPU time: a cost above the on-CPU time takes only that out, of elapsed time
// too (its blocked and run-queue time stay); with no on-CPU time measured, all of it.
TEST(WithoutProbeCost, TakesAtMostTheOnCpuTimeAndIdentityAtZeroCost)
{
    jmt::MethodStats s;
    s.wall_incl_ns = 500, s.wall_excl_ns = 500, s.cpu_incl_ns = 100, s.cpu_excl_ns = 100;
    s.events_incl = s.events_excl = s.traced_incl = s.traced_excl = 3;
    const jmt::MethodStats c = jmt::without_probe_cost(s, {200, 200});
    EXPECT_EQ(c.wall_incl_ns, 400u);
    EXPECT_EQ(c.cpu_incl_ns, 0u);
    EXPECT_EQ(c.wall_excl_ns, 400u);
    EXPECT_EQ(c.cpu_excl_ns, 0u);
    s.cpu_incl_ns = s.cpu_excl_ns = 0;
    EXPECT_EQ(jmt::without_probe_cost(s, {100, 100}).wall_incl_ns, 200u);
    s.cpu_incl_ns = s.cpu_excl_ns = 100;
    const jmt::MethodStats same = jmt::without_probe_cost(s, {});
    EXPECT_EQ(same.wall_incl_ns, 500u);
    EXPECT_EQ(same.cpu_excl_ns, 100u);
}

// Whole-ns costs keep corrected totals additive: a caller's correction is its
// exclusive correction plus its callee's inclusive one, to the nanosecond.
TEST(WithoutProbeCost, StaysAdditiveAcrossCallerAndCallee)
{
    jmt::MethodStats caller, callee;
    caller.wall_incl_ns = 10'000'003, caller.wall_excl_ns = 4'000'001;
    caller.events_incl = 1'234, caller.traced_incl = 777;
    caller.events_excl = 1'234 - 611, caller.traced_excl = 777 - 333;
    callee.wall_incl_ns = 6'000'002, callee.wall_excl_ns = 6'000'002;
    callee.events_incl = 611, callee.traced_incl = 333;
    callee.events_excl = 611, callee.traced_excl = 333;
    const jmt::ProbeCost cost{813, 657};
    const auto a = jmt::without_probe_cost(caller, cost), b = jmt::without_probe_cost(callee, cost);
    EXPECT_LT(a.wall_incl_ns, caller.wall_incl_ns);
    EXPECT_EQ(a.wall_excl_ns + b.wall_incl_ns, a.wall_incl_ns);
}

TEST(SortedRows, DescendingByEachKey)
{
    std::vector<jmt::MethodRow> rows = {row("p/A", "x", "()V", 5, 100, 10, 7, 1),
                                        row("p/A", "y", "()V", 9, 50, 30, 3, 2),
                                        row("p/A", "z", "()V", 1, 70, 40, 9, 3)};
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Calls)), (Names{"p/A.y()V", "p/A.x()V", "p/A.z()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Incl)), (Names{"p/A.x()V", "p/A.z()V", "p/A.y()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)), (Names{"p/A.z()V", "p/A.y()V", "p/A.x()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::CpuIncl)), (Names{"p/A.z()V", "p/A.x()V", "p/A.y()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::CpuExcl)), (Names{"p/A.z()V", "p/A.y()V", "p/A.x()V"}));
}

TEST(SortedRows, TiesByClassThenMethodThenSignatureAscending)
{
    // All tie on the key; input order is deliberately reversed.
    std::vector<jmt::MethodRow> rows = {row("p/B", "a", "()V", 1, 5, 5), row("p/A", "b", "()V", 1, 5, 5),
                                        row("p/A", "a", "(J)V", 1, 5, 5), row("p/A", "a", "(I)V", 1, 5, 5),
                                        row("p/C", "a", "()V", 2, 1, 1)};
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)),
              (Names{"p/A.a(I)V", "p/A.a(J)V", "p/A.b()V", "p/B.a()V", "p/C.a()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Calls)),
              (Names{"p/C.a()V", "p/A.a(I)V", "p/A.a(J)V", "p/A.b()V", "p/B.a()V"}));
}

TEST(SortedRows, ComparesFullValuesNotTruncated)
{
    // Values above 2^32 and above 2^53 must not collapse.
    std::vector<jmt::MethodRow> rows = {row("p/A", "small", "()V", 1, 0, (1ULL << 32) + 1),
                                        row("p/A", "big", "()V", 1, 0, (1ULL << 53) + 1),
                                        row("p/A", "bigger", "()V", 1, 0, (1ULL << 53) + 2)};
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)),
              (Names{"p/A.bigger()V", "p/A.big()V", "p/A.small()V"}));
}

TEST(SortedRows, EmptyAndInputUnchanged)
{
    EXPECT_TRUE(jmt::sorted_rows({}, jmt::SortKey::Calls).empty());
    std::vector<jmt::MethodRow> rows = {row("p/A", "x", "()V", 1, 1, 1), row("p/A", "y", "()V", 2, 2, 2)};
    auto sorted = jmt::sorted_rows(rows, jmt::SortKey::Calls);
    EXPECT_EQ(names_of(sorted), (Names{"p/A.y()V", "p/A.x()V"}));
    EXPECT_EQ(names_of(rows), (Names{"p/A.x()V", "p/A.y()V"}));
    EXPECT_EQ(sorted[0].stats.wall_incl_ns, 2u);  // stats travel with their row
}

TEST(MergeRows, SumsEqualMethodsKeepsOverloadsAndClassesApartInFirstSeenOrder)
{
    std::vector<jmt::MethodRow> rows = {
        row("p/B", "f", "()V", 4, 40, 20, 4, 2, 0),  row("p/A", "f", "()V", 1, 10, 5, 1, 1, 1),
        row("p/A", "f", "(I)V", 2, 20, 10, 2, 1, 0), row("p/A", "f", "()V", 3, 30, 15, 3, 2, 2),
        row("p/A", "g", "()V", 5, 50, 25, 5, 3, 0),  row("p/A", "f", "()V", 6, 60, 30, 6, 4, 3)};
    auto merged = jmt::merge_rows(rows);
    ASSERT_EQ(names_of(merged), (Names{"p/B.f()V", "p/A.f()V", "p/A.f(I)V", "p/A.g()V"}));
    const jmt::MethodStats &f = merged[1].stats;
    EXPECT_EQ(f.calls, 10u);
    EXPECT_EQ(f.wall_incl_ns, 100u);
    EXPECT_EQ(f.wall_excl_ns, 50u);
    EXPECT_EQ(f.cpu_incl_ns, 10u);
    EXPECT_EQ(f.cpu_excl_ns, 7u);
    EXPECT_EQ(f.unreturned, 6u);
    EXPECT_EQ(merged[0].stats.calls, 4u);
    EXPECT_EQ(merged[2].stats.calls, 2u);
    EXPECT_EQ(merged[2].stats.wall_incl_ns, 20u);
    EXPECT_EQ(merged[3].stats.calls, 5u);
}

TEST(MergeRows, NameFieldsAreNotConcatenated)
{
    // "a"+"bc" and "ab"+"c" are different methods even though the bytes join equally.
    std::vector<jmt::MethodRow> rows = {row("p/A", "a", "bc", 1, 1, 1), row("p/A", "ab", "c", 1, 1, 1),
                                        row("p/Aa", "", "bc", 1, 1, 1)};
    EXPECT_EQ(jmt::merge_rows(rows).size(), 3u);
    EXPECT_TRUE(jmt::merge_rows({}).empty());
}

TEST(RowsWithMinCalls, KeepsRowsAtOrAboveTheBoundInOrder)
{
    std::vector<jmt::MethodRow> rows = {row("p/A", "a", "()V", 5, 1, 1), row("p/B", "b", "()V", 1, 1, 1),
                                        row("p/C", "c", "()V", 9, 1, 1)};
    const auto kept = jmt::rows_with_min_calls(rows, 5);
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(kept[0].klass, "p/A");
    EXPECT_EQ(kept[1].klass, "p/C");
    EXPECT_EQ(jmt::rows_with_min_calls(rows, 0).size(), 3u);
    EXPECT_TRUE(jmt::rows_with_min_calls(rows, 10).empty());
}

TEST(ProbeDominated, MoreThanHalfOfTheInclusiveTimeIsProbeCost)
{
    const jmt::ProbeCost cost{1000, 500};
    jmt::MethodStats s;
    s.events_incl = 5;  // 1 traced + 4 rejected: 3000 ns of probe cost
    s.traced_incl = 1;
    s.wall_incl_ns = 6000;  // exactly half: not yet
    s.cpu_incl_ns = 6000;
    EXPECT_FALSE(jmt::probe_dominated(s, cost));
    s.wall_incl_ns = 5999;
    EXPECT_TRUE(jmt::probe_dominated(s, cost));
    s.wall_incl_ns = 60000;  // waited for a CPU: elapsed stretched, on-CPU still mostly traps
    s.cpu_incl_ns = 5000;
    EXPECT_TRUE(jmt::probe_dominated(s, cost));
    s.cpu_incl_ns = 6000;
    s.wall_incl_ns = 100;  // correction larger than the measurement: clamped times, flagged
    EXPECT_TRUE(jmt::probe_dominated(s, cost));
    s.events_incl = s.traced_incl = 0;
    EXPECT_FALSE(jmt::probe_dominated(s, cost));  // nothing taken out
    s.events_incl = 1;
    s.traced_incl = 1;
    s.wall_incl_ns = s.cpu_incl_ns = UINT64_MAX;  // no overflow in the comparison
    EXPECT_FALSE(jmt::probe_dominated(s, {UINT64_MAX / 2, 0}));
}

}  // namespace

// --foreign: the events inside untraced callees come out of the foreign time, which
// stays within the corrected exclusive time.
TEST(ProbeCost, ForeignTimeLosesItsOwnEventsAndStaysWithinExclusive)
{
    jmt::MethodStats s;
    s.calls = 1;
    s.wall_incl_ns = s.wall_excl_ns = 10'000;
    s.cpu_incl_ns = s.cpu_excl_ns = 8'000;
    s.events_incl = s.events_excl = 20, s.traced_incl = s.traced_excl = 4;
    s.wall_foreign_ns = 6'000, s.cpu_foreign_ns = 5'000;
    s.events_foreign = 12, s.traced_foreign = 2;
    const jmt::MethodStats c = jmt::without_probe_cost(s, {100, 60});
    EXPECT_EQ(c.wall_excl_ns, 10'000u - 4 * 100 - 16 * 60);
    EXPECT_EQ(c.wall_foreign_ns, 6'000u - 2 * 100 - 10 * 60);
    EXPECT_EQ(c.cpu_foreign_ns, 5'000u - 2 * 100 - 10 * 60);
    EXPECT_EQ(c.events_foreign, 12u);
    // Foreign time measured at (nearly) all of the exclusive time stays within it.
    s.wall_foreign_ns = s.wall_excl_ns, s.events_foreign = 1, s.traced_foreign = 0;
    const jmt::MethodStats d = jmt::without_probe_cost(s, {100, 60});
    EXPECT_EQ(d.wall_foreign_ns, d.wall_excl_ns);
}

// The samples inside the window, without the outer quartiles: a batch an interrupt hit
// (5000 ns) and one cut short (10 ns) do not move the estimate.
TEST(CostEstimate, InterquartileMeanOfTheWindowsSamples)
{
    std::vector<jmt::CostSample> samples = {jmt::CostSample{0, 3000, 3000}};  // start-up, outside the window
    const double traced[] = {950, 900, 5000, 940, 910, 10, 930, 920};
    for (int i = 0; i < 8; i++)
        samples.push_back(jmt::CostSample{100 + static_cast<uint64_t>(i), traced[i], traced[i] - 200});
    samples.push_back(jmt::CostSample{500, 1, 1});  // after the window
    const jmt::CostEstimate e = jmt::estimate_probe_cost(samples, 100, 107);
    EXPECT_EQ(e.samples, 8u);
    EXPECT_EQ(e.cost.traced_event_ns, 925u);  // (910 + 920 + 930 + 940) / 4
    EXPECT_EQ(e.cost.rejected_event_ns, 725u);
}

// A window with fewer than kMinWindowSamples samples (a short interval) uses them all.
TEST(CostEstimate, ShortWindowFallsBackOnEverySample)
{
    std::vector<jmt::CostSample> samples = {jmt::CostSample{0, 1000, 800}, jmt::CostSample{10, 1100, 900},
                                            jmt::CostSample{20, 1200, 1000}};
    jmt::CostEstimate e = jmt::estimate_probe_cost(samples, 15, 25);
    EXPECT_EQ(e.samples, 3u);
    EXPECT_EQ(e.cost.traced_event_ns, 1100u);
    EXPECT_EQ(e.cost.rejected_event_ns, 900u);
    e = jmt::estimate_probe_cost({}, 0, 100);
    EXPECT_EQ(e.samples, 0u);
    EXPECT_EQ(e.cost.traced_event_ns, 0u);
}
