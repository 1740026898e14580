// Probe events counted per frame (the basis of the trap-cost correction):
// exact on a workload whose calls are all known and that makes no other calls.
#include "harness.h"

namespace {

uint64_t field(const nlohmann::json &report, const char *method, const char *key)
{
    return jmt_it::method_row(report, "demo/bench/AbcBench", method,
                              method == std::string("loop") ? "(I)V" : "()V")[key]
        .get<uint64_t>();
}

class Events : public jmt_it::BpfTest {};

TEST_F(Events, CountedExactlyPerFrame)
{
    const uint64_t n = 300;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.bench.AbcBench";
    spec.jvm.args = {std::to_string(n), "5"};
    spec.jmt_args = {"--package", "demo/bench"};
    auto r = jmt_it::run_traced(spec);
    // Per a(): 2 x b (entry, 2 x c entry+return, return) + c (entry, return) + its own
    // return = 15 events inside; the entries of its callees and its return stay exclusive.
    EXPECT_EQ(field(r.report, "a", "calls"), n);
    EXPECT_EQ(field(r.report, "a", "events_incl"), 15 * n);
    EXPECT_EQ(field(r.report, "a", "events_excl"), 4 * n);
    EXPECT_EQ(field(r.report, "b", "events_incl"), 2 * 5 * n);
    EXPECT_EQ(field(r.report, "b", "events_excl"), 2 * 3 * n);
    EXPECT_EQ(field(r.report, "c", "events_incl"), 5 * n);
    EXPECT_EQ(field(r.report, "c", "events_excl"), 5 * n);
    // Every event here belongs to a traced method.
    EXPECT_EQ(field(r.report, "a", "traced_events_incl"), 15 * n);
    EXPECT_EQ(field(r.report, "a", "traced_events_excl"), 4 * n);
    EXPECT_EQ(field(r.report, "c", "traced_events_incl"), 5 * n);
    // loop() encloses 16 events per a() and its own return.
    EXPECT_EQ(field(r.report, "loop", "calls"), 1u);
    EXPECT_EQ(field(r.report, "loop", "events_incl"), 16 * n + 1);
    EXPECT_EQ(field(r.report, "loop", "events_excl"), n + 1);
}

TEST_F(Events, RejectedEventsCountInsideTracedFrames)
{
    // With --package demo/filter/kept, Outer.run() encloses Middle's entry and return
    // (rejected events), Inner's 2 x 2 events and its own return, plus the rejected
    // events of the workload's timing code (nanoTime, AtomicLong), whose number
    // depends on the JIT: a lower bound, and an exact split between Outer and Inner.
    const uint64_t n = 20;
    jmt_it::RunSpec spec;
    spec.jvm.main_class = "demo.filter.FilterMain";
    spec.jvm.args = {std::to_string(n)};
    spec.jmt_args = {"--package", "demo/filter/kept"};
    auto r = jmt_it::run_traced(spec);
    const auto &outer = jmt_it::method_row(r.report, "demo/filter/kept/Outer", "run", "()V");
    const auto &inner = jmt_it::method_row(r.report, "demo/filter/kept/Inner", "leaf", "()V");
    // Rejected events (Middle's entry and return at least) count in Outer's frame.
    EXPECT_GE(outer["events_incl"].get<uint64_t>(), n * (2 + 4 + 1));
    EXPECT_EQ(outer["events_incl"].get<uint64_t>() - outer["events_excl"].get<uint64_t>(),
              inner["events_incl"].get<uint64_t>());
    // Of those, exactly Inner's entries and returns and Outer's own return are traced.
    EXPECT_EQ(outer["traced_events_incl"].get<uint64_t>(), n * (4 + 1));
    EXPECT_EQ(outer["traced_events_excl"].get<uint64_t>(), n * (2 + 1));
    EXPECT_EQ(inner["traced_events_incl"].get<uint64_t>(), n * 2);
}

}  // namespace
