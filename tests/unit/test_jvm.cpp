#include <gtest/gtest.h>

#include "jmethodtime.h"
#include "loader/attach_plan.h"
#include "jvm/jvm.h"
#include "jvm/libjvm_file.h"
#include "util/error.h"
#include "util/procfs.h"
#include "report/report.h"
#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

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

TEST(ParseMaps, EveryFieldDeletedFilesAndAnonymousMemory)
{
    const std::vector<jmt::MapsEntry> m =
        jmt::parse_maps(std::string(kMaps) + "7f00000a0000-7f00000a1000 r--p 00000000 fe:00 10952723                   "
                                             "/tmp/.jmethodtime-a8612d5eaf8540a7/libjmtagent.so (deleted)\n"
                                             "not a maps line\n");
    ASSERT_EQ(m.size(), 6u);
    EXPECT_EQ(m[2].start, 0x7f1a2e200000ULL);
    EXPECT_EQ(m[2].end, 0x7f1a2e4c1000ULL);
    EXPECT_EQ(m[3].offset, 0x2c1000u);
    EXPECT_EQ(m[3].perms, "r-xp");
    EXPECT_EQ(m[3].dev, "fe:01");
    EXPECT_EQ(m[3].inode, 99u);
    EXPECT_EQ(m[1].path, "");  // anonymous
    EXPECT_EQ(m[4].path, "[stack]");
    EXPECT_EQ(m[5].path, "/tmp/.jmethodtime-a8612d5eaf8540a7/libjmtagent.so");
    EXPECT_TRUE(m[5].deleted);
    EXPECT_FALSE(m[2].deleted);
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
    auto regs = jmt::register_args("-8@%rax 8@%rdx -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d", jmt::kMachineX86_64);
    ASSERT_TRUE(regs.has_value());
    std::array<uint8_t, 7> want = {JMT_REG_AX, JMT_REG_DX, JMT_REG_CX, JMT_REG_SI, JMT_REG_DI, JMT_REG_R8, JMT_REG_R9};
    EXPECT_EQ(*regs, want);
}

TEST(RegisterArgs, FallsBackForMemoryOperandsAndOddLayouts)
{
    EXPECT_FALSE(jmt::register_args("-8@%rax 8@-16(%rbp) -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d", jmt::kMachineX86_64)
                     .has_value());
    EXPECT_FALSE(jmt::register_args("-8@%rax 8@%rdx -4@%ecx", jmt::kMachineX86_64).has_value());
    EXPECT_FALSE(
        jmt::register_args("-8@%rax 4@%edx -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d", jmt::kMachineX86_64).has_value());
    EXPECT_FALSE(
        jmt::register_args("-8@%rax 8@%xmm0 -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d", jmt::kMachineX86_64).has_value());
    EXPECT_FALSE(
        jmt::register_args("-8@%rax 8@$5 -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d", jmt::kMachineX86_64).has_value());
}

// e_machine of this test binary (the ELF header's 16-bit field at offset 18, in the
// byte order of the machine running it); 0 when unread.
uint16_t own_machine()
{
    std::ifstream exe("/proc/self/exe", std::ios::binary);
    char header[20] = {};
    if (!exe.read(header, sizeof header))
        return 0;
    uint16_t machine = 0;
    std::memcpy(&machine, header + 18, sizeof machine);
    return machine;
}

// Debian's OpenJDK 17 libjvm.so of this machine's architecture
// (/usr/lib/jvm/java-17-openjdk-ARCH/lib/server/libjvm.so), or "".
std::string debian_jdk17_libjvm()
{
    std::error_code ec;
    for (const auto &home : std::filesystem::directory_iterator("/usr/lib/jvm", ec)) {
        const std::string path = home.path().string() + "/lib/server/libjvm.so";
        if (home.path().filename().string().rfind("java-17-openjdk-", 0) != 0 || access(path.c_str(), R_OK) != 0)
            continue;
        try {
            if (jmt::inspect_libjvm(path).machine == own_machine())
                return path;
        } catch (const jmt::Error &) {
        }
    }
    return "";
}

TEST(InspectLibjvm, DebianJdkHasTheProbesAndTheFlagSymbol)
{
    const std::string path = debian_jdk17_libjvm();
    if (path.empty()) {
        const char *ci = getenv("CI");
        const std::string reason =
            "no Debian OpenJDK 17 of this architecture at /usr/lib/jvm/java-17-openjdk-*/lib/server/libjvm.so";
        if (ci && std::string(ci) == "true")
            FAIL() << "under CI=true: " << reason;
        GTEST_SKIP() << reason;
    }
    std::cout << "  " << path << std::endl;
    jmt::LibjvmInfo info = jmt::inspect_libjvm(path);
    EXPECT_EQ(info.machine, own_machine());
    int entry = 0, ret = 0;
    for (const auto &n : info.notes) {
        entry += n.name == "method__entry";
        ret += n.name == "method__return";
        EXPECT_EQ(n.provider, "hotspot");
    }
    EXPECT_EQ(entry, 1);
    EXPECT_EQ(ret, 1);
    EXPECT_EQ(info.symbols.count("DTraceMethodProbes"), 1u);
}

// A kernel without BPF cookies puts a plain uprobe at each site's file offset: there the file
// holds the probe's instruction, a nop (x86-64 0x90, arm64 0xd503201f).
TEST(InspectLibjvm, EveryMethodProbeSiteIsANopAtItsFileOffset)
{
    const std::string path = debian_jdk17_libjvm();
    if (path.empty())
        GTEST_SKIP() << "no Debian OpenJDK 17 of this architecture (InspectLibjvm.DebianJdkHasTheProbes... says why)";
    const jmt::LibjvmInfo info = jmt::inspect_libjvm(path);
    struct stat st = {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(info.file, (jmt::FileId{major(st.st_dev), minor(st.st_dev), static_cast<uint64_t>(st.st_ino)}))
        << "the identity of the file read, which examine_target checks against the mapping's";
    std::ifstream file(path, std::ios::binary);
    int sites = 0;
    for (const auto &n : info.notes) {
        if (n.name != "method__entry" && n.name != "method__return" && n.name != "class__unloaded")
            continue;
        ASSERT_TRUE(n.file_offset.has_value()) << n.name;
        EXPECT_EQ(n.semaphore, 0u) << n.name;
        unsigned char insn[4] = {};
        file.seekg(static_cast<std::streamoff>(*n.file_offset));
        ASSERT_TRUE(file.read(reinterpret_cast<char *>(insn), sizeof insn)) << n.name;
        if (info.machine == jmt::kMachineX86_64)
            EXPECT_EQ(insn[0], 0x90) << n.name << " at file offset " << *n.file_offset;
        else
            EXPECT_EQ(insn[0] | insn[1] << 8 | insn[2] << 16 | static_cast<uint32_t>(insn[3]) << 24, 0xd503201fu)
                << n.name;
        sites++;
    }
    EXPECT_EQ(sites, 3);
    std::optional<std::array<uint8_t, 7>> regs;
    ASSERT_TRUE(jmt::has_method_probes(info, &regs));
    EXPECT_TRUE(regs.has_value());
    if (info.machine == jmt::kMachineX86_64) {  // class__unloaded: 8@%rdx -4@%eax
        const auto unload = jmt::class_unloaded_registers(info);
        ASSERT_TRUE(unload.has_value());
        EXPECT_EQ((*unload)[0], JMT_REG_DX);
        EXPECT_EQ((*unload)[1], JMT_REG_AX);
    }
}

TEST(ClassUnloadedRegisters, PlainRegistersOnlyAndOneLayoutForEverySite)
{
    jmt::LibjvmInfo info;
    info.machine = jmt::kMachineX86_64;
    info.notes = {{"hotspot", "class__unloaded", 0x10, 0, 0, {}, "8@%rdx -4@%eax 8@152(%rbx) 1@$0"}};
    EXPECT_TRUE(jmt::class_unloaded_registers(info).has_value());
    info.notes.push_back({"hotspot", "class__unloaded", 0x20, 0, 0, {}, "8@%rsi -4@%eax 8@152(%rbx) 1@$0"});
    EXPECT_FALSE(jmt::class_unloaded_registers(info).has_value()) << "two sites, two layouts";
    info.notes = {{"hotspot", "class__unloaded", 0x10, 0, 0, {}, "8@-8(%rbp) -4@%eax"}};
    EXPECT_FALSE(jmt::class_unloaded_registers(info).has_value()) << "the name in memory";
    info.notes = {{"hotspot", "class__unloaded", 0x10, 0, 0, {}, "-4@%edx -4@%eax"}};
    EXPECT_FALSE(jmt::class_unloaded_registers(info).has_value()) << "a 4-byte name pointer";
    info.notes.clear();
    EXPECT_FALSE(jmt::class_unloaded_registers(info).has_value());
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
    p.diag.vt_unmounts = 12;
    std::ostringstream table, json;
    jmt::write_table(table, p, {});
    EXPECT_NE(table.str().find("JDK 21.0.2: virtual threads followed across unmounts (12 unmounts"), std::string::npos)
        << table.str();
    jmt::write_json(json, p);
    const auto doc = nlohmann::json::parse(json.str());
    EXPECT_EQ(doc.at("virtual_threads"), true);
    EXPECT_EQ(doc.at("virtual_threads_not_followed"), "");
    p.virtual_threads_not_followed = "it runs ZGC";
    std::ostringstream unfollowed;
    jmt::write_table(unfollowed, p, {});
    EXPECT_NE(unfollowed.str().find("virtual threads are not followed across unmounts (it runs ZGC)"),
              std::string::npos)
        << unfollowed.str();
    EXPECT_EQ(doc.at("jdk_version"), "21.0.2");
    p.virtual_threads = false;
    std::ostringstream plain;
    jmt::write_table(plain, p, {});
    EXPECT_EQ(plain.str().find("virtual threads"), std::string::npos);
}

TEST(PickJvms, EveryMatchUpToTheLimitNoneOrMoreAreErrors)
{
    std::vector<jmt::JvmTarget> jvms(3);
    jvms[0].pid = 10;
    jvms[0].command = "java -cp app.jar com.shop.Orders --port 8080";
    jvms[1].pid = 11;
    jvms[1].command = "java -cp app.jar com.shop.Payments --port 8081";
    jvms[2].pid = 12;
    jvms[2].command = "java -jar tools.jar";
    EXPECT_EQ(jmt::pick_jvms(jvms, "Orders", 16), std::vector<int>{10});
    EXPECT_EQ(jmt::pick_jvms(jvms, "--port 808[1]", 16), std::vector<int>{11});
    EXPECT_EQ(jmt::pick_jvms(jvms, "com\\.shop", 16), (std::vector<int>{10, 11}));
    try {
        jmt::pick_jvms(jvms, "java", 2);
        ADD_FAILURE() << "three JVMs match, two are followed";
    } catch (const jmt::Error &e) {
        EXPECT_NE(std::string(e.what()).find("matches 3 JVMs (pids 10, 11, 12), more than the 2"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(jmt::pick_jvms(jvms, "Inventory", 16), jmt::Error);
    EXPECT_THROW(jmt::pick_jvms(jvms, "([unclosed", 16), jmt::Error);
}

// Several JVMs' probes attach once per libjvm file when no other JVM with the probes on maps it,
// per pid otherwise, and one group per file.
TEST(AttachPlan, OncePerLibjvmUnlessAnUntracedJvmWithTheProbesOnMapsIt)
{
    char dir_template[] = "/tmp/jmt-attach-plan-XXXXXX";
    const std::string dir = mkdtemp(dir_template);
    const std::string a = dir + "/a-libjvm.so", b = dir + "/b-libjvm.so", a_link = dir + "/link-libjvm.so";
    std::ofstream(a) << "a";
    std::ofstream(b) << "b";
    ASSERT_EQ(symlink(a.c_str(), a_link.c_str()), 0);  // the same file by another path (another mount namespace)
    auto jvm = [](int pid, const std::string &libjvm, bool on) {
        jmt::JvmTarget t;
        t.pid = pid;
        t.libjvm = libjvm;
        t.probes_on = on;
        return t;
    };
    const std::vector<jmt::JvmTarget> targets = {jvm(10, a, true), jvm(11, a_link, true), jvm(12, b, true)};
    std::vector<jmt::JvmTarget> host = targets;
    host.push_back(jvm(13, a, false));  // maps a, probes off: pays nothing
    auto plan = jmt::attach_plan(targets, host);
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].pids, (std::vector<int>{10, 11}));
    EXPECT_TRUE(plan[0].whole);
    EXPECT_EQ(plan[1].pids, std::vector<int>{12});
    EXPECT_TRUE(plan[1].whole);
    host.push_back(jvm(14, a_link, true));  // maps a with the probes on, not traced
    plan = jmt::attach_plan(targets, host);
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_FALSE(plan[0].whole) << "pid 14 would pay every trap";
    EXPECT_TRUE(plan[1].whole);
    for (const std::string &f : {a_link, a, b})
        unlink(f.c_str());
    rmdir(dir.c_str());
}
