// Which other tracer traces our JVM (loader/probe_holders.h): a uprobe link
// does not say its process, so the holder's command line must name the pid.
#include <gtest/gtest.h>

#include "loader/probe_holders.h"

namespace {

TEST(ProbeHolders, ACommandLineNamesThePidItTraces)
{
    EXPECT_TRUE(jmt::names_pid({"jmethodtime", "-p", "4242", "--json"}, 4242));
    EXPECT_TRUE(jmt::names_pid({"jmethodtime", "--pid=4242"}, 4242));
    EXPECT_TRUE(jmt::names_pid({"bpftrace", "-p4242", "-e", "usdt:..."}, 4242));
    EXPECT_TRUE(jmt::names_pid({"/usr/sbin/ucalls-bpfcc", "-l", "java", "4242"}, 4242));
    // Another JVM's tracer, a longer pid, the program's own name.
    EXPECT_FALSE(jmt::names_pid({"jmethodtime", "-p", "4243"}, 4242));
    EXPECT_FALSE(jmt::names_pid({"jmethodtime", "-p", "42421"}, 4242));
    EXPECT_FALSE(jmt::names_pid({"4242"}, 4242));
    EXPECT_FALSE(jmt::names_pid({}, 4242));
}

TEST(ProbeHolders, OnlyTheHoldersOfOurPidCountAndAreNamed)
{
    const std::vector<jmt::ProbeHolder> holders = {{10, "jmethodtime", {"jmethodtime", "-p", "77"}},
                                                   {11, "jmethodtime", {"jmethodtime", "-p", "78"}},
                                                   {12, "bpftrace", {"bpftrace", "-p", "77", "x.bt"}}};
    const auto ours = jmt::tracing_pid(holders, 77);
    ASSERT_EQ(ours.size(), 2u);
    EXPECT_EQ(jmt::holders_text(ours), "pid 10 (jmethodtime), pid 12 (bpftrace)");
    EXPECT_TRUE(jmt::tracing_pid(holders, 79).empty());
}

}  // namespace
