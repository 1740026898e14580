// A kernel too old for the programs (loader/kernel_features.h): one line naming the newest
// missing feature and the release that brought it. A kernel without bpf_loop gets the compat
// programs, whose fallbacks --list and source.kernel name.
#include <gtest/gtest.h>

#include "loader/kernel_features.h"

namespace {

TEST(KernelFeatures, NothingMissingSaysNothing)
{
    EXPECT_EQ(jmt::missing_features_text({{"bpf_loop", "5.17", true}, {"bpf_for_each_map_elem", "5.13", true}},
                                         "6.1.0-40-amd64"),
              "");
}

TEST(KernelFeatures, TheNewestMissingFeatureNamesTheReleaseTheOthersFollow)
{
    const std::string text = jmt::missing_features_text({{"bpf_loop", "5.17", false},
                                                         {"bpf_for_each_map_elem", "5.13", false},
                                                         {"task storage in tracing programs", "5.11", false},
                                                         {"bpf_get_current_task_btf", "5.11", true}},
                                                        "5.10.0-35-amd64");
    EXPECT_EQ(text, "this kernel (5.10.0-35-amd64) has no bpf_loop, which jmethodtime's BPF programs need: run it "
                    "on Linux 5.17 or newer (also missing: bpf_for_each_map_elem (5.13), task storage in tracing "
                    "programs (5.11))");
    EXPECT_EQ(text.find('\n'), std::string::npos);
}

// 5.10: every feature the compat programs do without is missing; none without a fallback is.
std::vector<jmt::KernelFeature> linux_5_10()
{
    return {{"bpf_loop", "5.17", false, "bounded loops"},
            {"BPF cookies", "5.15", false, "plain uprobes", true},
            {"bpf_for_each_map_elem", "5.13", false, "dropped at their next lookup"},
            {"task storage in tracing programs", "5.11", false, "hash maps by thread id"},
            {"bpf_probe_read_user", "5.5", true}};
}

TEST(KernelFeatures, AMissingFeatureWithAFallbackIsNoRefusal)
{
    EXPECT_EQ(jmt::missing_features_text(linux_5_10(), "5.10.0-39-amd64"), "");
    EXPECT_TRUE(jmt::needs_compat_programs(linux_5_10()));
}

TEST(KernelFeatures, AMissingFeatureWithoutAFallbackIsRefusedThoughOthersHaveOne)
{
    std::vector<jmt::KernelFeature> features = linux_5_10();
    features.back().present = false;
    EXPECT_EQ(jmt::missing_features_text(features, "5.4.0-1-amd64"),
              "this kernel (5.4.0-1-amd64) has no bpf_probe_read_user, which jmethodtime's BPF programs need: run it "
              "on Linux 5.5 or newer");
}

TEST(KernelFeatures, TheCompatProgramsNameEveryFallbackInOneLine)
{
    const std::string text = jmt::compat_text(linux_5_10(), "5.10.0-39-amd64");
    EXPECT_EQ(text, "this kernel (5.10.0-39-amd64) traces with the compat BPF programs: without bpf_loop (5.17): "
                    "bounded loops; without BPF cookies (5.15): plain uprobes; without bpf_for_each_map_elem (5.13): "
                    "dropped at their next lookup; without task storage in tracing programs (5.11): hash maps by "
                    "thread id");
    EXPECT_EQ(text.find('\n'), std::string::npos);
    // 5.15 and 5.16: cookies, no bpf_loop. Only the fallbacks taken are named.
    std::vector<jmt::KernelFeature> linux_5_15 = linux_5_10();
    linux_5_15[1].present = true;
    EXPECT_EQ(jmt::compat_text(linux_5_15, "5.15.0-1-amd64").find("cookies"), std::string::npos);
}

TEST(KernelFeatures, AKernelWithBpfLoopNeedsNoFallback)
{
    std::vector<jmt::KernelFeature> features = linux_5_10();
    for (jmt::KernelFeature &f : features)
        f.present = true;
    EXPECT_FALSE(jmt::needs_compat_programs(features));
    EXPECT_EQ(jmt::compat_text(features, "6.1.0-40-amd64"), "");
}

// Launch mode attaches before libjvm.so is mapped: with BPF cookies, or without them (5.10) at the
// probes' sites as plain uprobes when the arguments are in plain registers.
TEST(KernelFeatures, LaunchModeNeedsCookiesOnlyWhenTheArgumentsAreNotInRegisters)
{
    jmt::KernelSupport with;
    with.release = "6.1.0-40-amd64";
    EXPECT_EQ(jmt::launch_problem(with, false), "");
    jmt::KernelSupport without = with;
    without.release = "5.10.0-46-amd64";
    without.attach_cookie = false;
    EXPECT_EQ(jmt::launch_problem(without, true), "");
    const std::string line = jmt::launch_problem(without, false);
    EXPECT_NE(line.find("5.10.0-46-amd64"), std::string::npos) << line;
    EXPECT_NE(line.find("no BPF cookies (Linux 5.15)"), std::string::npos) << line;
    EXPECT_NE(line.find("-XX:+DTraceMethodProbes"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

}  // namespace
