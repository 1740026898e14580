// The kernel's preemption model, from what the kernel says about itself.
#include <gtest/gtest.h>

#include "kernel/preemption.h"

namespace {

using jmt::KernelFacts;
using jmt::Preemption;
using jmt::preemption_of;

KernelFacts facts(const std::string &version, const std::string &cmdline = "",
                  std::optional<std::string> config = std::nullopt)
{
    KernelFacts f;
    f.version = version;
    f.cmdline = cmdline;
    f.config = config;
    return f;
}

TEST(Preemption, DebugfsNamesTheActiveMode)
{
    KernelFacts f = facts("#1 SMP PREEMPT_DYNAMIC", "preempt=full");
    f.debugfs_mode = "(none) voluntary full lazy\n";
    EXPECT_EQ(preemption_of(f), Preemption::Off);  // debugfs wins over the boot parameter
    f.debugfs_mode = "none voluntary (full) lazy\n";
    EXPECT_EQ(preemption_of(f), Preemption::On);
    f.debugfs_mode = "none voluntary full (lazy)\n";
    EXPECT_EQ(preemption_of(f), Preemption::On);
    f.debugfs_mode = "none (voluntary) full\n";
    EXPECT_EQ(preemption_of(f), Preemption::Off);
}

TEST(Preemption, StaticModelsFromUname)
{
    EXPECT_EQ(preemption_of(facts("#1 SMP Debian 6.1.112-1 (2024-09-30)")), Preemption::Off);
    EXPECT_EQ(preemption_of(facts("#1 SMP PREEMPT Thu Jan 1 00:00:00 UTC 2025")), Preemption::On);
    EXPECT_EQ(preemption_of(facts("#1 SMP PREEMPT_RT Debian 6.1.112-1")), Preemption::On);
    EXPECT_EQ(preemption_of(facts("#1 SMP PREEMPT_LAZY")), Preemption::On);
}

TEST(Preemption, DynamicKernelsFromBootParameterThenConfigDefault)
{
    const std::string v = "#1 SMP PREEMPT_DYNAMIC Debian 6.12";
    EXPECT_EQ(preemption_of(facts(v, "root=/dev/vda preempt=full quiet")), Preemption::On);
    EXPECT_EQ(preemption_of(facts(v, "preempt=voluntary")), Preemption::Off);
    EXPECT_EQ(preemption_of(facts(v, "preempt=none", "CONFIG_PREEMPT=y\n")), Preemption::Off);
    EXPECT_EQ(preemption_of(facts(v, "quiet", "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\n")), Preemption::Off);
    EXPECT_EQ(preemption_of(facts(v, "quiet", "CONFIG_PREEMPT_VOLUNTARY=y\n")), Preemption::Off);
    EXPECT_EQ(preemption_of(facts(v, "quiet", "# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT=y\n")),
              Preemption::On);
    EXPECT_EQ(preemption_of(facts(v, "quiet", "CONFIG_PREEMPT_LAZY=y\n")), Preemption::On);
    EXPECT_EQ(preemption_of(facts(v, "quiet")), Preemption::Unknown);  // no config to read
    EXPECT_EQ(preemption_of(facts(v, "quiet", "CONFIG_PREEMPT_BUILD=y\n")), Preemption::Unknown);
}

}  // namespace
