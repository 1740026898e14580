#include <gtest/gtest.h>

#include "jmethodtime.h"
#include "target/jvm.h"
#include "util/error.h"
#include "report/report.h"
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

namespace {

const char *kMaps =
    "55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234 /usr/lib/jvm/java-17-openjdk-amd64/bin/java\n"
    "7f1a2c000000-7f1a2c021000 rw-p 00000000 00:00 0 \n"
    "7f1a2e200000-7f1a2e4c1000 r--p 00000000 fe:01 99 /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n"
    "7f1a2e4c1000-7f1a2f0c0000 r-xp 002c1000 fe:01 99 /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n"
    "7ffd1b9e5000-7ffd1ba06000 rw-p 00000000 00:00 0                          [stack]\n";

TEST(FindLibjvm, FindsTheOffsetZeroMapping)
{
    jmt::LibjvmMapping m = jmt::find_libjvm(kMaps);
    ASSERT_TRUE(m.found);
    EXPECT_EQ(m.path, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so");
    EXPECT_EQ(m.start, 0x7f1a2e200000ULL);
}

TEST(FindLibjvm, PathsWithSpacesAndDeletedFiles)
{
    jmt::LibjvmMapping m = jmt::find_libjvm(
        "7f0000000000-7f0000100000 r--p 00000000 fe:01 5 /opt/my jdk/lib/server/libjvm.so (deleted)\n");
    ASSERT_TRUE(m.found);
    EXPECT_EQ(m.path, "/opt/my jdk/lib/server/libjvm.so");
}

TEST(FindLibjvm, NotAJvm)
{
    EXPECT_FALSE(jmt::find_libjvm("").found);
    EXPECT_FALSE(jmt::find_libjvm("7f0000000000-7f0000100000 r--p 00000000 fe:01 5 /usr/lib/libjvm.so.bak\n"
                                  "7f0000000000-7f0000100000 r--p 00000000 fe:01 5 /usr/lib/notlibjvm.so.1\n")
                     .found);
}

TEST(RegisterArgs, HotspotX86Layout)
{
    auto regs = jmt::register_args("-8@%rax 8@%rdx -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d");
    ASSERT_TRUE(regs.has_value());
    std::array<uint8_t, 7> want = {JMT_REG_AX, JMT_REG_DX, JMT_REG_CX, JMT_REG_SI,
                                   JMT_REG_DI, JMT_REG_R8, JMT_REG_R9};
    EXPECT_EQ(*regs, want);
}

TEST(RegisterArgs, FallsBackForMemoryOperandsAndOddLayouts)
{
    EXPECT_FALSE(jmt::register_args("-8@%rax 8@-16(%rbp) -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d").has_value());
    EXPECT_FALSE(jmt::register_args("-8@%rax 8@%rdx -4@%ecx").has_value());
    EXPECT_FALSE(jmt::register_args("-8@%rax 4@%edx -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d").has_value());
    EXPECT_FALSE(jmt::register_args("-8@%rax 8@%xmm0 -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d").has_value());
    EXPECT_FALSE(jmt::register_args("-8@%rax 8@$5 -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d").has_value());
}

TEST(InspectLibjvm, DebianJdkHasTheProbesAndTheFlagSymbol)
{
    const char *path = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
    if (access(path, R_OK) != 0)
        GTEST_SKIP() << "no Debian OpenJDK 17 at " << path;
    jmt::LibjvmInfo info = jmt::inspect_libjvm(path);
    int entry = 0, ret = 0;
    for (const auto &n : info.notes) {
        entry += n.name == "method__entry";
        ret += n.name == "method__return";
        EXPECT_EQ(n.provider, "hotspot");
    }
    EXPECT_EQ(entry, 1);
    EXPECT_EQ(ret, 1);
    EXPECT_TRUE(info.flag_vaddr.has_value());
}

}  // namespace

TEST(JdkVersion, FeatureReleaseOfEveryScheme)
{
    EXPECT_EQ(jmt::jdk_feature_release("17.0.15"), 17);
    EXPECT_EQ(jmt::jdk_feature_release("21"), 21);
    EXPECT_EQ(jmt::jdk_feature_release("25-ea"), 25);
    EXPECT_EQ(jmt::jdk_feature_release("1.8.0_392"), 8);
    EXPECT_EQ(jmt::jdk_feature_release(""), 0);
    EXPECT_EQ(jmt::jdk_feature_release("x"), 0);
    EXPECT_GE(jmt::jdk_feature_release("21.0.2"), jmt::kFirstJdkWithVirtualThreads);
}

TEST(JdkVersion, VirtualThreadsAreNamedInTheHeaderAndJson)
{
    jmt::Profile p;
    p.jdk_version = "21.0.2";
    p.virtual_threads = true;
    std::ostringstream table, json;
    jmt::write_table(table, p, {});
    EXPECT_NE(table.str().find("JDK 21.0.2: virtual threads run on carrier threads"), std::string::npos) << table.str();
    jmt::write_json(json, p);
    const auto doc = nlohmann::json::parse(json.str());
    EXPECT_EQ(doc.at("virtual_threads"), true);
    EXPECT_EQ(doc.at("jdk_version"), "21.0.2");
    p.virtual_threads = false;
    std::ostringstream plain;
    jmt::write_table(plain, p, {});
    EXPECT_EQ(plain.str().find("virtual threads"), std::string::npos);
}

TEST(PickJvm, OneMatchGivesItsPidNoneOrSeveralAreErrors)
{
    std::vector<jmt::JvmTarget> jvms(3);
    jvms[0].pid = 10;
    jvms[0].command = "java -cp app.jar com.shop.Orders --port 8080";
    jvms[1].pid = 11;
    jvms[1].command = "java -cp app.jar com.shop.Payments --port 8081";
    jvms[2].pid = 12;
    jvms[2].command = "java -jar tools.jar";
    EXPECT_EQ(jmt::pick_jvm(jvms, "Orders"), 10);
    EXPECT_EQ(jmt::pick_jvm(jvms, "--port 808[1]"), 11);
    try {
        jmt::pick_jvm(jvms, "com\\.shop");
        ADD_FAILURE() << "two JVMs match";
    } catch (const jmt::Error &e) {
        EXPECT_NE(std::string(e.what()).find("matches 2 JVMs (pids 10, 11)"), std::string::npos) << e.what();
    }
    EXPECT_THROW(jmt::pick_jvm(jvms, "Inventory"), jmt::Error);
    EXPECT_THROW(jmt::pick_jvm(jvms, "([unclosed"), jmt::Error);
}
