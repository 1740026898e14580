// The cost taken out of a trace, decided from the trace where it can be (cost/correction.h, CostBound):
// four trivial getters are one-event leaves, so their corrected times come out near zero.
#include "harness.h"

namespace {

class Cost : public jmt_it::BpfTest {};

TEST_F(Cost, OneEventLeavesSetTheCostAndComeOutNearZero)
{
    const uint64_t n = 30000;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.getters.Getters";
    spec.jvm.args = {std::to_string(n)};
    spec.jmt_args = {"--package", "demo/getters"};
    auto r = jmt_it::run_traced(spec);
    const auto &cost = r.report.at("probe_cost");
    const uint64_t traced_ns = cost.at("traced_event_ns").get<uint64_t>();
    const uint64_t calibrated_ns = cost.at("calibrated_traced_event_ns").get<uint64_t>();
    ASSERT_GT(traced_ns, 0u);
    // Measured on the getters (the calibration is within 35% of them: what the JVM pays per
    // event was within 27% of it in 20 runs), possibly lowered further by a row that holds less
    // than its events' cost. Kept as calibrated only if the getters took over 35% more than one
    // event, which the near-zero check below rules out.
    const std::string source = cost.at("source").get<std::string>();
    EXPECT_TRUE(source == "leaves" || source == "bounded") << source;
    EXPECT_NE(cost.at("decided_by").get<std::string>().find("demo/getters/"), std::string::npos);
    std::cout << "  probe cost: " << traced_ns << " ns per traced event (" << source << "; calibrated "
              << calibrated_ns << " ns)\n";
    uint64_t cheapest = UINT64_MAX;
    for (const char *name : {"getA", "getB", "getC", "getD"}) {
        const auto &row = jmt_it::method_row(r.report, "demo/getters/Getters", name,
                                             name[3] <= 'B' ? "()I" : "()J");
        EXPECT_EQ(row.at("calls").get<uint64_t>(), n) << name;
        EXPECT_EQ(row.at("events_incl").get<uint64_t>(), n) << name;  // one event per call: its return
        const uint64_t per_call = row.at("cpu_excl_ns").get<uint64_t>() / n;
        // Near zero: a field load, less than a quarter of one probe event.
        EXPECT_LT(per_call, traced_ns / 4) << name << ": " << per_call << " ns per call";
        cheapest = std::min(cheapest, per_call);
    }
    // The cheapest getter set the cost (or a tighter row lowered it further): about 0 left.
    if (source == "leaves")
        EXPECT_LE(cheapest, 1u);
}

}  // namespace
