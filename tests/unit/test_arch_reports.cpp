// Reports name the architecture they were traced on (source.arch); merge and diff
// take reports of x86_64 and aarch64 hosts together and say when they differ.
#include <gtest/gtest.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <sstream>

#include "model/diff.h"
#include "model/merge.h"
#include "report/merge_report.h"
#include "report/report.h"
#include "report/report_json.h"
#include "jvm/source.h"

namespace {

jmt::MergeInput report(const std::string &host, const std::string &arch, uint64_t calls, uint64_t ns_per_call)
{
    jmt::MergeInput in;
    in.file = host + ".json";
    in.profile.packages = {"demo/abc"};
    in.profile.corrected = true;
    jmt::MethodRow r;
    r.klass = "demo/abc/FixedWork";
    r.method = "c";
    r.signature = "()V";
    r.stats.calls = calls;
    r.stats.wall_incl_ns = r.stats.wall_excl_ns = calls * ns_per_call;
    in.profile.methods = {r};
    jmt::ReportSource s;
    s.hostname = host;
    s.pid = 100;
    s.arch = arch;
    in.profile.sources = {s};
    return in;
}

// The report as --json writes it, read back as merge and diff read it.
jmt::LoadedReport round_trip(const jmt::MergeInput &in)
{
    std::ostringstream out;
    jmt::write_json(out, in.profile, nullptr);
    return jmt::parse_report(out.str(), in.file);
}

TEST(ArchReports, JsonCarriesTheArchitecture)
{
    const jmt::LoadedReport r = round_trip(report("graviton1", "aarch64", 5000, 5000));
    EXPECT_EQ(r.doc.at("source").at("arch"), "aarch64");
    ASSERT_EQ(r.profile.sources.size(), 1u);
    EXPECT_EQ(r.profile.sources[0].arch, "aarch64");
    // A report written before "arch" reads as unknown.
    nlohmann::json old = r.doc;
    old["source"].erase("arch");
    EXPECT_EQ(jmt::parse_report(old.dump(), "old.json").profile.sources[0].arch, "");
}

TEST(ArchReports, TheTracingHostsArchitectureIsUnameMachine)
{
    struct utsname u {};
    ASSERT_EQ(uname(&u), 0);
    const jmt::ReportSource s = jmt::describe_source(getpid(), "17", 0);
    EXPECT_EQ(s.arch, u.machine);
#if defined(__aarch64__)
    EXPECT_EQ(s.arch, "aarch64");
#else
    EXPECT_EQ(s.arch, "x86_64");
#endif
}

TEST(ArchReports, MergeSumsBothArchitecturesAndSaysSo)
{
    std::vector<jmt::MergeInput> in;
    for (const auto &r : {report("intel1", "x86_64", 5000, 5000), report("graviton1", "aarch64", 3000, 7000),
                          report("graviton2", "aarch64", 2000, 7000)}) {
        jmt::LoadedReport l = round_trip(r);
        in.push_back({r.file, l.profile, l.tree});
    }
    const jmt::Profile m = jmt::merge_profiles(in);
    ASSERT_EQ(m.methods.size(), 1u);
    EXPECT_EQ(m.methods[0].stats.calls, 10000u);
    EXPECT_EQ(m.methods[0].stats.wall_incl_ns, 5000u * 5000 + 5000u * 7000);
    EXPECT_EQ(jmt::architectures(m.sources), "aarch64, x86_64");
    const auto lines = jmt::merge_differences(in);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("different architectures"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("aarch64 (graviton1.json, graviton2.json); x86_64 (intel1.json)"), std::string::npos)
        << lines[0];
    const nlohmann::json doc = jmt::merge_json(m, nullptr, in, {}, lines, false);
    ASSERT_EQ(doc.at("sources").size(), 3u);
    EXPECT_EQ(doc.at("sources")[0].at("arch"), "x86_64");
    EXPECT_EQ(doc.at("sources")[2].at("arch"), "aarch64");
}

TEST(ArchReports, OneArchitectureOrAnUnknownOneIsNoDifference)
{
    std::vector<jmt::MergeInput> same = {report("g1", "aarch64", 10, 1), report("g2", "aarch64", 10, 1)};
    EXPECT_TRUE(jmt::merge_differences(same).empty());
    std::vector<jmt::MergeInput> unknown = {report("g1", "aarch64", 10, 1), report("old", "", 10, 1)};
    EXPECT_TRUE(jmt::merge_differences(unknown).empty());
}

TEST(ArchReports, DiffNamesBothArchitecturesWhenTheyDiffer)
{
    const jmt::MergeInput base = report("intel1", "x86_64", 5000, 5000),
                          now = report("graviton1", "aarch64", 5000, 7000);
    EXPECT_EQ(jmt::architecture_difference(base.profile, now.profile, "base.json", "new.json"),
              "base.json comes from x86_64 and new.json from aarch64: counts compare, times per call compare the "
              "machines too");
    EXPECT_EQ(jmt::architecture_difference(now.profile, now.profile, "a.json", "b.json"), "");
    EXPECT_EQ(jmt::architecture_difference(base.profile, report("old", "", 1, 1).profile, "a.json", "b.json"), "");
    // The methods compare across the machines as within one: c's exclusive time per call 40% up.
    const auto rows = jmt::diff_methods(base.profile.methods, now.profile.methods);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NEAR(rows[0].change, 0.4, 1e-9);
}

}  // namespace
