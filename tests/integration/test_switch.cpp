// The method probes switched on in a running JVM for a trace's classes only, and
// off at its end; standby; the JVMs that cannot be switched; a tracer killed
// mid-trace. Real JVMs (Debian's JDK 17; Temurin 25 where the machine has it),
// a real agent loaded through HotSpot's attach mechanism, real BPF programs.
//
// "No probe call left" is counted, not timed: empty BPF programs on the JVM's
// probes (the benchmark's floor programs) and the kernel's own run counts
// (bpf_enable_stats) give the probe events a round of calls fires.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "harness.h"
#include "jvm/agent_state.h"
#include "jvm/hotspot_flags.h"
#include "jvm/hotspot_symbols.h"
#include "jvm/jvm.h"
#include "util/lifecycle.h"
#include "util/procfs.h"
#include "warm_jvm.h"

using jmt_it::Child;

namespace {

using jmt_it::agent_copies;
using jmt_it::events_of_round;
using jmt_it::examined;
using jmt_it::expect_nothing_left_under_traffic;
using jmt_it::expect_tmp_clean;
using jmt_it::expect_tree_counts;
using jmt_it::flag_on;
using jmt_it::jvm_threads_named;
using jmt_it::kWarmCalls;
using jmt_it::trace_round;
using jmt_it::Traced;
using jmt_it::warm_command;
using jmt_it::WarmJvm;

class Switch : public jmt_it::BpfTest {};

// JDK 17 started without the flag: a warm, JIT-compiled call tree is traced
// with exact counts, twice (-p, then --match), and after each trace no probe call is left.
TEST_F(Switch, WarmJvmWithoutTheFlagTwiceWithExactCountsAndNothingLeft)
{
    const std::string marker = "-Djmt.switchtest=" + std::to_string(getpid());
    WarmJvm jvm(warm_command({marker}));
    EXPECT_EQ(examined(jvm.pid()).access, jmt::ProbeAccess::Switchable);
    EXPECT_EQ(events_of_round(jvm, 20000), 0u) << "a JVM without the flag fires no probe";
    const std::vector<int> rounds = {5000, 3000};
    for (size_t i = 0; i < rounds.size(); i++) {
        SCOPED_TRACE("trace " + std::to_string(i + 1));
        const Traced t =
            i == 0 ? trace_round(jvm, rounds[i]) : trace_round(jvm, rounds[i], {}, {"--match", marker + " "});
        expect_tree_counts(t, rounds[i]);
        EXPECT_EQ(t.report["probes"]["access"], "switched");
        EXPECT_GE(t.report["probes"]["classes"].get<int>(), 1);
        EXPECT_NE(t.err.find("Switched pid " + jvm.pid_text() + "'s method probes on"), std::string::npos) << t.err;
        EXPECT_FALSE(flag_on(jvm.pid()));
        EXPECT_EQ(examined(jvm.pid()).access, jmt::ProbeAccess::Switchable);
        // The code compiled with probe calls during the trace goes once traffic is back: a round
        // fires nothing then, and the agent's watches have ended.
        expect_nothing_left_under_traffic(jvm);
        expect_tmp_clean(jvm.pid());
    }
    EXPECT_EQ(agent_copies(jvm.pid()), 1u);
    // The agent keeps its own file open from the first request: later loads name
    // /proc/self/fd/N, the one file a musl JVM's loader finds loaded (tests/musl).
    const std::optional<jmt::LoadedAgent> agent = jmt::find_agent(jvm.pid());
    ASSERT_TRUE(agent.has_value());
    ASSERT_GE(agent->state.own_fd, 0) << "the agent did not keep its file";
    struct stat kept = {};
    ASSERT_EQ(stat(("/proc/" + jvm.pid_text() + "/fd/" + std::to_string(agent->state.own_fd)).c_str(), &kept), 0);
    bool mapped = false;
    for (const jmt::MapsEntry &e : jmt::parse_maps(jmt::read_file("/proc/" + jvm.pid_text() + "/maps")))
        mapped = mapped || (e.path.find("/libjmtagent.so") != std::string::npos && e.inode == kept.st_ino);
    EXPECT_TRUE(mapped) << "descriptor " << agent->state.own_fd << " is not the loaded agent's file";
    EXPECT_GE(agent->state.requests, 8u) << "two traces' requests, each answered by this one agent";
}

// JDK 17 started with the flag: every call fires; on standby none does; a
// trace after it has exact counts and puts it back on standby.
TEST_F(Switch, StandbyThenATraceThenStandbyAgain)
{
    WarmJvm jvm(warm_command({"-XX:+DTraceMethodProbes"}));
    EXPECT_EQ(examined(jvm.pid()).access, jmt::ProbeAccess::AtStart);
    // 16 events per a(): 8 calls, each entered and returned.
    EXPECT_GE(events_of_round(jvm, 10000), 160000u);
    Child standby({JMT_BINARY, "standby", "-p", jvm.pid_text()}, false);
    EXPECT_EQ(standby.wait_exit(60000), 0) << standby.drain(true, 1000);
    EXPECT_NE(standby.drain(false, 1000).find("pid " + jvm.pid_text() + " is on standby"), std::string::npos);
    EXPECT_EQ(examined(jvm.pid()).access, jmt::ProbeAccess::Standby);
    EXPECT_FALSE(flag_on(jvm.pid()));
    EXPECT_EQ(events_of_round(jvm, 20000), 0u);
    const Traced t = trace_round(jvm, 4000);
    expect_tree_counts(t, 4000);
    EXPECT_EQ(t.report["probes"]["access"], "switched");
    EXPECT_EQ(examined(jvm.pid()).access, jmt::ProbeAccess::Standby);
    expect_nothing_left_under_traffic(jvm);
    Child again({JMT_BINARY, "standby", "-p", jvm.pid_text()}, false);
    EXPECT_EQ(again.wait_exit(60000), 0);
    EXPECT_NE(again.drain(false, 1000).find("on standby already"), std::string::npos);
    expect_tmp_clean(jvm.pid());
}

// A JVM whose attach mechanism or dynamic agents are off: one line naming the
// flag, well within 10 s, and the JVM untouched.
TEST_F(Switch, AttachRefusedSaysWhichFlag)
{
    const std::pair<const char *, const char *> cases[] = {
        {"-XX:+DisableAttachMechanism", "-XX:+DisableAttachMechanism"},
        {"-XX:-EnableDynamicAgentLoading", "-XX:-EnableDynamicAgentLoading"}};
    for (const auto &[flag, needle] : cases) {
        SCOPED_TRACE(flag);
        WarmJvm jvm(warm_command({flag}));
        const uint64_t start = jmt::monotonic_ns();
        jmt_it::expect_one_line_error({JMT_BINARY, "-p", jvm.pid_text(), "--package", "demo"}, needle);
        EXPECT_LT(jmt::monotonic_ns() - start, 10'000'000'000u);
        EXPECT_FALSE(flag_on(jvm.pid()));
        EXPECT_EQ(agent_copies(jvm.pid()), 0u);
        EXPECT_EQ(events_of_round(jvm, 1000), 0u);
    }
}

// The JVM's CPU per call of Tree.a() over a round of n calls, ns.
double cpu_per_call(WarmJvm &jvm, int n)
{
    const uint64_t before = jmt::process_cpu_ns(jvm.pid()).value_or(0);
    jvm.round(n);
    return static_cast<double>(jmt::process_cpu_ns(jvm.pid()).value_or(0) - before) / n;
}

constexpr int kCpuRound = 8'000'000;  // calls per CPU round: about 0.6 s compiled, 60 ticks of CPU time (10 ms each)

// The JVM's CPU per call over each of three CPU rounds, ns.
std::vector<double> cpu_rounds(WarmJvm &jvm)
{
    std::vector<double> rounds;
    for (int i = 0; i < 3; i++)
        rounds.push_back(cpu_per_call(jvm, kCpuRound));
    return rounds;
}

// A jmethodtime killed with SIGKILL mid-trace: the agent sees its owner's FIFO close and
// switches the probes off by itself (flag byte 0, the classes retransformed back), so that
// within 10 s the JVM's CPU per call is what it was before, with no other jmethodtime run.
TEST_F(Switch, TracerKilledMidTraceIsPutBackByTheAgent)
{
    WarmJvm jvm(warm_command());
    const std::vector<double> before = cpu_rounds(jvm);
    const double base = *std::min_element(before.begin(), before.end());
    const double spread = *std::max_element(before.begin(), before.end()) / base - 1;
    uint64_t killed = 0;
    {
        Child jmt({JMT_BINARY, "-p", jvm.pid_text(), "--package", "demo/warm/tree", "--settle", "20"}, false);
        ASSERT_FALSE(jmt_it::wait_tracing(jmt, 120000).empty());
        jvm.round(2000);
        EXPECT_TRUE(flag_on(jvm.pid()));
        EXPECT_EQ(jvm_threads_named(jvm.pid(), "jmethodtime"), 1u) << "the agent's watch over its owner";
        // Code compiled with the flag on calls the probes: the CPU per call the kill must undo.
        const double traced = cpu_per_call(jvm, 100000);
        jmt.signal(SIGKILL);
        killed = jmt::monotonic_ns();
        jmt.wait_exit(10000);
        std::cout << "  CPU per call: " << base << " ns before (3 rounds, spread " << 100 * spread << "%), " << traced
                  << " ns traced" << std::endl;
    }
    // The agent restores within a poll of the owner's exit: flag off, mode back to idle.
    while (flag_on(jvm.pid()) || examined(jvm.pid()).access != jmt::ProbeAccess::Switchable) {
        ASSERT_LT(jmt::monotonic_ns() - killed, 10'000'000'000u) << "still switched on 10 s after the kill";
        usleep(50000);
    }
    const double restored_s = static_cast<double>(jmt::monotonic_ns() - killed) / 1e9;
    const std::optional<jmt::LoadedAgent> agent = jmt::find_agent(jvm.pid());
    ASSERT_TRUE(agent.has_value());
    EXPECT_EQ(agent->state.owner_gone, 1u);
    EXPECT_EQ(agent->state.owner_gone_error, 0);
    EXPECT_EQ(agent->state.watching, 0u);
    // Rounds until the code is compiled again without probe calls; the CPU per call is
    // within 10% of before by 10 s after the kill.
    double after = 0;
    int rounds = 0;
    do {
        after = cpu_per_call(jvm, kCpuRound);
        rounds++;
    } while (after > base * 1.10 && jmt::monotonic_ns() - killed < 10'000'000'000u);
    const double back_s = static_cast<double>(jmt::monotonic_ns() - killed) / 1e9;
    std::cout << "  restored " << restored_s << " s after the kill; " << after << " ns per call after " << rounds
              << " rounds, " << back_s << " s after it" << std::endl;
    EXPECT_LE(after, base * 1.10) << "before " << base << " ns per call, after " << after;
    EXPECT_LT(back_s, 10.0);
    EXPECT_EQ(events_of_round(jvm, 20000), 0u) << "no compiled code keeps a probe call";
    // No "left on" for --list, nothing for the next trace to put back, and no agent thread left.
    Child list({JMT_BINARY, "--list", "--json"}, false);
    EXPECT_EQ(list.wait_exit(30000), 0);
    bool listed = false;
    for (const auto &j : nlohmann::json::parse(list.drain(false, 2000)))
        if (j["pid"] == jvm.pid()) {
            EXPECT_EQ(j["probes"], "switchable");
            EXPECT_EQ(j["deferred_methods"], 0) << "restored under traffic";
            listed = true;
        }
    EXPECT_TRUE(listed);
    EXPECT_EQ(jvm_threads_named(jvm.pid(), "jmethodtime"), 0u);
    const Traced t = trace_round(jvm, 3000);
    EXPECT_EQ(t.err.find("were left switched on"), std::string::npos) << t.err;
    expect_tree_counts(t, 3000);
    EXPECT_FALSE(flag_on(jvm.pid()));
    expect_nothing_left_under_traffic(jvm);
}

// A trace's end on a quiet JVM: the code compiled during the trace keeps its probe calls (no trap
// without a tracer) while nothing runs, and a second trace right after traps no wider than the
// first; once traffic is back the agent takes the calls out within its traffic window
// (expect_nothing_left_under_traffic), and the JVM's CPU per call is what it was before.
TEST_F(Switch, AQuietEndKeepsTheTracesCodeUntilTrafficComesBack)
{
    WarmJvm jvm(warm_command());
    const std::vector<double> before = cpu_rounds(jvm);
    const double base = *std::min_element(before.begin(), before.end());
    std::vector<double> events;  // probe events per call of a()
    for (int i = 0; i < 2; i++) {
        SCOPED_TRACE("quiet trace " + std::to_string(i + 1));
        const Traced t = trace_round(jvm, 5000);
        expect_tree_counts(t, 5000);
        events.push_back(t.report["overhead"]["events"].get<double>() / 5000);
        EXPECT_GT(t.report["probes"]["end_deferred"].get<uint32_t>(), 0u) << t.err;
        EXPECT_NE(t.err.find("keep their probe calls until traffic"), std::string::npos) << t.err;
        sleep(3);  // quiet for three of the agent's traffic windows
        const std::optional<jmt::LoadedAgent> agent = jmt::find_agent(jvm.pid());
        ASSERT_TRUE(agent.has_value());
        EXPECT_EQ(agent->state.mode, uint32_t(JMT_AGENT_DEFERRED)) << "a quiet JVM keeps the trace's code";
        EXPECT_EQ(agent->state.traffic_restores, 0u);
        EXPECT_FALSE(flag_on(jvm.pid()));
        const jmt::JvmTarget listed = examined(jvm.pid());  // as --list shows it
        EXPECT_EQ(listed.access, jmt::ProbeAccess::Switchable);
        EXPECT_EQ(listed.deferred_methods, agent->state.deferred);
        EXPECT_EQ(listed.deferred_methods, t.report["probes"]["end_deferred"].get<uint32_t>());
    }
    std::cout << "  probe events per call of a(): " << events[0] << " in the first trace, " << events[1]
              << " in the second" << std::endl;
    EXPECT_LE(events[1], 1.1 * events[0]) << "the second trace traps wider than the first";
    expect_nothing_left_under_traffic(jvm);
    EXPECT_EQ(examined(jvm.pid()).deferred_methods, 0u) << "--list: nothing deferred once traffic came";
    const std::vector<double> after = cpu_rounds(jvm);
    const double back = *std::min_element(after.begin(), after.end());
    std::cout << "  CPU per call " << base << " ns before the traces, " << back << " ns after" << std::endl;
    EXPECT_LE(back, base * 1.10);
}

// A JVM as in a container: its own mount namespace with its own /tmp, its own
// pid namespace (it is pid 1 there, which names its attach socket), run by
// another user. The agent is placed in that /tmp, the attach goes through it;
// with that /tmp mounted noexec (no code can be mapped from it), in the
// directory of the JVM's libjvm.so.
TEST_F(Switch, JvmInItsOwnNamespacesAsAnotherUser)
{
    for (const std::string tmp_options : {"mode=1777", "mode=1777,noexec"}) {
        SCOPED_TRACE("/tmp " + tmp_options);
        const std::string marker = "-Djmt.container=" + std::to_string(getpid()) + "." + tmp_options;
        // The classes may be under the host's /tmp (a build there): the new /tmp is made on /mnt,
        // given a copy of them, then moved over /tmp.
        WarmJvm jvm(WarmJvm::command(
            {"unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private", "--", "sh", "-c",
             "mount -t tmpfs -o " + tmp_options + " jmt-tmp /mnt && cp -r '" + JMT_JAVA_CLASSES +
                 "' /mnt/classes && chmod -R a+rX /mnt/classes && mount --move /mnt /tmp && "
                 "exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$@\"",
             "sh"},
            JMT_JAVA, {marker}, "/tmp/classes"));
        ASSERT_GT(jvm.pid(), 0);
        const std::string status = jmt::read_file("/proc/" + jvm.pid_text() + "/status");
        EXPECT_NE(status.find("\nNSpid:\t" + jvm.pid_text() + "\t1\n"), std::string::npos) << status;
        EXPECT_NE(status.find("\nUid:\t65534\t"), std::string::npos);
        const Traced t = trace_round(jvm, 2000);
        expect_tree_counts(t, 2000);
        EXPECT_FALSE(flag_on(jvm.pid()));
        expect_nothing_left_under_traffic(jvm);
        expect_tmp_clean(jvm.pid());
        // Where the JVM loaded the agent from (its code's mapping), and nothing of it left there.
        std::string agent_dir;
        for (const jmt::MapsEntry &e : jmt::parse_maps(jmt::read_file("/proc/" + jvm.pid_text() + "/maps")))
            if (e.path.find("/libjmtagent.so") != std::string::npos && e.perms.find('x') != std::string::npos)
                agent_dir = e.path.substr(0, e.path.rfind('/'));
        const std::string libjvm_dir =
            examined(jvm.pid()).libjvm_seen.substr(0, examined(jvm.pid()).libjvm_seen.rfind('/'));
        EXPECT_EQ(agent_dir.rfind(tmp_options.find("noexec") != std::string::npos ? libjvm_dir : "/tmp", 0), 0u)
            << agent_dir;
        EXPECT_NE(access(("/proc/" + jvm.pid_text() + "/root" + agent_dir).c_str(), F_OK), 0) << agent_dir;
        // The host's /tmp never saw the socket or the agent.
        EXPECT_NE(access("/tmp/.java_pid1", F_OK), 0);
    }
}

// HotSpot's exported flag table gives the addresses libjvm's symbol table gives
// (the way jmethodtime finds the flags of a stripped libjvm): JDK 17 and JDK 25.
TEST_F(Switch, VmStructsFlagTableAgreesWithTheSymbolTable)
{
    std::vector<jmt_it::JavaCommand> javas = {jmt_it::warm_command()};
    if (jmt_it::jdk25_unavailable_reason().empty())
        javas.push_back(jmt_it::jdk25().attached(jmt_it::warm_command()));
    else
        std::cout << "  (" << jmt_it::jdk25_unavailable_reason() << ": JDK 17 only)" << std::endl;
    for (const jmt_it::JavaCommand &java : javas) {
        SCOPED_TRACE(java.java);
        WarmJvm jvm(java);
        const jmt::JvmTarget t = examined(jvm.pid());
        const jmt::JvmMemory memory(t.pid, t.libjvm_bias, t.libjvm_symbols);
        std::map<std::string, uint64_t> exported;
        for (const auto &[name, value] : t.libjvm_symbols)
            if (name.rfind("gHotSpotVM", 0) == 0)
                exported[name] = t.libjvm_bias + value;
        const auto flags = jmt::flags_from_vmstructs([&memory](uint64_t a, size_t n) { return memory.read(a, n); },
                                                     exported, jmt::hotspot::kSwitchFlags);
        ASSERT_EQ(flags.size(), jmt::hotspot::kSwitchFlags.size());
        for (const std::string &name : jmt::hotspot::kSwitchFlags) {
            ASSERT_TRUE(memory.symbol(name).has_value()) << name;
            EXPECT_EQ(flags.at(name), *memory.symbol(name)) << name;
        }
    }
}

// JDK 25 (Temurin's, else Debian's from the root in a container): without the flag, one line
// (its interpreter cannot be switched); with it, standby and an exact trace after it.
TEST_F(Switch, Temurin25WithoutTheFlagIsRefusedWithItStandsBy)
{
    JMT_REQUIRE_JDK25();
    const jmt_it::Jdk25 &jdk = jmt_it::jdk25();
    std::cout << "  on " << jdk.name() << std::endl;
    {
        WarmJvm off(jdk.attached(jmt_it::warm_command()));
        jmt_it::expect_one_line_error({JMT_BINARY, "-p", off.pid_text(), "--package", "demo"},
                                      "from JDK 24 the interpreter has its probe calls only when started with "
                                      "the flag");
        EXPECT_EQ(agent_copies(off.pid()), 0u);
    }
    WarmJvm jvm(jdk.attached(jmt_it::warm_command({"-XX:+DTraceMethodProbes"})));
    const uint64_t before = events_of_round(jvm, 20000);
    EXPECT_GE(before, 320000u);
    EXPECT_NE(jmt_it::standby(jvm.pid()).find("pid " + jvm.pid_text() + " is on standby"), std::string::npos);
    // From JDK 24 the interpreter keeps its probe calls: the tree fires while it
    // runs interpreted, until it compiles again, without them.
    jvm.round(kWarmCalls);
    const uint64_t after = events_of_round(jvm, 20000);
    EXPECT_LT(after, before / 100) << "on standby, a warm round fires " << after << " events against " << before;
    const Traced t = trace_round(jvm, 4000);
    expect_tree_counts(t, 4000);
    EXPECT_EQ(examined(jvm.pid()).access, jmt::ProbeAccess::Standby);
    EXPECT_GE(jmt_it::traffic_until_restored(jvm), 0.0);
    jvm.round(kWarmCalls);
    EXPECT_LT(events_of_round(jvm, 20000), before / 100);
}

}  // namespace
