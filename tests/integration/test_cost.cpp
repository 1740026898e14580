// The range of what one probe event costs the traced JVM (cost/cost_range.h), checked on four
// trivial getters: each call is one event (its return) and a field load, so its measured time per
// call is one event as this JVM pays it. The range must hold it, and the corrected getters come
// out near zero: within the range's width above the cost taken out.
#include <algorithm>

#include "cost/cost_range.h"
#include "harness.h"

namespace {

class Cost : public jmt_it::BpfTest {};

TEST_F(Cost, OneEventCallsLieInTheRangeAndComeOutNearZero)
{
    const uint64_t n = 30000;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.getters.Getters";
    spec.jvm.args = {std::to_string(n)};
    spec.jmt_args = {"--package", "demo/getters"};
    auto r = jmt_it::run_traced(spec);
    const auto &cost = r.report.at("probe_cost");
    const uint64_t traced_ns = cost.at("traced_event_ns").get<uint64_t>();
    const auto &range = cost.at("range");
    const double lo = range.at("traced_event_ns")[0].get<double>();
    const double top = range.at("traced_event_ns")[1].get<double>();
    ASSERT_GT(traced_ns, 0u);
    // Measured in the JVM: the low end on its gaps, the top on its CPU time per event; the cost
    // taken out within them.
    EXPECT_EQ(cost.at("source"), "gaps");
    EXPECT_EQ(range.at("basis"), "gaps");
    // The getters' events are all alike and cheap: the JVM's CPU per event is near one trap, and
    // the top is that trap with its most refill where that is more (refill_bound_ns).
    const double average = range.at("jvm_cpu_ns_per_event").get<double>();
    const auto edge = cost.at("gaps").at("edge_ns").get<uint64_t>();
    const double one_event = double(edge + jmt::refill_bound_ns(edge));
    EXPECT_EQ(range.at("top"), average >= one_event ? "jvm_cpu" : "trap_and_refill");
    EXPECT_EQ(top, std::max(average, one_event));
    EXPECT_LE(lo, double(traced_ns));
    EXPECT_GE(top, double(traced_ns));
    std::printf("  probe cost: %llu ns per traced event taken out, range %.0f to %.0f ns (calibrated %llu ns)\n",
                static_cast<unsigned long long>(traced_ns), lo, top,
                static_cast<unsigned long long>(cost.at("calibrated_traced_event_ns").get<uint64_t>()));
    for (const char *name : {"getA", "getB", "getC", "getD"}) {
        const auto &row = jmt_it::method_row(r.report, "demo/getters/Getters", name, name[3] <= 'B' ? "()I" : "()J");
        EXPECT_EQ(row.at("calls").get<uint64_t>(), n) << name;
        EXPECT_EQ(row.at("events_incl").get<uint64_t>(), n) << name;  // one event per call: its return
        const uint64_t per_call = row.at("cpu_excl_ns").get<uint64_t>() / n;
        // Near zero: a field load, and what this JVM paid for its event beyond the cost taken
        // out, which the range bounds: at most its top less that cost (a quarter of an event at
        // 0.8 us per event, 27% at 5.5 us where the getters' event costs 1.3x the gaps' edge).
        EXPECT_LE(double(per_call), top - double(traced_ns)) << name << ": " << per_call << " ns per call";
        // Its measured time per call (the bounds' high end is it less the low end's event) is one
        // event as the JVM pays it, and a field load: within the range, give or take a bucket.
        const double measured = row.at("bounds").at("cpu_excl_ns")[1].get<double>() / double(n) + lo;
        std::printf("  %s: %.0f ns per call measured\n", name, measured);
        EXPECT_GE(measured, 0.97 * lo) << name;
        EXPECT_LE(measured, top) << name;
    }
}

}  // namespace
