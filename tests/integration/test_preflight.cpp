// Every preflight error triggered for real, --list, a JVM in its own mount
// namespace, and no uprobe left behind however a trace ends.
#include <link.h>
#include <signal.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "harness.h"

using jmt_it::Child;
using jmt_it::expect_one_line_error;

namespace {

// A JVM idle until killed (demo.launch.Startup sleeps after a few calls):
// with the probes on, or without the flag and with flags.
struct IdleJvm : jmt_it::Workload {
    explicit IdleJvm(bool probes = true, const std::vector<std::string> &flags = {})
        : Workload({"demo.launch.Startup", {"1", "0", "120000"}, flags, probes}, "DONE")
    {}
};

// The path of a shared object this process has mapped whose file name starts with
// prefix (libz.so: through libelf; libc.so: in any dynamic executable), or "".
std::string mapped_object(const std::string &prefix)
{
    struct Search {
        std::string prefix, path;
    } search{prefix, ""};
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *data) {
            auto *s = static_cast<Search *>(data);
            const std::string name = info->dlpi_name ? info->dlpi_name : "";
            if (name.compare(name.rfind('/') + 1, s->prefix.size(), s->prefix) != 0)
                return 0;
            s->path = name;
            return 1;
        },
        &search);
    return search.path;
}

// A process that maps a libjvm.so without any hotspot probe: a copy of a shared object
// this test has mapped (libz, else libc; whatever this machine's layout) preloaded into
// sleep, as a JDK built without --enable-dtrace would look.
struct FakeJdkProcess {
    FakeJdkProcess()
    {
        EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
        std::string lib = mapped_object("libz.so");
        if (lib.empty())
            lib = mapped_object("libc.so");
        EXPECT_FALSE(lib.empty()) << "neither libz nor libc is mapped by this test";
        std::cout << "  fake libjvm.so: a copy of " << lib << std::endl;
        EXPECT_EQ(system(("cp -L '" + lib + "' " + dir + "/libjvm.so").c_str()), 0);
        proc = std::make_unique<Child>(
            std::vector<std::string>{"env", "LD_PRELOAD=" + dir + "/libjvm.so", "sleep", "120"}, false);
        usleep(300000);
    }
    ~FakeJdkProcess()
    {
        proc.reset();
        system(("rm -rf " + dir).c_str());
    }
    std::string dir = "/tmp/jmt-fakejdk-" + std::to_string(getpid());
    std::unique_ptr<Child> proc;
};

class Preflight : public jmt_it::BpfTest {};

TEST_F(Preflight, NotRoot)
{
    IdleJvm jvm;
    expect_one_line_error(
        {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", JMT_BINARY, "-p", jvm.pid_text()},
        "not enough privilege to load BPF programs (uid 65534): run jmethodtime as root");
}

TEST_F(Preflight, KernelWithoutBtf)
{
    IdleJvm jvm;
    // In a private mount namespace, an empty tmpfs hides /sys/kernel/btf as a kernel without BTF would.
    expect_one_line_error({"unshare", "-m", "--propagation", "private", "--", "sh", "-c",
                           "mount -t tmpfs jmt-no-btf /sys/kernel/btf && exec \"$0\" \"$@\"", JMT_BINARY, "-p",
                           jvm.pid_text()},
                          "the kernel has no BTF");
}

TEST_F(Preflight, JdkWithoutProbes)
{
    FakeJdkProcess fake;
    expect_one_line_error({JMT_BINARY, "-p", std::to_string(fake.proc->pid())}, "was built without DTrace probes");
}

TEST_F(Preflight, KernelThreadIsNotAJvm)
{
    expect_one_line_error({JMT_BINARY, "-p", "2"}, "is a kernel thread, not a JVM");
}

TEST_F(Preflight, ProbeHeldByAnotherTracerFailsCleanly)
{
    IdleJvm jvm;
    const std::string libjvm = jmt_it::test_libjvm();
    {
        jmt_it::ForeignUprobe bcc(jvm.pid(), libjvm, "method__entry");
        ASSERT_EQ(bcc.error(), 0) << strerror(bcc.error());
        expect_one_line_error({JMT_BINARY, "-p", jvm.pid_text(), "--raw"}, "another tracer");
    }
    {
        // The return probe held: the entry probe attached first must be gone again after the error.
        jmt_it::ForeignUprobe bcc(jvm.pid(), libjvm, "method__return");
        ASSERT_EQ(bcc.error(), 0) << strerror(bcc.error());
        expect_one_line_error({JMT_BINARY, "-p", jvm.pid_text(), "--raw"}, "another tracer");
        jmt_it::ForeignUprobe entry(jvm.pid(), libjvm, "method__entry");
        EXPECT_EQ(entry.error(), 0) << "a uprobe of jmethodtime was left on method__entry: " << strerror(entry.error());
    }
}

// No uprobe of ours remains on libjvm: a bcc-style registration with another
// reference-counter offset succeeds on both probes, and jmethodtime attaches again.
void expect_no_uprobe_left(int pid)
{
    const std::string libjvm = jmt_it::test_libjvm();
    for (const char *probe : {"method__entry", "method__return"}) {
        jmt_it::ForeignUprobe other(pid, libjvm, probe);
        EXPECT_EQ(other.error(), 0) << "a uprobe is still on hotspot:" << probe << ": " << strerror(other.error());
    }
    Child again({JMT_BINARY, "-p", std::to_string(pid), "--raw", "-d", "0.2", "--json"}, false);
    EXPECT_EQ(again.wait_exit(60000), 0) << again.drain(true, 1000);
}

TEST_F(Preflight, NoUprobeLeftAfterAnyEnd)
{
    IdleJvm jvm;
    struct End {
        const char *name;
        std::vector<std::string> args;
        int signal;
    };
    for (const End &end : {End{"duration", {"-d", "0.5"}, 0}, End{"SIGTERM", {}, SIGTERM}, End{"SIGINT", {}, SIGINT}}) {
        SCOPED_TRACE(end.name);
        std::vector<std::string> argv = {JMT_BINARY, "-p", jvm.pid_text(), "--raw", "--json"};
        argv.insert(argv.end(), end.args.begin(), end.args.end());
        Child jmt(argv, false);
        ASSERT_FALSE(jmt_it::wait_tracing(jmt).empty());
        if (end.signal) {
            usleep(300000);
            jmt.signal(end.signal);
        }
        EXPECT_EQ(jmt.wait_exit(30000), 0) << jmt.drain(true, 1000);
        expect_no_uprobe_left(jvm.pid());
    }
    {
        SCOPED_TRACE("target exit");
        // It exits 5 s after DONE: during the trace, after the tool's start (calibration, the 1 s
        // untraced window, loading and attaching: over 1.5 s on a host with 8 us traps, where a
        // JVM gone mid-attach is refused in one line, exit 1, instead).
        jmt_it::Workload shortlived({"demo.launch.Startup", {"1", "0", "5000"}}, "DONE");
        ASSERT_TRUE(shortlived.ready());
        Child jmt({JMT_BINARY, "-p", shortlived.pid_text(), "--raw", "--json"}, false);
        EXPECT_EQ(jmt.wait_exit(60000), 0) << jmt.drain(true, 1000);
        EXPECT_NE(jmt.drain(true, 1000).find("exited; detached"), std::string::npos);
        expect_no_uprobe_left(jvm.pid());
    }
}

TEST_F(Preflight, JvmInItsOwnMountNamespace)
{
    const std::string libjvm = jmt_it::test_libjvm();
    const std::string home = libjvm.substr(0, libjvm.find("/lib/server/"));
    const std::string dir = "/tmp/jmt-ns-" + std::to_string(getpid());
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    // The JDK appears at DIR/jdk only inside the JVM's namespace; the host sees an empty DIR.
    const std::string script = "mount -t tmpfs jmt-ns " + dir + " && mkdir " + dir + "/jdk && mount --bind " + home +
                               " " + dir + "/jdk && shift && exec " + dir + "/jdk/bin/java \"$@\"";
    jmt_it::RunSpec spec;
    spec.jvm.wrapper = {"unshare", "-m", "--propagation", "private", "--", "sh", "-c", script, "sh"};
    spec.jvm.main_class = "demo.abc.FixedWork";
    spec.jvm.args = {"300", "5"};
    spec.jmt_args = {"--package", "demo/abc", "--raw"};
    auto r = jmt_it::run_traced(spec);
    rmdir(dir.c_str());
    EXPECT_EQ(access((dir + "/jdk/lib/server/libjvm.so").c_str(), F_OK), -1);
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/abc/FixedWork", "a", "()V"), 300u);
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/abc/FixedWork", "b", "()V"), 600u);
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/abc/FixedWork", "c", "()V"), 1500u);
}

TEST_F(Preflight, ListShowsEachJvmAndItsProbes)
{
    IdleJvm on;
    IdleJvm switchable(false);
    IdleJvm off(false, {"-XX:+DisableAttachMechanism"});
    FakeJdkProcess fake;
    Child list({JMT_BINARY, "--list", "--json"}, false);
    ASSERT_EQ(list.wait_exit(60000), 0) << list.drain(true, 1000);
    auto doc = nlohmann::json::parse(list.drain(false, 2000));
    auto entry = [&](int pid) -> nlohmann::json {
        for (const auto &j : doc)
            if (j["pid"] == pid)
                return j;
        ADD_FAILURE() << "pid " << pid << " not listed: " << doc.dump();
        return nlohmann::json::object({{"probes", ""}, {"jdk_version", ""}, {"libjvm", ""}, {"command", ""}});
    };
    auto a = entry(on.pid()), b = entry(off.pid()), c = entry(fake.proc->pid());
    EXPECT_EQ(a["probes"], "enabled");
    EXPECT_EQ(entry(switchable.pid())["probes"], "switchable");
    EXPECT_EQ(b["probes"], "off");
    EXPECT_NE(b["off_reason"].get<std::string>().find("-XX:+DisableAttachMechanism"), std::string::npos) << b.dump();
    EXPECT_EQ(c["probes"], "missing");
    ASSERT_NE(jmt_it::test_jdk_version(), "");
    EXPECT_EQ(a["jdk_version"].get<std::string>(), jmt_it::test_jdk_version()) << a.dump();
    EXPECT_EQ(a["libjvm"], jmt_it::test_libjvm());
    EXPECT_NE(a["command"].get<std::string>().find("demo.launch.Startup"), std::string::npos);
    Child table({JMT_BINARY, "--list"}, false);
    ASSERT_EQ(table.wait_exit(60000), 0);
    const std::string text = table.drain(false, 2000);
    EXPECT_NE(text.find("PID  JDK"), std::string::npos) << text;
    EXPECT_NE(text.find(on.pid_text() + "  17"), std::string::npos) << text;
}

}  // namespace

namespace {

// --match REGEX picks the one JVM whose command line matches (the pid differs on every
// host); none or several matching is one line and exit 1, with nothing attached.
TEST_F(Preflight, MatchPicksTheOneJvmByItsCommandLine)
{
    // FixedWork's iterations, unique here (7000 to 7999: under a second of work whatever the pid).
    const std::string marker = std::to_string(7000 + getpid() % 1000);
    jmt_it::Workload jvm({"demo.abc.FixedWork", {marker, "5"}});
    ASSERT_TRUE(jvm.ready());
    Child jmt({JMT_BINARY, "--match", "demo\\.abc\\.FixedWork " + marker + " ", "--package", "demo/abc", "--json"},
              false);
    const std::string tracing = jmt_it::wait_tracing(jmt, 30000);
    EXPECT_NE(tracing.find("in pid " + jvm.pid_text() + " "), std::string::npos) << tracing;
    jvm.go();
    EXPECT_EQ(jvm.child().wait_exit(120000), 0);
    ASSERT_EQ(jmt.wait_exit(30000), 0) << jmt.drain(true, 1000);
    const auto report = nlohmann::json::parse(jmt.drain(false, 5000));
    EXPECT_EQ(jmt_it::calls_of(report, "demo/abc/FixedWork", "a", "()V"), std::stoull(marker));

    Child none({JMT_BINARY, "--match", "no-such-jvm-" + marker}, false);
    EXPECT_EQ(none.wait_exit(30000), 1);
    EXPECT_EQ(none.drain(true, 1000), "jmethodtime: --match 'no-such-jvm-" + marker +
                                          "': no JVM's command line matches (jmethodtime --list shows them)\n");
}

// A FixedWork JVM of `calls` calls of a(), started with -Dtoken=TOKEN, waiting at READY;
// without probes, one that cannot have them either (its attach mechanism off).
std::unique_ptr<jmt_it::Workload> fixed_work_jvm(const std::string &token, uint64_t calls, bool probes = true)
{
    jmt_it::JavaCommand command{"demo.abc.FixedWork", {std::to_string(calls), "2"}, {"-Dtoken=" + token}, probes};
    if (!probes)
        command.flags.insert(command.flags.begin(), "-XX:+DisableAttachMechanism");
    return std::make_unique<jmt_it::Workload>(command);
}

// --match follows every JVM it finds, with rows per JVM (--per-jvm) or summed. A
// JVM it finds whose probes cannot be had (off, attach off) is left out in one line; a JVM with the probes on that it
// does not find runs the same workload meanwhile, started before the trace (the probes then
// attach per pid) or during it (they attach once for the libjvm and the kernel keeps the
// traced pids' events): none of its calls may count.
TEST_F(Preflight, MatchFollowsEveryJvmItFindsAndNoOther)
{
    for (bool other_first : {true, false}) {
        SCOPED_TRACE(other_first ? "an untraced JVM with the probes on before the trace"
                                 : "an untraced JVM with the probes on started during the trace");
        const std::string token = "jmt" + std::to_string(getpid()) + (other_first ? "a" : "b");
        auto one = fixed_work_jvm(token, 1000), two = fixed_work_jvm(token, 2000);
        auto off = fixed_work_jvm(token, 500, false);
        std::unique_ptr<jmt_it::Workload> other;
        if (other_first)
            other = fixed_work_jvm("other" + token, 3000);
        Child jmt({JMT_BINARY, "--match", "-Dtoken=" + token + " ", "--package", "demo/abc", "--per-jvm", "--json"},
                  false);
        const std::string tracing = jmt_it::wait_tracing(jmt, 30000);
        EXPECT_NE(tracing.find("in 2 JVMs: pid " + std::to_string(one->pid()) + " (java), pid " +
                               std::to_string(two->pid()) + " (java)"),
                  std::string::npos)
            << tracing;
        if (!other)
            other = fixed_work_jvm("other" + token, 3000);
        for (jmt_it::Workload *jvm : {one.get(), two.get(), other.get()})
            jvm->go();
        for (jmt_it::Workload *jvm : {one.get(), two.get(), other.get()})
            EXPECT_EQ(jvm->child().wait_exit(120000), 0);
        ASSERT_EQ(jmt.wait_exit(30000), 0) << jmt.drain(true, 1000);
        const std::string err = jmt.drain(true, 1000);
        EXPECT_NE(err.find("found pid " + std::to_string(off->pid()) + ", left out: "), std::string::npos) << err;
        const auto report = nlohmann::json::parse(jmt.drain(false, 5000));
        std::map<int, uint64_t> calls_of_a;
        for (const auto &m : report.at("methods"))
            if (m.at("method") == "a")
                calls_of_a[m.at("pid").get<int>()] += m.at("calls").get<uint64_t>();
        EXPECT_EQ(calls_of_a, (std::map<int, uint64_t>{{one->pid(), 1000}, {two->pid(), 2000}})) << report.dump(1);
        EXPECT_EQ(report.at("jvm_pids"), nlohmann::json::array({one->pid(), two->pid()}));
        EXPECT_EQ(report.at("sources").size(), 2u);
        // The call paths of both JVMs, summed: a() 3000 times under run().
        uint64_t path_calls = 0;
        for (const auto &p : report.at("paths"))
            if (p.at("frames").size() == 2 && p.at("frames")[1] == "demo.abc.FixedWork.a()")
                path_calls += p.at("calls").get<uint64_t>();
        EXPECT_EQ(path_calls, 3000u);
    }
    // The probes attached for every process of the libjvm are gone too.
    IdleJvm idle;
    expect_no_uprobe_left(idle.pid());
}

}  // namespace

namespace {

// A second jmethodtime on the same JVM is refused in one line that
// names the first; with --shared-probes it traces and says so in its header
// and JSON, and the first learns of it at its next check (about a second).
TEST_F(Preflight, ASecondTracerIsRefusedOrSharesTheProbesWhenAsked)
{
    IdleJvm jvm;
    Child first({JMT_BINARY, "-p", jvm.pid_text(), "--raw", "-d", "8", "--json"}, false);
    ASSERT_FALSE(first.wait_line(true, "Tracing ", 60000).empty());
    const std::string holder = "pid " + std::to_string(first.pid()) + " (jmethodtime)";
    expect_one_line_error({JMT_BINARY, "-p", jvm.pid_text(), "--raw", "-d", "1"}, "already in use by " + holder + ":");

    Child shared({JMT_BINARY, "-p", jvm.pid_text(), "--raw", "-d", "1.5", "--shared-probes", "--json"}, false);
    EXPECT_EQ(shared.wait_exit(60000), 0);
    const std::string shared_err = shared.drain(true, 1000);
    EXPECT_NE(shared_err.find("the method probes are shared with " + holder), std::string::npos) << shared_err;
    const auto report = nlohmann::json::parse(shared.drain(false, 2000));
    EXPECT_EQ(report.at("shared_probes"), nlohmann::json::array({holder}));

    EXPECT_EQ(first.wait_exit(60000), 0);
    const std::string newcomer = "pid " + std::to_string(shared.pid()) + " (jmethodtime)";
    const std::string first_err = first.drain(true, 1000);
    EXPECT_NE(first_err.find("the method probes are now shared with " + newcomer), std::string::npos) << first_err;
    const auto first_report = nlohmann::json::parse(first.drain(false, 2000));
    EXPECT_EQ(first_report.at("shared_probes"), nlohmann::json::array({newcomer}));
    expect_no_uprobe_left(jvm.pid());
}

}  // namespace
