// The JSON and CSV writers (report/json.cpp, report/csv.cpp).
#include "../common/report_fixture.h"
#include "report/report_json.h"

namespace {

using namespace report_fixture;

// Every stored field of a row (JMT_METHOD_STATS), in the kernel record's order: written out
// here, not taken from the writers' key table.
std::vector<uint64_t> stored_fields(const jmt::MethodStats &s)
{
    return {s.calls,           s.wall_incl_ns,   s.wall_excl_ns,   s.cpu_incl_ns,   s.cpu_excl_ns,
            s.runq_incl_ns,    s.runq_excl_ns,   s.unreturned,     s.events_incl,   s.events_excl,
            s.traced_incl,     s.traced_excl,    s.pinned,         s.pinned_ns,     s.pinned_monitor,
            s.wall_foreign_ns, s.cpu_foreign_ns, s.events_foreign, s.traced_foreign};
}

// One --foreign row whose every stored field holds a value no other field holds (times in
// ns): blocked incl = 20 ms - 4 ms on a CPU - 2 ms runnable = 14 ms; excl 19 - 3 - 1 = 15 ms.
jmt::Profile distinct_values()
{
    jmt::Profile p;
    p.pid = 77;
    p.foreign = true;
    jmt::MethodRow r;
    r.klass = "demo/Keys";
    r.method = "m";
    r.signature = "()V";
    jmt::MethodStats &s = r.stats;
    s.calls = 1;
    s.wall_incl_ns = 20'000'000;
    s.wall_excl_ns = 19'000'000;
    s.cpu_incl_ns = 4'000'000;
    s.cpu_excl_ns = 3'000'000;
    s.runq_incl_ns = 2'000'000;
    s.runq_excl_ns = 1'000'000;
    s.unreturned = 7;
    s.events_incl = 8;
    s.events_excl = 9;
    s.traced_incl = 10;
    s.traced_excl = 11;
    s.pinned = 12;
    s.pinned_ns = 13;
    s.pinned_monitor = 14;
    s.wall_foreign_ns = 15;
    s.cpu_foreign_ns = 16;
    s.events_foreign = 17;
    s.traced_foreign = 18;
    p.methods.push_back(r);
    return p;
}

// The documented keys (docs/outputs.md) with the literal values of distinct_values(): a key
// written from another field, or read into another field, fails.
TEST(Json, EveryStatsFieldUnderItsOwnKeyAndBack)
{
    std::ostringstream out;
    jmt::write_json(out, distinct_values());
    const auto doc = nlohmann::json::parse(out.str());
    ASSERT_EQ(doc.at("methods").size(), 1u);
    const auto &m = doc.at("methods")[0];
    const std::vector<std::pair<const char *, uint64_t>> expected = {{"calls", 1},
                                                                     {"wall_incl_ns", 20'000'000},
                                                                     {"wall_excl_ns", 19'000'000},
                                                                     {"cpu_incl_ns", 4'000'000},
                                                                     {"cpu_excl_ns", 3'000'000},
                                                                     {"runq_incl_ns", 2'000'000},
                                                                     {"runq_excl_ns", 1'000'000},
                                                                     {"blocked_incl_ns", 14'000'000},
                                                                     {"blocked_excl_ns", 15'000'000},
                                                                     {"unreturned", 7},
                                                                     {"events_incl", 8},
                                                                     {"events_excl", 9},
                                                                     {"traced_events_incl", 10},
                                                                     {"traced_events_excl", 11},
                                                                     {"pinned", 12},
                                                                     {"pinned_ns", 13},
                                                                     {"pinned_monitor", 14},
                                                                     {"wall_foreign_ns", 15},
                                                                     {"cpu_foreign_ns", 16},
                                                                     {"events_foreign", 17},
                                                                     {"traced_events_foreign", 18}};
    for (const auto &[key, value] : expected)
        EXPECT_EQ(m.at(key).get<uint64_t>(), value) << key;
    EXPECT_EQ(m.size(), expected.size() + 4) << m.dump();  // and class, method, signature, probe_dominated

    const jmt::MethodStats back = jmt::parse_report(out.str(), "keys.json").profile.methods.at(0).stats;
    const std::vector<uint64_t> stored = {1,  20'000'000, 19'000'000, 4'000'000, 3'000'000, 2'000'000, 1'000'000,
                                          7,  8,          9,          10,        11,        12,        13,
                                          14, 15,         16,         17,        18};
    EXPECT_EQ(stored_fields(back), stored);
}

// The same row as CSV: the header and the record, literally.
TEST(Csv, EveryStatsFieldInItsOwnColumn)
{
    std::ostringstream out;
    jmt::write_csv(out, distinct_values(), jmt::SortKey::Excl);
    EXPECT_EQ(out.str(), "class,method,signature,calls,wall_incl_ns,wall_excl_ns,cpu_incl_ns,cpu_excl_ns,runq_incl_ns,"
                         "runq_excl_ns,blocked_incl_ns,blocked_excl_ns,unreturned,events_incl,events_excl,"
                         "traced_events_incl,traced_events_excl,pinned,pinned_ns,pinned_monitor,probe_dominated,"
                         "wall_foreign_ns,cpu_foreign_ns,events_foreign,traced_events_foreign\r\n"
                         "demo/Keys,m,()V,1,20000000,19000000,4000000,3000000,2000000,1000000,14000000,15000000,"
                         "7,8,9,10,11,12,13,14,0,15,16,17,18\r\n");
}

TEST(Json, RoundTripsEveryField)
{
    jmt::Profile p = sample();
    p.packages = {"org/postgresql", "com/zaxxer"};
    jmt::Diagnostics &d = p.diag;
    d.entries = 101;
    d.returns = 102;
    d.traced_calls = 103;
    d.depth_overflow = 104;
    d.unmatched_returns = 105;
    d.dropped_frames = 106;
    d.thread_state_fail = 107;
    d.method_table_full = 108;
    d.names_fail = 109;
    d.arg_fail = 110;
    d.truncated_names = 111;
    d.threads_traced = 112;
    d.threads_ended = 113;
    d.glob_budget_out = 114;
    d.thread_rows_full = 115;
    d.paths_full = 116;
    d.cpu_clamped = 117;
    d.foreign_lost = 118;
    d.switch_unseen = 119;
    d.classes_unloaded = 120;
    d.methods_forgotten = 121;
    d.scratch_busy = 122;
    d.totals_not_ready = 123;
    d.methods_seen = 124;
    d.rejected_by_package = 125;
    d.rejected_by_class = 126;
    d.rejected_by_method = 127;
    d.classes_rejected_by_globs = 128;
    d.runq_ns = 129;
    d.vt_unmounts = 130;
    d.vt_mounts = 131;
    d.vt_frames_lost = 132;
    d.vt_unfollowed = 133;
    d.pinned_critical = 134;
    d.pinned_native = 135;
    d.pinned_monitor = 136;
    d.pinned_other = 137;
    d.pinned_ns = 138;
    d.vt_layout_mismatch = 139;
    d.slow_calls_lost = 140;
    d.slow_calls_dropped = 141;
    d.returns_unjudged = 142;
    p.kernel_memory_bytes = 7'760'000;
    p.method_ids = 1004;
    p.methods[0].stats.wall_incl_ns = 18'000'000'000'000'000'000ULL;  // above 2^63: stays unsigned
    p.methods[1].stats.traced_incl = 77;
    p.methods[1].stats.traced_excl = 66;
    p.methods[1].stats.events_incl = 5005;  // every value of this row differs from the others
    p.methods[1].stats.events_excl = 4004;
    p.methods[1].stats.runq_incl_ns = 1'000'003;
    p.methods[1].stats.runq_excl_ns = 1'000'001;
    p.methods[1].stats.pinned = 9;
    p.methods[1].stats.pinned_ns = 9'000'000;
    p.methods[1].stats.pinned_monitor = 8;
    p.corrected = true;
    p.probe_cost = {901, 702};
    p.class_globs = {"*ResultSet"};
    p.method_globs = {"get*", "<init>"};
    p.probes.access = "switched";
    p.probes.classes = 812;
    p.probes.unmodifiable = 3;
    p.probes.settle_s = 4.5;
    p.probes.settled = false;
    p.probes.hot_methods = 5210;
    p.probes.hot_back = 12;
    p.probes.cold = true;
    p.probes.end_methods = 2300;
    p.probes.end_back = 2299;
    p.probes.end_cold = false;
    p.probes.end_deferred = 41;
    p.methods[1].bounds.wider_than_correction = true;
    std::ostringstream out;
    jmt::write_json(out, p);
    const std::string text = out.str();
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.substr(0, 4), "{\n  ");  // indent 2

    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc.size(), 19u);  // with schema_version, jdk_version, virtual_threads,
                                 // virtual_threads_not_followed, kernel_memory_bytes, method_ids,
                                 // shared_probes and probes
    EXPECT_EQ(doc.at("shared_probes"), nlohmann::json::array());
    EXPECT_EQ(
        doc.at("probes"),
        nlohmann::json::parse(R"({"access":"switched","classes":812,"unmodifiable":3,)"
                              R"("settle_s":4.5,"settled":false,"hot_methods":5210,"hot_back":12,)"
                              R"("cold":true,"end_methods":2300,"end_back":2299,"end_cold":false,"end_deferred":41})"));
    EXPECT_EQ(doc["schema_version"], 1);
    EXPECT_EQ(doc.at("kernel_memory_bytes").get<uint64_t>(), 7'760'000u);
    EXPECT_EQ(doc.at("method_ids").get<uint32_t>(), 1004u);
    // No events, no JVM CPU time: counts of 0 and nulls.
    EXPECT_EQ(doc.at("overhead"),
              nlohmann::json::parse(
                  R"({"events":0,"traced_events":0,"trap_ns":0,"jvm_cpu_ns":null,"jvm_cpu_early":false,"share":null,)"
                  R"("jvm_runq_ns":null,"runq_share":null,"saturated":false})"));
    EXPECT_EQ(doc.at("foreign"), false);
    EXPECT_EQ(doc.at("class_globs"), nlohmann::json::array({"*ResultSet"}));
    EXPECT_EQ(doc.at("method_globs"), nlohmann::json::array({"get*", "<init>"}));
    EXPECT_EQ(doc.at("pid"), 4242);
    EXPECT_EQ(doc.at("times"), "corrected");
    EXPECT_EQ(doc.at("probe_cost").at("traced_event_ns").get<uint64_t>(), 901u);
    EXPECT_EQ(doc.at("probe_cost").at("rejected_event_ns").get<uint64_t>(), 702u);
    EXPECT_EQ(doc.at("duration_ns").get<uint64_t>(), 2'500'000'000ULL);
    EXPECT_EQ(doc.at("packages"), nlohmann::json::array({"org/postgresql", "com/zaxxer"}));

    // Every method, sorted by exclusive elapsed time descending.
    const auto &methods = doc.at("methods");
    ASSERT_EQ(methods.size(), 3u);
    const std::vector<size_t> order = {1, 2, 0};  // indices into p.methods
    for (size_t i = 0; i < order.size(); i++) {
        const jmt::MethodRow &src = p.methods[order[i]];
        const auto &m = methods[i];
        EXPECT_EQ(m.size(), 22u);
        EXPECT_EQ(m.at("probe_dominated").get<bool>(), src.probe_dominated);
        EXPECT_EQ(m.at("pinned").get<uint64_t>(), src.stats.pinned);
        EXPECT_EQ(m.at("pinned_ns").get<uint64_t>(), src.stats.pinned_ns);
        EXPECT_EQ(m.at("pinned_monitor").get<uint64_t>(), src.stats.pinned_monitor);
        // On-CPU, run-queue and blocked time make up elapsed time.
        EXPECT_EQ(m.at("cpu_incl_ns").get<uint64_t>() + m.at("runq_incl_ns").get<uint64_t>() +
                      m.at("blocked_incl_ns").get<uint64_t>(),
                  m.at("wall_incl_ns").get<uint64_t>());
        EXPECT_EQ(m.at("cpu_excl_ns").get<uint64_t>() + m.at("runq_excl_ns").get<uint64_t>() +
                      m.at("blocked_excl_ns").get<uint64_t>(),
                  m.at("wall_excl_ns").get<uint64_t>());
        // Corrected times carry their bounds, [lo, hi] per time key.
        EXPECT_EQ(m.at("bounds").at("wall_incl_ns"),
                  nlohmann::json::array({src.bounds.wall_incl_ns[0], src.bounds.wall_incl_ns[1]}));
        EXPECT_EQ(m.at("bounds").at("wider_than_correction").get<bool>(), src.bounds.wider_than_correction);
        EXPECT_EQ(m.at("bounds").size(), 5u);
        EXPECT_EQ(m.at("class").get<std::string>(), src.klass);
        EXPECT_EQ(m.at("method").get<std::string>(), src.method);
        EXPECT_EQ(m.at("signature").get<std::string>(), src.signature);
        // Every per-method value under its documented key (docs/outputs.md), written out here
        // rather than taken from the writer's own list, so a key mapped to another field fails.
        const jmt::MethodStats &v = src.stats;
        const std::vector<std::pair<const char *, uint64_t>> keys = {
            {"calls", v.calls},
            {"wall_incl_ns", v.wall_incl_ns},
            {"wall_excl_ns", v.wall_excl_ns},
            {"cpu_incl_ns", v.cpu_incl_ns},
            {"cpu_excl_ns", v.cpu_excl_ns},
            {"runq_incl_ns", v.runq_incl_ns},
            {"runq_excl_ns", v.runq_excl_ns},
            {"blocked_incl_ns", v.wall_incl_ns - v.cpu_incl_ns - v.runq_incl_ns},
            {"blocked_excl_ns", v.wall_excl_ns - v.cpu_excl_ns - v.runq_excl_ns},
            {"unreturned", v.unreturned},
            {"events_incl", v.events_incl},
            {"events_excl", v.events_excl},
            {"traced_events_incl", v.traced_incl},
            {"traced_events_excl", v.traced_excl},
            {"pinned", v.pinned},
            {"pinned_ns", v.pinned_ns},
            {"pinned_monitor", v.pinned_monitor}};
        for (const auto &[key, value] : keys)
            EXPECT_EQ(m.at(key).get<uint64_t>(), value) << key;
        for (const char *key : {"wall_foreign_ns", "cpu_foreign_ns", "events_foreign", "traced_events_foreign"})
            EXPECT_FALSE(m.contains(key)) << key << ": --foreign only";
    }
    // Read back (jmethodtime merge and diff's reader): every stored field, listed by hand.
    const jmt::LoadedReport back = jmt::parse_report(text, "sample.json");
    ASSERT_EQ(back.profile.methods.size(), order.size());
    for (size_t i = 0; i < order.size(); i++) {
        EXPECT_EQ(stored_fields(back.profile.methods[i].stats), stored_fields(p.methods[order[i]].stats)) << i;
        EXPECT_EQ(back.profile.methods[i].bounds.wider_than_correction,
                  p.methods[order[i]].bounds.wider_than_correction);
    }

    const auto &diag = doc.at("diagnostics");
    const std::vector<std::pair<const char *, uint64_t>> expected = {{"entries", 101},
                                                                     {"returns", 102},
                                                                     {"traced_calls", 103},
                                                                     {"depth_overflow", 104},
                                                                     {"unmatched_returns", 105},
                                                                     {"dropped_frames", 106},
                                                                     {"thread_state_fail", 107},
                                                                     {"method_table_full", 108},
                                                                     {"names_fail", 109},
                                                                     {"arg_fail", 110},
                                                                     {"truncated_names", 111},
                                                                     {"threads_traced", 112},
                                                                     {"threads_ended", 113},
                                                                     {"glob_budget_out", 114},
                                                                     {"thread_rows_full", 115},
                                                                     {"paths_full", 116},
                                                                     {"cpu_clamped", 117},
                                                                     {"foreign_lost", 118},
                                                                     {"switch_unseen", 119},
                                                                     {"classes_unloaded", 120},
                                                                     {"methods_forgotten", 121},
                                                                     {"scratch_busy", 122},
                                                                     {"totals_not_ready", 123},
                                                                     {"methods_seen", 124},
                                                                     {"rejected_by_package", 125},
                                                                     {"rejected_by_class", 126},
                                                                     {"rejected_by_method", 127},
                                                                     {"classes_rejected_by_globs", 128},
                                                                     {"runq_ns", 129},
                                                                     {"vt_unmounts", 130},
                                                                     {"vt_mounts", 131},
                                                                     {"vt_frames_lost", 132},
                                                                     {"vt_unfollowed", 133},
                                                                     {"pinned_critical", 134},
                                                                     {"pinned_native", 135},
                                                                     {"pinned_monitor", 136},
                                                                     {"pinned_other", 137},
                                                                     {"pinned_ns", 138},
                                                                     {"vt_layout_mismatch", 139},
                                                                     {"slow_calls_lost", 140},
                                                                     {"slow_calls_dropped", 141},
                                                                     {"returns_unjudged", 142}};
    EXPECT_EQ(diag.size(), expected.size());
    for (const auto &[key, value] : expected)
        EXPECT_EQ(diag.at(key).get<uint64_t>(), value) << key;
}

// The overhead figures are the profile's, settled once (cost/overhead.h): the
// writer states them as they are, and the reader gets them back.
TEST(Json, OverheadFiguresAreTheProfilesAndReadBack)
{
    jmt::Profile p = sample();
    p.corrected = true;
    p.probe_cost = {1000, 800};
    jmt::Overhead &o = p.overhead;
    o.events = 2'000'000;
    o.traced_events = 500'000;
    o.jvm_cpu_ns = 4'000'000'000;
    o.jvm_runq_ns = 1'000'000'000;
    o.jvm_cpu_early = true;
    jmt::settle_overhead(p);
    // 500K x 1000 ns + 1.5M x 800 ns = 1.70 s; runq 1 s of 5 s runnable.
    EXPECT_EQ(o.trap_ns, 1'700'000'000u);
    ASSERT_TRUE(o.trap_share && o.runq_share);
    EXPECT_DOUBLE_EQ(*o.trap_share, 0.425);
    EXPECT_DOUBLE_EQ(*o.runq_share, 0.2);
    EXPECT_TRUE(o.saturated);

    std::ostringstream out;
    jmt::write_json(out, p);
    const jmt::Overhead back = jmt::parse_report(out.str(), "o.json").profile.overhead;
    EXPECT_EQ(back.events, o.events);
    EXPECT_EQ(back.traced_events, o.traced_events);
    EXPECT_EQ(back.jvm_cpu_ns, o.jvm_cpu_ns);
    EXPECT_EQ(back.jvm_cpu_early, o.jvm_cpu_early);
    EXPECT_EQ(back.jvm_runq_ns, o.jvm_runq_ns);
    EXPECT_EQ(back.trap_ns, o.trap_ns);
    EXPECT_EQ(back.trap_share, o.trap_share);
    EXPECT_EQ(back.runq_share, o.runq_share);
    EXPECT_EQ(back.saturated, o.saturated);

    // Not worked out again on the way out: what the profile holds is what is written.
    o.trap_ns = 1234;
    o.saturated = false;
    out.str("");
    jmt::write_json(out, p);
    const auto written = nlohmann::json::parse(out.str()).at("overhead");
    EXPECT_EQ(written.at("trap_ns").get<uint64_t>(), 1234u);
    EXPECT_FALSE(written.at("saturated").get<bool>());
}

TEST(Json, EmptyProfileIsStillOneCompleteDocument)
{
    jmt::Profile p;
    std::ostringstream out;
    jmt::write_json(out, p);
    const auto doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(doc.at("pid"), 0);
    EXPECT_TRUE(doc.at("packages").is_array());
    EXPECT_TRUE(doc.at("packages").empty());
    EXPECT_TRUE(doc.at("methods").is_array());
    EXPECT_TRUE(doc.at("methods").empty());
    EXPECT_EQ(doc.at("diagnostics").at("entries"), 0);
}

TEST(Json, JavaNamesSurviveAndInvalidUtf8IsReplaced)
{
    jmt::Profile p = sample();
    p.methods[0].klass = "demo/Flow$$Lambda$1+0x00007f8444000c10";
    p.methods[0].method = "<init>";
    p.methods[1].klass = "demo/Caf\xC3\xA9\"quoted\"\\";          // valid UTF-8 and JSON escapes
    p.methods[2].klass = std::string("bad\xC0\x80name\xFF", 10);  // modified-UTF-8 NUL, stray byte
    std::ostringstream out;
    ASSERT_NO_THROW(jmt::write_json(out, p));
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(out.str()));
    std::vector<std::string> classes;
    for (const auto &m : doc.at("methods"))
        classes.push_back(m.at("class").get<std::string>());
    EXPECT_NE(std::find(classes.begin(), classes.end(), "demo/Flow$$Lambda$1+0x00007f8444000c10"), classes.end());
    EXPECT_NE(std::find(classes.begin(), classes.end(), "demo/Caf\xC3\xA9\"quoted\"\\"), classes.end());
    // Each invalid byte becomes U+FFFD; the valid bytes around them stay.
    EXPECT_NE(std::find(classes.begin(), classes.end(), "bad\xEF\xBF\xBD\xEF\xBF\xBDname\xEF\xBF\xBD"), classes.end())
        << out.str();
}

TEST(Json, InvalidUtf8InPackagesDoesNotThrow)
{
    jmt::Profile p;
    p.packages = {std::string("org/\xFF", 5)};
    std::ostringstream out;
    ASSERT_NO_THROW(jmt::write_json(out, p));
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(out.str()));
    EXPECT_EQ(doc.at("packages"), nlohmann::json::array({"org/\xEF\xBF\xBD"}));
}

TEST(Csv, HeaderThenEveryMethodSortedWithTheSameNumbers)
{
    jmt::Profile p = sample();
    p.methods[2].stats.events_incl = 7;
    p.methods[2].stats.traced_incl = 3;
    p.methods[2].stats.pinned = 2;
    p.methods[2].stats.pinned_ns = 41'000;
    p.methods[2].stats.pinned_monitor = 1;
    std::ostringstream out;
    jmt::write_csv(out, p, jmt::SortKey::Calls);
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) {
        ASSERT_FALSE(line.empty());
        EXPECT_EQ(line.back(), '\r');
        line.pop_back();
        lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 4u);
    const auto header = csv_fields(lines[0]);
    ASSERT_EQ(header.size(), 21u);
    EXPECT_EQ(header[20], "probe_dominated");
    EXPECT_EQ(header[17], "pinned");
    EXPECT_EQ(header[18], "pinned_ns");
    EXPECT_EQ(header[19], "pinned_monitor");
    EXPECT_EQ(header[0], "class");
    EXPECT_EQ(header[3], "calls");
    EXPECT_EQ(header[16], "traced_events_excl");
    EXPECT_EQ(header[8], "runq_incl_ns");
    EXPECT_EQ(header[11], "blocked_excl_ns");
    const std::vector<size_t> order = {1, 0, 2};  // by calls, descending
    for (size_t i = 0; i < order.size(); i++) {
        const jmt::MethodRow &src = p.methods[order[i]];
        const auto f = csv_fields(lines[i + 1]);
        ASSERT_EQ(f.size(), 21u) << lines[i + 1];
        EXPECT_EQ(f[20], src.probe_dominated ? "1" : "0");
        EXPECT_EQ(std::stoull(f[17]), src.stats.pinned);
        EXPECT_EQ(std::stoull(f[18]), src.stats.pinned_ns);
        EXPECT_EQ(std::stoull(f[19]), src.stats.pinned_monitor);
        EXPECT_EQ(f[0], src.klass);
        EXPECT_EQ(f[1], src.method);
        EXPECT_EQ(f[2], src.signature);
        EXPECT_EQ(std::stoull(f[3]), src.stats.calls);
        EXPECT_EQ(std::stoull(f[4]), src.stats.wall_incl_ns);
        EXPECT_EQ(std::stoull(f[5]), src.stats.wall_excl_ns);
        EXPECT_EQ(std::stoull(f[6]), src.stats.cpu_incl_ns);
        EXPECT_EQ(std::stoull(f[7]), src.stats.cpu_excl_ns);
        EXPECT_EQ(std::stoull(f[8]), src.stats.runq_incl_ns);
        EXPECT_EQ(std::stoull(f[11]), jmt::blocked_excl_ns(src.stats));
        EXPECT_EQ(std::stoull(f[12]), src.stats.unreturned);
        EXPECT_EQ(std::stoull(f[13]), src.stats.events_incl);
        EXPECT_EQ(std::stoull(f[15]), src.stats.traced_incl);
    }
}

TEST(Csv, FieldsWithCommasQuotesOrLineBreaksAreQuoted)
{
    jmt::Profile p;
    add_method(p, "a/B,C", "say\"hi\"", "(\n)V", 1, 2, 1);
    std::ostringstream out;
    jmt::write_csv(out, p, jmt::SortKey::Excl);
    const std::string text = out.str();
    EXPECT_NE(text.find("\"a/B,C\",\"say\"\"hi\"\"\",\"(\n)V\",1,"), std::string::npos) << text;
}

}  // namespace
