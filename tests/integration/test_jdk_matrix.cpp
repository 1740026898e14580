// The JDKs fleets run, as they run them: Debian's OpenJDK 21 and 25 from a
// Debian trixie root (tests/containers/make-root.sh), each JVM in a container
// (its own mount and pid namespaces, the root pivoted into, the host's files
// unreachable) or in a plain chroot (this mount namespace, where its maps show
// this host's paths). Exact counts from the workloads' own call trees: traced
// from the start, attached mid-run, switched on at run time (JDK 21 without
// the flag), on standby (JDK 25 with it).
#include <unistd.h>

#include <iostream>

#include "harness.h"
#include "jvm/jvm.h"
#include "util/procfs.h"
#include "warm_jvm.h"

using jmt_it::calls_of;
using jmt_it::kRootJdk21;
using jmt_it::kRootJdk25;
using jmt_it::RootJdk;
using jmt_it::RootMode;
using jmt_it::WarmJvm;

namespace {

constexpr char kFixedWork[] = "demo/abc/FixedWork";

// The JVM runs from the root: in a container, pid 1 of its own pid namespace, and none of
// the host's files (the build's classes) reachable from its root; in a chroot, this namespace's.
void expect_in_root(int pid, RootMode mode)
{
    const std::string proc = "/proc/" + std::to_string(pid);
    EXPECT_NE(jmt::read_file(proc + "/root/etc/os-release").find("trixie"), std::string::npos);
    const std::string status = jmt::read_file(proc + "/status");
    const bool own_pids = status.find("\nNSpid:\t" + std::to_string(pid) + "\t1\n") != std::string::npos;
    EXPECT_EQ(own_pids, mode == RootMode::Container) << status;
    EXPECT_NE(access((proc + "/root" + JMT_JAVA_CLASSES).c_str(), F_OK), 0) << "the host's files are reachable";
}

// No uprobe of any tracer left on the JVM's method probes: one registered as bcc does
// succeeds only on a probe site nobody else holds.
void expect_no_uprobe_left(int pid)
{
    const std::string libjvm = jmt_it::examined(pid).libjvm;
    for (const char *probe : {"method__entry", "method__return"}) {
        jmt_it::ForeignUprobe other(pid, libjvm, probe);
        EXPECT_EQ(other.error(), 0) << "a uprobe is still on hotspot:" << probe << " of " << libjvm;
    }
}

// FixedWork traced from before its calls: N a(), 2N b(), 5N c(), one run().
void expect_fixed_work_exact(const std::string &home, int feature)
{
    const int n = 400;
    RootJdk jdk(home, RootMode::Container);
    jmt_it::RunSpec spec;
    spec.jvm = jdk.command({"demo.abc.FixedWork", {std::to_string(n), "5"}});
    spec.jmt_args = {"--package", "demo/abc"};
    const jmt_it::RunResult r = jmt_it::run_traced(spec);
    ASSERT_FALSE(r.report.is_null()) << r.jmt_stderr;
    EXPECT_EQ(r.report["jdk_version"].get<std::string>().rfind(std::to_string(feature) + ".", 0), 0u)
        << r.report["jdk_version"];
    EXPECT_EQ(calls_of(r.report, kFixedWork, "a", "()V"), uint64_t(n));
    EXPECT_EQ(calls_of(r.report, kFixedWork, "b", "()V"), uint64_t(2 * n));
    EXPECT_EQ(calls_of(r.report, kFixedWork, "c", "()V"), uint64_t(5 * n));
    EXPECT_EQ(calls_of(r.report, kFixedWork, "run", "(I)V"), 1u);
    EXPECT_EQ(r.report["diagnostics"]["dropped_frames"], 0);
}

// Deep, attached at READY with DEPTH frames of down() open: the calls made after the
// attach are exact (LEAVES leaf(), no down() entered), the DEPTH returns never entered
// are counted as unmatched and nothing else is.
void expect_mid_run_attach_exact(const std::string &home)
{
    const int depth = 1000, leaves = 2000;
    RootJdk jdk(home, RootMode::Container);
    jmt_it::RunSpec spec;
    spec.jvm = jdk.command({"demo.recursion.Deep", {std::to_string(depth), std::to_string(leaves)}});
    spec.jmt_args = {"--package", "demo/recursion"};
    const jmt_it::RunResult r = jmt_it::run_traced(spec);
    ASSERT_FALSE(r.report.is_null()) << r.jmt_stderr;
    const std::string k = "demo/recursion/Deep";
    EXPECT_EQ(calls_of(r.report, k, "leaf", "(I)I"), uint64_t(leaves));
    EXPECT_EQ(calls_of(r.report, k, "down", "(I)I"), 0u);
    const auto &d = r.report["diagnostics"];
    // down(DEPTH..0), then main, the lambda's proxy run() and lambda$main$0 below them.
    EXPECT_EQ(d["unmatched_returns"].get<uint64_t>(), uint64_t(depth + 1 + 3));
    EXPECT_EQ(d["dropped_frames"], 0);
}

class JdkMatrix : public jmt_it::RootTest {};

TEST_F(JdkMatrix, Jdk21InAContainerCountsExactly) { expect_fixed_work_exact(kRootJdk21, 21); }

TEST_F(JdkMatrix, Jdk25InAContainerCountsExactly) { expect_fixed_work_exact(kRootJdk25, 25); }

TEST_F(JdkMatrix, Jdk21InAContainerAttachedMidRunCountsTheCallsAfter) { expect_mid_run_attach_exact(kRootJdk21); }

TEST_F(JdkMatrix, Jdk25InAContainerAttachedMidRunCountsTheCallsAfter) { expect_mid_run_attach_exact(kRootJdk25); }

// JDK 21 started without the flag: switched on for the trace's classes, exact counts, and
// after the trace the flag byte is 0, no probe call is left in its code, no uprobe on it.
TEST_F(JdkMatrix, Jdk21InAContainerSwitchedOnAtRunTime)
{
    RootJdk jdk(kRootJdk21, RootMode::Container);
    WarmJvm jvm(jdk.command(jmt_it::warm_command()));
    ASSERT_GT(jvm.pid(), 0);
    expect_in_root(jvm.pid(), RootMode::Container);
    EXPECT_EQ(jmt_it::examined(jvm.pid()).access, jmt::ProbeAccess::Switchable);
    EXPECT_EQ(jmt_it::events_of_round(jvm, 20000), 0u) << "a JVM without the flag fires no probe";
    const jmt_it::Traced t = jmt_it::trace_round(jvm, 5000);
    jmt_it::expect_tree_counts(t, 5000);
    EXPECT_EQ(t.report["probes"]["access"], "switched");
    EXPECT_FALSE(jmt_it::flag_on(jvm.pid()));
    EXPECT_EQ(jmt_it::examined(jvm.pid()).access, jmt::ProbeAccess::Switchable);
    jmt_it::expect_nothing_left_under_traffic(jvm);
    expect_no_uprobe_left(jvm.pid());
    jmt_it::expect_tmp_clean(jvm.pid());
    EXPECT_EQ(jmt_it::agent_copies(jvm.pid()), 1u);
}

// JDK 25 started with the flag, put on standby: a round fires nothing once compiled again,
// a trace has exact counts and leaves it on standby.
TEST_F(JdkMatrix, Jdk25InAContainerOnStandbyThenTraced)
{
    RootJdk jdk(kRootJdk25, RootMode::Container);
    WarmJvm jvm(jdk.command(jmt_it::warm_command({"-XX:+DTraceMethodProbes"})));
    ASSERT_GT(jvm.pid(), 0);
    expect_in_root(jvm.pid(), RootMode::Container);
    EXPECT_EQ(jmt_it::examined(jvm.pid()).access, jmt::ProbeAccess::AtStart);
    // 16 events per a(): 8 calls, each entered and returned.
    const uint64_t before = jmt_it::events_of_round(jvm, 20000);
    EXPECT_GE(before, 320000u);
    EXPECT_NE(jmt_it::standby(jvm.pid()).find("pid " + jvm.pid_text() + " is on standby"), std::string::npos);
    EXPECT_EQ(jmt_it::examined(jvm.pid()).access, jmt::ProbeAccess::Standby);
    EXPECT_FALSE(jmt_it::flag_on(jvm.pid()));
    // From JDK 24 the interpreter keeps its probe calls: a round runs them until the tree is
    // compiled again, without them.
    jvm.round(jmt_it::kWarmCalls);
    EXPECT_LT(jmt_it::events_of_round(jvm, 20000), before / 100);
    const jmt_it::Traced t = jmt_it::trace_round(jvm, 4000);
    jmt_it::expect_tree_counts(t, 4000);
    EXPECT_EQ(t.report["probes"]["access"], "switched");
    EXPECT_EQ(jmt_it::examined(jvm.pid()).access, jmt::ProbeAccess::Standby);
}

// A JVM in a plain chroot, whose maps name this host's paths: its JDK's version is read,
// its probes switched on at run time (JDK 21 without the flag), the agent placed in its
// /tmp and asked again by the second trace under the path the JVM loaded it by.
TEST_F(JdkMatrix, Jdk21InAPlainChrootSwitchedOnTwice)
{
    RootJdk jdk(kRootJdk21, RootMode::Chroot);
    WarmJvm jvm(jdk.command(jmt_it::warm_command()));
    ASSERT_GT(jvm.pid(), 0);
    expect_in_root(jvm.pid(), RootMode::Chroot);
    const jmt::JvmTarget target = jmt_it::examined(jvm.pid());
    EXPECT_EQ(target.jdk_version.rfind("21.", 0), 0u) << target.jdk_version;
    EXPECT_EQ(target.libjvm, std::string(JMT_TEST_ROOT) + kRootJdk21 + "/lib/server/libjvm.so");
    EXPECT_EQ(target.libjvm_seen, std::string(kRootJdk21) + "/lib/server/libjvm.so");
    EXPECT_EQ(target.access, jmt::ProbeAccess::Switchable) << target.off_reason;
    for (int n : {3000, 2000}) {
        SCOPED_TRACE("a round of " + std::to_string(n));
        const jmt_it::Traced t = jmt_it::trace_round(jvm, n);
        jmt_it::expect_tree_counts(t, n);
        EXPECT_EQ(t.report["probes"]["access"], "switched");
        EXPECT_EQ(t.report["jdk_version"].get<std::string>().rfind("21.", 0), 0u);
        EXPECT_FALSE(jmt_it::flag_on(jvm.pid()));
        jmt_it::expect_nothing_left_under_traffic(jvm);
        expect_no_uprobe_left(jvm.pid());
        jmt_it::expect_tmp_clean(jvm.pid());
    }
    EXPECT_EQ(jmt_it::agent_copies(jvm.pid()), 1u);
}

}  // namespace
