// What jmethodtime writes into a JVM, as root, goes where it must and nowhere else: a pid that
// another process took is never written, the flag's byte only inside libjvm's writable data,
// the attach protocol's files inside the JVM's own root whatever its links say, and a launched
// JVM inherits no descriptor of jmethodtime's. Real JVMs (Debian's JDK 17), the real agent.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "control/agent.h"
#include "control/flag_write.h"
#include "control/probe_switch.h"
#include "harness.h"
#include "jvm/agent_state.h"
#include "jvm/hotspot_flags.h"
#include "jvm/jvm.h"
#include "util/error.h"
#include "util/process_handle.h"
#include "util/procfs.h"
#include "warm_jvm.h"

namespace {

using jmt_it::Child;
using jmt_it::examined;
using jmt_it::flag_on;
using jmt_it::warm_command;
using jmt_it::WarmJvm;

class SafeWrites : public jmt_it::BpfTest {};

std::string error_of(const std::function<void()> &f)
{
    try {
        f();
    } catch (const jmt::Error &e) {
        return e.what();
    }
    return "";
}

// The entries of dir, "." and ".." aside.
std::vector<std::string> entries_of(const std::string &dir)
{
    std::vector<std::string> names;
    DIR *d = opendir(dir.c_str());
    while (dirent *e = d ? readdir(d) : nullptr)
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
            names.push_back(e->d_name);
    if (d)
        closedir(d);
    return names;
}

// The JVM was examined, then exited, and another process took its pid (simulated: the start
// time the switch is given is not the one the pid has now): nothing is written, no agent loads.
TEST_F(SafeWrites, APidTakenByAnotherProcessIsNeverWritten)
{
    WarmJvm jvm(warm_command());
    jmt::JvmTarget target = examined(jvm.pid());
    ASSERT_EQ(target.access, jmt::ProbeAccess::Switchable);
    ASSERT_GT(target.start_ticks, 0u);
    target.start_ticks += 1;
    const std::string err = error_of([&] { jmt::ProbeSwitch s(target, "*"); });
    EXPECT_NE(err.find("pid " + jvm.pid_text() + " exited, and another process now has its pid"), std::string::npos)
        << err;
    EXPECT_NE(err.find("nothing was written to it"), std::string::npos) << err;
    EXPECT_FALSE(flag_on(jvm.pid()));
    EXPECT_FALSE(jmt::find_agent(jvm.pid()).has_value()) << "an agent was loaded into the process";
    // The same pid, as examined: the switch opens.
    target.start_ticks -= 1;
    EXPECT_EQ(error_of([&] { jmt::ProbeSwitch s(target, "*"); }), "");
}

// A DTraceMethodProbes address outside libjvm's writable data (a misread flag table, another
// build): the tool refuses to write it, and so does the agent, whose owner's watch would store 0
// there; the byte stays as it was.
TEST_F(SafeWrites, AFlagAddressOutsideLibjvmsDataIsRefused)
{
    WarmJvm jvm(warm_command());
    const jmt::JvmTarget target = examined(jvm.pid());
    const jmt::JvmMemory memory(target.pid, target.libjvm_bias, target.libjvm_symbols);
    const uint64_t header = target.libjvm_bias;  // libjvm's ELF header: read-only
    ASSERT_EQ(memory.read_u8(header), std::optional<uint8_t>(0x7f));
    const jmt::ProcessHandle handle(target.pid, target.start_ticks);
    const std::string err = error_of([&] { jmt::write_flag(handle, header, 1); });
    EXPECT_NE(err.find("refused to write DTraceMethodProbes"), std::string::npos) << err;
    EXPECT_NE(err.find("read-only memory"), std::string::npos) << err;
    EXPECT_EQ(memory.read_u8(header), std::optional<uint8_t>(0x7f));
    // The byte after the header's magic is 'E' (69): writable or not, not a flag's 0 or 1.
    jmt::AgentPlace place;
    place.start_ticks = target.start_ticks;
    const std::string agent_err =
        error_of([&] { jmt::agent_request(target.pid, "op=begin;owner=1.1;flag=" + std::to_string(header), place); });
    EXPECT_NE(agent_err.find("not in libjvm's writable data"), std::string::npos) << agent_err;
    EXPECT_EQ(memory.read_u8(header), std::optional<uint8_t>(0x7f));
    const std::optional<jmt::LoadedAgent> agent = jmt::find_agent(target.pid);
    ASSERT_TRUE(agent.has_value());
    EXPECT_EQ(agent->state.last_error, static_cast<int32_t>(JMT_AGENT_BAD_FLAG));
    EXPECT_EQ(agent->state.flag_addr, 0u) << "the agent kept the address";
    EXPECT_FALSE(flag_on(jvm.pid()));
    // The real flag passes both checks: a trace switches it on and off.
    const jmt_it::Traced t = jmt_it::trace_round(jvm, 1000);
    jmt_it::expect_tree_counts(t, 1000);
    EXPECT_FALSE(flag_on(jvm.pid()));
}

// A container whose /tmp is a link to an absolute path ("/var/tmp/jmt-link-N"): the host's
// directory of that name stays untouched, and the attach goes through the container's.
TEST_F(SafeWrites, AContainersTmpThatIsAnAbsoluteLinkLeavesTheHostsDirectoryAlone)
{
    const std::string name = "/var/tmp/jmt-link-" + std::to_string(getpid());
    ASSERT_EQ(mkdir(name.c_str(), 01777), 0) << name;
    chmod(name.c_str(), 01777);
    // The container: a tmpfs root with the host's /usr, /etc and /dev, usrmerge's links, a proc of
    // its own pid namespace, and /tmp -> NAME, a directory of that root.
    const std::string script =
        "set -e; mount -t tmpfs -o mode=755 jmt-root /mnt; cd /mnt; "
        "for d in usr etc dev; do mkdir $d; mount --rbind /$d $d; done; "
        "for l in bin sbin lib lib32 lib64 libx32; do if [ -L /$l ]; then ln -s \"$(readlink /$l)\" $l; fi; done; "
        "mkdir proc; mount -t proc proc proc; "
        "mkdir -p ." +
        name + "; chmod 1777 ." + name + "; ln -s " + name +
        " tmp; "
        "cp -r '" +
        std::string(JMT_JAVA_CLASSES) + "' ." + name + "/classes; chmod -R a+rX ." + name +
        "/classes; "
        "mkdir .old; pivot_root . .old; umount -l /.old; rmdir /.old; "
        "exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$@\"";
    {
        WarmJvm jvm(WarmJvm::command({"unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation",
                                      "private", "--", "sh", "-c", script, "sh"},
                                     JMT_JAVA, {}, "/tmp/classes"));
        ASSERT_GT(jvm.pid(), 0);
        const jmt_it::Traced t = jmt_it::trace_round(jvm, 2000);
        jmt_it::expect_tree_counts(t, 2000);
        EXPECT_FALSE(flag_on(jvm.pid()));
        EXPECT_EQ(entries_of(name), std::vector<std::string>{}) << "the host's " << name << " was written";
        // The JVM's own /tmp (the container's NAME) holds its socket, nothing else of the switch.
        const std::vector<std::string> own = entries_of("/proc/" + jvm.pid_text() + "/root" + name);
        EXPECT_NE(std::find(own.begin(), own.end(), ".java_pid1"), own.end());
        jmt_it::expect_tmp_clean(jvm.pid());
    }
    EXPECT_EQ(entries_of(name), std::vector<std::string>{});
    rmdir(name.c_str());
}

// Two tracers started in the same millisecond on a JDK 17 JVM without the flag: exactly one
// traces, with exact counts; the other is refused by the agent (one owner per JVM) in one line
// and exit 1, before it attaches anything; the JVM is left as found. Three rounds.
TEST_F(SafeWrites, TwoTracersStartedAtOnceOneTracesTheOtherRefusesInOneLine)
{
    WarmJvm jvm(warm_command());
    const std::vector<std::string> argv = {JMT_BINARY,       "-p",     jvm.pid_text(), "--package",
                                           "demo/warm/tree", "--json", "--settle",     "20"};
    for (int round = 0; round < 3; round++) {
        SCOPED_TRACE("round " + std::to_string(round + 1));
        Child one(argv, false), two(argv, false);
        Child *tracer = nullptr, *refused = nullptr;
        for (int i = 0; i < 1200 && !tracer; i++) {
            if (!one.wait_line(true, "Tracing", 50).empty())
                tracer = &one, refused = &two;
            else if (!two.wait_line(true, "Tracing", 50).empty())
                tracer = &two, refused = &one;
        }
        ASSERT_NE(tracer, nullptr) << "neither traced:\n" << one.drain(true, 1000) << "\n" << two.drain(true, 1000);
        EXPECT_EQ(refused->wait_exit(60000), 1);
        const std::string why = refused->drain(true, 1000);
        EXPECT_EQ(std::count(why.begin(), why.end(), '\n'), 1) << why;
        EXPECT_NE(why.find("held by another jmethodtime"), std::string::npos) << why;
        jvm.round(1000);
        tracer->signal(SIGINT);
        EXPECT_EQ(tracer->wait_exit(60000), 0);
        jmt_it::Traced t;
        t.err = tracer->drain(true, 2000);
        t.report = nlohmann::json::parse(tracer->drain(false, 5000), nullptr, false);
        jmt_it::expect_tree_counts(t, 1000);
        EXPECT_EQ(t.err.find("shared with"), std::string::npos) << t.err;
        EXPECT_FALSE(flag_on(jvm.pid()));
        jmt_it::expect_nothing_left_under_traffic(jvm);
        jmt_it::expect_tmp_clean(jvm.pid());
    }
}

// Launch mode with -o FILE: the JVM holds no descriptor of FILE (nor any other of jmethodtime's).
TEST_F(SafeWrites, ALaunchedJvmHoldsNoDescriptorOfTheReport)
{
    const std::string report = "/tmp/jmt-safe-" + std::to_string(getpid()) + ".json";
    unlink(report.c_str());
    Child jmt({JMT_BINARY, "--json", "-o", report, "--package", "demo/launch", "--", jmt_it::test_java(), "-cp",
               JMT_JAVA_CLASSES, "demo.launch.Startup", "10", "0", "6000"},
              false);
    // The JVM: jmethodtime's child once it maps libjvm (it sleeps 6 s after its calls).
    pid_t jvm = -1;
    for (int i = 0; i < 200 && jvm < 0; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const std::string kids =
            jmt::read_file("/proc/" + std::to_string(jmt.pid()) + "/task/" + std::to_string(jmt.pid()) + "/children");
        const int kid = atoi(kids.c_str());
        if (kid > 0 && jmt::read_file("/proc/" + std::to_string(kid) + "/maps").find("libjvm.so") != std::string::npos)
            jvm = kid;
    }
    ASSERT_GT(jvm, 0) << "no JVM under jmethodtime";
    std::vector<std::string> held;
    const std::string fds = "/proc/" + std::to_string(jvm) + "/fd";
    for (const std::string &fd : entries_of(fds)) {
        char target[4096] = {};
        const ssize_t n = readlink((fds + "/" + fd).c_str(), target, sizeof(target) - 1);
        const std::string link = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
        if (link == report || link.find("anon_inode:bpf") != std::string::npos ||
            link.find("jmethodtime") != std::string::npos)
            held.push_back(fd + " -> " + link);
    }
    EXPECT_EQ(held, std::vector<std::string>{});
    EXPECT_EQ(jmt.wait_exit(60000), 0) << jmt.drain(true, 1000);
    struct stat st = {};
    EXPECT_EQ(stat(report.c_str(), &st), 0);
    EXPECT_GT(st.st_size, 0);
    unlink(report.c_str());
}

}  // namespace
