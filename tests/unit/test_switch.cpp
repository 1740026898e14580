// The runtime switch's pure parts: which JVMs can be switched, when compiles
// have settled, the agent's request and class filter, the attach protocol's
// identity, and HotSpot's VMStructs flag table read from a made-up memory.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "control/agent.h"
#include "control/agent/agent_request.h"
#include "control/agent/agent_sys.h"
#include "control/attach.h"
#include "jvm/hotspot_flags.h"
#include "control/probe_switch.h"
#include "util/error.h"
#include "util/lifecycle.h"
#include "util/procfs.h"

namespace {

using jmt::ProbeAccess;

jmt::AccessFacts switchable_jdk17()
{
    jmt::AccessFacts f;
    f.pid = 42;
    f.has_probes = true;
    f.flag_found = true;
    f.jdk_feature = 17;
    return f;
}

TEST(DecideAccess, FlagOffOnJdk8To23IsSwitchable)
{
    for (int jdk : {8, 11, 17, 21, 23}) {
        jmt::AccessFacts f = switchable_jdk17();
        f.jdk_feature = jdk;
        EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::Switchable) << "JDK " << jdk;
    }
}

TEST(DecideAccess, WhatCannotBeSwitchedSaysWhyInOneLine)
{
    struct Case {
        const char *what;
        void (*set)(jmt::AccessFacts &);
        const char *needle;
    } cases[] = {
        {"JDK 24", [](jmt::AccessFacts &f) { f.jdk_feature = 24; }, "from JDK 24 the interpreter"},
        {"JDK 25", [](jmt::AccessFacts &f) { f.jdk_feature = 25; }, "runs JDK 25 with the method probes off"},
        {"unknown JDK", [](jmt::AccessFacts &f) { f.jdk_feature = 0; }, "JDK version cannot be told"},
        {"attach off", [](jmt::AccessFacts &f) { f.attach_disabled = true; }, "-XX:+DisableAttachMechanism"},
        {"no dynamic agents", [](jmt::AccessFacts &f) { f.dynamic_agents_off = true; },
         "-XX:-EnableDynamicAgentLoading"},
        {"no flag address", [](jmt::AccessFacts &f) { f.flag_found = false; }, "neither a symbol table"},
    };
    for (const Case &c : cases) {
        jmt::AccessFacts f = switchable_jdk17();
        c.set(f);
        const jmt::Access a = jmt::decide_access(f);
        EXPECT_EQ(a.access, ProbeAccess::Off) << c.what;
        EXPECT_NE(a.off_reason.find(c.needle), std::string::npos) << c.what << ": " << a.off_reason;
        EXPECT_NE(a.off_reason.find("-XX:+DTraceMethodProbes"), std::string::npos) << a.off_reason;
        EXPECT_EQ(a.off_reason.find('\n'), std::string::npos) << a.off_reason;
        EXPECT_EQ(a.off_reason.rfind("pid 42 ", 0), 0u) << a.off_reason;
    }
}

TEST(DecideAccess, FlagOnAndTheAgentsModes)
{
    jmt::AccessFacts f = switchable_jdk17();
    f.flag_on = true;
    EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::AtStart);
    f.jdk_feature = 25;  // any JDK started with the flag
    EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::AtStart);
    // On standby: the flag off, the agent says so (JDK 25 too: its interpreter keeps the calls).
    f.flag_on = false;
    f.agent_loaded = true;
    f.agent_mode = JMT_AGENT_STANDBY;
    EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::Standby);
    // Switched for a jmethodtime: busy while it runs, left on once it is gone, whatever the flag.
    for (uint32_t mode : {JMT_AGENT_TRACKING, JMT_AGENT_SWITCHED})
        for (bool flag : {false, true}) {
            f.agent_mode = mode;
            f.flag_on = flag;
            f.owner_alive = true;
            EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::Switched);
            f.owner_alive = false;
            EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::LeftOn);
        }
    // The agent idle (a trace came and went): as without it.
    f.agent_mode = JMT_AGENT_IDLE;
    f.flag_on = false;
    f.jdk_feature = 17;
    EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::Switchable);
    f.has_probes = false;
    EXPECT_EQ(jmt::decide_access(f).access, ProbeAccess::Missing);
}

TEST(DecideAccess, ListNames)
{
    EXPECT_STREQ(jmt::access_name(ProbeAccess::AtStart), "enabled");
    EXPECT_STREQ(jmt::access_name(ProbeAccess::Standby), "standby");
    EXPECT_STREQ(jmt::access_name(ProbeAccess::Switchable), "switchable");
    EXPECT_STREQ(jmt::access_name(ProbeAccess::Switched), "traced");
    EXPECT_STREQ(jmt::access_name(ProbeAccess::LeftOn), "left on");
    EXPECT_STREQ(jmt::access_name(ProbeAccess::Off), "off");
    EXPECT_STREQ(jmt::access_name(ProbeAccess::Missing), "missing");
}

constexpr uint64_t kMs = 1'000'000;

TEST(SettleWatch, SettlesAfterAWindowWithAtMostATrickle)
{
    jmt::SettleWatch w;
    uint64_t t = 5'000 * kMs, compiles = 1000;
    w.feed(t, compiles);
    EXPECT_FALSE(w.settled());  // one sample: no window yet
    // Busy: 50 compiles per 100 ms.
    for (int i = 0; i < 30; i++) {
        t += 100 * kMs;
        compiles += 50;
        w.feed(t, compiles);
        EXPECT_FALSE(w.settled());
    }
    EXPECT_NEAR(w.rate_per_s(), 500, 1);
    // Quiet from here: settled once the window holds only the quiet part.
    int quiet_steps = 0;
    while (!w.settled() && quiet_steps < 100) {
        t += 100 * kMs;
        w.feed(t, compiles + (quiet_steps == 5 ? 1 : 0) + (quiet_steps > 5 ? 1 : 0));
        quiet_steps++;
    }
    EXPECT_EQ(quiet_steps, 20);  // 2 s after the last busy sample
    EXPECT_LE(w.rate_per_s(), 1.0);
}

TEST(SettleWatch, ATrickleAboveTheLimitKeepsWaiting)
{
    jmt::SettleWatch w;
    uint64_t t = 0, compiles = 0;
    for (int i = 0; i < 100; i++) {
        w.feed(t, compiles);
        t += 100 * kMs;
        compiles += i % 6 == 0 ? 1 : 0;  // about 1.7 per second: 3 or 4 per window
        if (i >= 20)
            EXPECT_FALSE(w.settled()) << i;
    }
}

TEST(AgentClassFilter, PackagesAndGlobsAsItems)
{
    EXPECT_EQ(jmt::agent_class_filter({}, {}), "*");
    EXPECT_EQ(jmt::agent_class_filter({"org/postgresql"}, {}), "p:org/postgresql");
    EXPECT_EQ(jmt::agent_class_filter({"a/b", "c"}, {"*Statement", "x/Y?"}), "p:a/b p:c g:*Statement g:x/Y?");
    // Longer than one attach argument takes: refused in one line, never widened to every class.
    try {
        jmt::agent_class_filter(std::vector<std::string>(16, std::string(200, 'p')), {});
        ADD_FAILURE() << "a filter too long for one request was not refused";
    } catch (const jmt::Error &e) {
        EXPECT_NE(std::string(e.what()).find("over the"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
}

// The agent's own parser and matcher (agent_request.h).
bool selected(const std::string &filter, const std::string &name)
{
    return jmt_class_selected(filter.data(), filter.size(), name.data(), name.size()) != 0;
}

TEST(AgentRequest, ClassFilterIsTheKernels)
{
    EXPECT_TRUE(selected("*", "anything/At/All"));
    EXPECT_TRUE(selected("p:org/postgresql", "org/postgresql/jdbc/PgStatement"));
    EXPECT_TRUE(selected("p:org/postgresql", "org/postgresql"));
    EXPECT_FALSE(selected("p:org/postgres", "org/postgresql/Driver"));  // whole segments
    EXPECT_FALSE(selected("p:org/postgresql", "com/Other"));
    EXPECT_TRUE(selected("g:*Statement", "org/postgresql/jdbc/PgStatement"));
    EXPECT_FALSE(selected("g:*Statement", "org/postgresql/jdbc/PgResultSet"));
    // Any package and any glob: both kinds must match.
    EXPECT_TRUE(selected("p:com p:org g:*Pg*", "org/postgresql/jdbc/PgStatement"));
    EXPECT_FALSE(selected("p:com g:*Pg*", "org/postgresql/jdbc/PgStatement"));
    EXPECT_FALSE(selected("p:org g:*Nope", "org/postgresql/jdbc/PgStatement"));
    EXPECT_TRUE(selected("g:org/apache/catalina/*", "org/apache/catalina/connector/CoyoteAdapter"));
    EXPECT_TRUE(selected("g:HelloWorldExample g:org/apache/catalina/*", "HelloWorldExample"));
    // Nothing it can read: no class (a retransform of every class only for "*").
    EXPECT_FALSE(selected("", "org/postgresql/Driver"));
    EXPECT_FALSE(selected("x:org junk", "org/postgresql/Driver"));
}

TEST(AgentRequest, ParsesEveryFieldAndRefusesTheRest)
{
    jmt_request r;
    const std::string text = "op=switch;owner=1234.987654321;classes=p:org/x g:*Y";
    ASSERT_EQ(jmt_parse_request(text.c_str(), &r), 0);
    EXPECT_EQ(r.op, uint32_t(JMT_OP_SWITCH));
    EXPECT_EQ(r.owner_pid, 1234);
    EXPECT_EQ(r.owner_start, 987654321u);
    EXPECT_EQ(std::string(r.classes, r.classes_len), "p:org/x g:*Y");
    ASSERT_EQ(jmt_parse_request("op=begin;owner=1.2;deopt=1", &r), 0);
    EXPECT_EQ(r.op, uint32_t(JMT_OP_BEGIN));
    EXPECT_EQ(r.deopt, 1);
    ASSERT_EQ(jmt_parse_request("op=restore", &r), 0);
    EXPECT_EQ(r.op, uint32_t(JMT_OP_RESTORE));
    ASSERT_EQ(jmt_parse_request("op=defer;owner=1.2", &r), 0);
    EXPECT_EQ(r.op, uint32_t(JMT_OP_DEFER));
    ASSERT_EQ(jmt_parse_request("op=restore", &r), 0);
    EXPECT_EQ(r.deopt, 0);
    EXPECT_EQ(r.classes_len, 0u);
    ASSERT_EQ(jmt_parse_request("op=begin;owner=1.2;flag=140737351048000;watch=/tmp/.jmethodtime-0123/owner", &r), 0);
    EXPECT_EQ(r.flag_addr, 140737351048000u);
    EXPECT_EQ(std::string(r.watch, r.watch_len), "/tmp/.jmethodtime-0123/owner");
    EXPECT_EQ(r.self, nullptr);
    ASSERT_EQ(jmt_parse_request("op=standby;self=/tmp/.jmethodtime-0123/libjmtagent.so", &r), 0);
    EXPECT_EQ(std::string(r.self, r.self_len), "/tmp/.jmethodtime-0123/libjmtagent.so");
    const std::string long_watch = "op=begin;watch=/" + std::string(JMT_AGENT_WATCH_PATH_MAX, 'x');
    const std::string long_self = "op=begin;self=/" + std::string(JMT_AGENT_WATCH_PATH_MAX, 'x');
    for (const char *bad : {"", "op=", "op=restorex", "op=standby;what=1", "op=arm;owner=12", "owner=1.2",
                            "op=begin;flag=12x", "op=begin;watch=", "op=begin;watch=relative", long_watch.c_str(),
                            "op=begin;self=", "op=begin;self=libjmtagent.so", long_self.c_str()})
        EXPECT_EQ(jmt_parse_request(bad, &r), -1) << bad;
    EXPECT_EQ(jmt_parse_request(nullptr, &r), -1);
}

TEST(AgentRequest, MethodSetHoldsEachKeyOnceUpToThreeQuarters)
{
    std::vector<const void *> set(JMT_AGENT_TRACKED_MAX, nullptr);
    uint32_t count = 0, overflow = 0;
    // jmethodIDs are pointers to 8-byte slots: keys 8 bytes apart, as they come.
    auto key = [](uint64_t i) { return reinterpret_cast<const void *>(0x7f0000001000ULL + 8 * i); };
    for (uint64_t i = 0; i < 1000; i++)
        jmt_set_add(set.data(), key(i), &count, &overflow);
    for (uint64_t i = 0; i < 1000; i++)
        jmt_set_add(set.data(), key(i), &count, &overflow);  // again: no change
    EXPECT_EQ(count, 1000u);
    EXPECT_EQ(overflow, 0u);
    for (uint64_t i = 0; i < 1000; i++)
        ASSERT_TRUE(jmt_set_has(set.data(), key(i))) << i;
    EXPECT_FALSE(jmt_set_has(set.data(), key(1000)));
    EXPECT_FALSE(jmt_set_has(set.data(), key(5000)));
    for (uint64_t i = 1000; i < JMT_AGENT_TRACKED_MAX; i++)
        jmt_set_add(set.data(), key(i), &count, &overflow);
    EXPECT_EQ(count, JMT_AGENT_TRACKED_MAX / 4 * 3);
    EXPECT_EQ(overflow, 1u);
    EXPECT_TRUE(jmt_set_has(set.data(), key(0)));
}

// The hot methods' table: a method that compiles again is taken out once; the keys after
// its slot stay found (the slot is marked, not emptied).
TEST(AgentRequest, MethodSetTakesEachKeyOnce)
{
    std::vector<const void *> set(JMT_AGENT_TRACKED_MAX, nullptr);
    uint32_t count = 0, overflow = 0;
    auto key = [](uint64_t i) { return reinterpret_cast<const void *>(0x7f0000001000ULL + 8 * i); };
    for (uint64_t i = 0; i < 3000; i++)
        jmt_set_add(set.data(), key(i), &count, &overflow);
    uint32_t taken = 0;
    for (uint64_t i = 0; i < 3000; i += 2)
        taken += static_cast<uint32_t>(jmt_set_take(set.data(), key(i)));
    for (uint64_t i = 0; i < 3000; i += 2)
        taken += static_cast<uint32_t>(jmt_set_take(set.data(), key(i)));  // again: gone
    EXPECT_EQ(taken, 1500u);
    EXPECT_EQ(jmt_set_take(set.data(), key(5000)), 0);
    for (uint64_t i = 0; i < 3000; i++)
        EXPECT_EQ(jmt_set_has(set.data(), key(i)), i % 2) << i;
}

// The agent's reading of its JVM's CPU time (its traffic watch): /proc/self/stat's utime plus
// stime, counted after the name's last ')' (a name may hold spaces and parentheses).
TEST(AgentSys, ProcessCpuTicksAreStatsUtimePlusStime)
{
    const long ticks = jmt_self_cpu_ticks();
    const std::string stat = jmt::read_file("/proc/self/stat");
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::vector<long> fields;  // from field 3
    std::string f;
    while (rest >> f && fields.size() < 13)
        fields.push_back(std::strtol(f.c_str(), nullptr, 10));
    ASSERT_EQ(fields.size(), 13u);
    const long expected = fields[11] + fields[12];
    EXPECT_GE(ticks, 0);
    EXPECT_LE(ticks, jmt_self_cpu_ticks());
    EXPECT_NEAR(double(ticks), double(expected), 1.0) << stat;
    const uint64_t t0 = jmt::monotonic_ns();
    jmt_sleep_ms(20);
    EXPECT_GE(jmt::monotonic_ns() - t0, 20'000'000u);
}

TEST(AgentDir, OnlyTheToolsOwnNames)
{
    EXPECT_TRUE(jmt::is_agent_dir("/tmp/.jmethodtime-0123456789abcdef"));
    EXPECT_TRUE(jmt::is_agent_dir("/usr/lib/jvm/jdk/lib/server/.jmethodtime-0123456789abcdef"));
    EXPECT_FALSE(jmt::is_agent_dir("/tmp/.jmethodtime-0123456789abcde"));
    EXPECT_FALSE(jmt::is_agent_dir("/tmp/.jmethodtime-0123456789abcdeF"));
    EXPECT_FALSE(jmt::is_agent_dir("tmp/.jmethodtime-0123456789abcdef"));
    EXPECT_FALSE(jmt::is_agent_dir("/tmp/.jmethodtime-0123456789abcdef/.."));
    EXPECT_FALSE(jmt::is_agent_dir("/tmp/../x/.jmethodtime-0123456789abcdef"));
}

TEST(AttachIdentity, NamespacePidOwnerAndSigquit)
{
    const char *status = "Name:\tjava\nState:\tS (sleeping)\nUid:\t998\t999\t999\t999\nGid:\t50\t51\t51\t51\n"
                         "NSpid:\t4242\t17\nSigCgt:\t0000000181005ccf\n";
    const jmt::AttachIdentity id = jmt::parse_attach_identity(4242, status);
    EXPECT_EQ(id.pid, 4242);
    EXPECT_EQ(id.ns_pid, 17);  // its own namespace's pid: the socket's name
    EXPECT_EQ(id.uid, 999u);   // effective
    EXPECT_EQ(id.gid, 51u);
    EXPECT_TRUE(id.handles_sigquit);  // bit 2 (SIGQUIT 3) of 0x...cf
    const jmt::AttachIdentity xrs =
        jmt::parse_attach_identity(7, "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t7\nSigCgt:\t0000000181005cc3\n");
    EXPECT_EQ(xrs.ns_pid, 7);
    EXPECT_FALSE(xrs.handles_sigquit);
    EXPECT_THROW(jmt::parse_attach_identity(7, "Name:\tjava\n"), jmt::Error);
}

// A made-up address space: regions of bytes at addresses.
struct FakeMemory {
    std::map<uint64_t, std::string> regions;
    void put_u64(uint64_t at, uint64_t v) { put(at, std::string(reinterpret_cast<const char *>(&v), 8)); }
    void put(uint64_t at, const std::string &bytes)
    {
        for (auto &[start, data] : regions)
            if (at >= start && at + bytes.size() <= start + data.size()) {
                data.replace(at - start, bytes.size(), bytes);
                return;
            }
        regions[at] = bytes;
    }
    std::string read(uint64_t at, size_t len) const
    {
        for (const auto &[start, data] : regions)
            if (at >= start && at + len <= start + data.size())
                return data.substr(at - start, len);
        return {};
    }
};

// HotSpot's tables as JDK 17 lays them out: struct entries of 48 bytes, type
// entries of 40, JVMFlag of 32 (_addr at 0, _name at 8).
FakeMemory hotspot_tables(const char *flag_type, std::map<std::string, uint64_t> &exported)
{
    FakeMemory m;
    m.put(0x9000, std::string(4096, '\0'));  // the strings' page
    uint64_t next_string = 0x9000;
    auto str = [&m, &next_string](const std::string &s) {
        const uint64_t at = next_string;
        m.put(at, s + '\0');
        next_string += 64;
        return at;
    };
    // The exported layout variables.
    const std::map<std::string, uint64_t> layout = {{"gHotSpotVMStructEntryArrayStride", 48},
                                                    {"gHotSpotVMStructEntryTypeNameOffset", 0},
                                                    {"gHotSpotVMStructEntryFieldNameOffset", 8},
                                                    {"gHotSpotVMStructEntryIsStaticOffset", 24},
                                                    {"gHotSpotVMStructEntryOffsetOffset", 32},
                                                    {"gHotSpotVMStructEntryAddressOffset", 40},
                                                    {"gHotSpotVMTypeEntryArrayStride", 40},
                                                    {"gHotSpotVMTypeEntryTypeNameOffset", 0},
                                                    {"gHotSpotVMTypeEntrySizeOffset", 32},
                                                    {"gHotSpotVMStructs", 0x1000},
                                                    {"gHotSpotVMTypes", 0x3000}};
    uint64_t var = 0x100;
    for (const auto &[name, value] : layout) {
        m.put_u64(var, value);
        exported[name] = var;
        var += 8;
    }
    m.put(0x1000, std::string(48 * 8, '\0'));
    m.put(0x3000, std::string(40 * 4, '\0'));
    // Flag table: 3 flags at 0x5000, its variable at 0x4000, the count at 0x4008.
    m.put(0x4000, std::string(16, '\0'));
    m.put_u64(0x4000, 0x5000);
    m.put_u64(0x4008, 3);
    m.put(0x5000, std::string(32 * 3, '\0'));
    const char *flags[] = {"UseG1GC", "DTraceMethodProbes", "DisableAttachMechanism"};
    for (int i = 0; i < 3; i++) {
        m.put_u64(0x5000 + 32 * i, 0x7000 + i);  // the flag's byte
        m.put_u64(0x5000 + 32 * i + 8, str(flags[i]));
    }
    // Struct entries: another type's field first, then the flag type's four, then the end.
    struct E {
        const char *type, *field;
        uint64_t offset, address;
    } entries[] = {{"Klass", "_name", 16, 0},
                   {flag_type, "_name", 8, 0},
                   {flag_type, "flags", 0, 0x4000},
                   {flag_type, "_addr", 0, 0},
                   {flag_type, "numFlags", 0, 0x4008}};
    uint64_t e = 0x1000;
    for (const E &entry : entries) {
        m.put_u64(e, str(entry.type));
        m.put_u64(e + 8, str(entry.field));
        m.put_u64(e + 32, entry.offset);
        m.put_u64(e + 40, entry.address);
        e += 48;
    }
    m.put_u64(0x3000, str("Klass"));
    m.put_u64(0x3000 + 32, 200);
    m.put_u64(0x3000 + 40, str(flag_type));
    m.put_u64(0x3000 + 40 + 32, 32);
    return m;
}

TEST(VmStructs, FlagAddressesFromTheFlagTable)
{
    for (const char *type : {"JVMFlag", "Flag"}) {  // JDK 11+, JDK 8
        std::map<std::string, uint64_t> exported;
        const FakeMemory m = hotspot_tables(type, exported);
        const auto read = [&m](uint64_t at, size_t len) { return m.read(at, len); };
        const auto found = jmt::flags_from_vmstructs(
            read, exported, {"DTraceMethodProbes", "DisableAttachMechanism", "EnableDynamicAgentLoading"});
        ASSERT_EQ(found.size(), 2u) << type;
        EXPECT_EQ(found.at("DTraceMethodProbes"), 0x7001u);
        EXPECT_EQ(found.at("DisableAttachMechanism"), 0x7002u);
        // A table that is not there: nothing, no throw.
        std::map<std::string, uint64_t> partial = exported;
        partial.erase("gHotSpotVMTypes");
        EXPECT_TRUE(jmt::flags_from_vmstructs(read, partial, {"DTraceMethodProbes"}).empty());
        const auto unreadable = [](uint64_t, size_t) { return std::string(); };
        EXPECT_TRUE(jmt::flags_from_vmstructs(unreadable, exported, {"DTraceMethodProbes"}).empty());
    }
}

}  // namespace
