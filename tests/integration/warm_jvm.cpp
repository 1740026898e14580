#include "warm_jvm.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <set>
#include <stdexcept>

#include <iostream>

#include "floor.skel.h"
#include "jvm/agent_state.h"
#include "loader/programs.h"
#include "util/lifecycle.h"
#include "util/procfs.h"

namespace jmt_it {

namespace {

// Probe events of one JVM, as the kernel counts the runs of empty programs on its probes.
class ProbeEvents {
public:
    explicit ProbeEvents(int pid)
    {
        stats_fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
        skel_ = floor_bpf__open_and_load();
        if (stats_fd_ < 0 || !skel_)
            throw std::runtime_error("cannot load the floor programs or enable BPF statistics");
        const jmt::TargetStatus st = jmt::examine_target(pid);
        links_ = jmt::attach_entry_return(skel_->progs.floor_entry, skel_->progs.floor_return, pid, st.target.libjvm,
                                          "hotspot");
    }
    ~ProbeEvents()
    {
        links_.clear();
        floor_bpf__destroy(skel_);
        if (stats_fd_ >= 0)
            close(stats_fd_);
    }
    ProbeEvents(const ProbeEvents &) = delete;
    ProbeEvents &operator=(const ProbeEvents &) = delete;
    uint64_t count() const
    {
        uint64_t n = 0;
        for (bpf_program *p : {skel_->progs.floor_entry, skel_->progs.floor_return}) {
            bpf_prog_info info = {};
            uint32_t len = sizeof(info);
            if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) == 0)
                n += info.run_cnt;
        }
        return n;
    }

private:
    int stats_fd_ = -1;
    floor_bpf *skel_ = nullptr;
    std::vector<jmt::LinkPtr> links_;
};

}  // namespace

JavaCommand WarmJvm::command(const std::vector<std::string> &wrapper, const std::string &java,
                             std::vector<std::string> flags, const std::string &classpath)
{
    JavaCommand c = warm_command(std::move(flags));
    c.java = java;
    c.wrapper = wrapper;
    c.classpath = classpath;
    return c;
}

void WarmJvm::round(int n)
{
    java_.child().write_stdin(std::to_string(n) + "\n", false);
    EXPECT_FALSE(java_.child().wait_line(false, "DONE calls=" + std::to_string(n), 120000).empty());
}

JavaCommand warm_command(std::vector<std::string> flags)
{
    return JavaCommand{"demo.warm.Rounds", {std::to_string(kWarmCalls)}, std::move(flags), false};
}

uint64_t events_of_round(WarmJvm &jvm, int n)
{
    ProbeEvents events(jvm.pid());
    jvm.round(n);
    return events.count();
}

double traffic_until_restored(WarmJvm &jvm, double limit_s)
{
    const uint64_t start = jmt::monotonic_ns();
    for (;;) {
        const double s = double(jmt::monotonic_ns() - start) / 1e9;
        const std::optional<jmt::LoadedAgent> agent = jmt::find_agent(jvm.pid());
        if (!agent || agent->state.mode != JMT_AGENT_DEFERRED) {
            std::cout << "  the agent took the trace's probe calls out after " << s << " s of traffic ("
                      << (agent ? agent->state.traffic_restores : 0) << " restores on traffic)" << std::endl;
            if (agent)
                EXPECT_EQ(agent->state.traffic_restore_error, 0) << "the traffic watch's restore failed";
            return s;
        }
        if (s > limit_s) {
            ADD_FAILURE() << "the agent left the trace's probe calls in after " << s << " s of traffic";
            return -1;
        }
        jvm.round(1000000);  // about 0.1 s of work: traffic the agent sees
    }
}

size_t jvm_threads_named(int pid, const std::string &prefix)
{
    size_t n = 0;
    const std::string task = "/proc/" + std::to_string(pid) + "/task";
    DIR *d = opendir(task.c_str());
    while (dirent *e = d ? readdir(d) : nullptr)
        if (e->d_name[0] != '.' && jmt::read_file(task + "/" + e->d_name + "/comm").rfind(prefix, 0) == 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

void expect_nothing_left_under_traffic(WarmJvm &jvm)
{
    // The agent's traffic window, a poll, and 2 s for the restore's retransforms and a round.
    const double most_s = (JMT_AGENT_TRAFFIC_WINDOW_MS + JMT_AGENT_TRAFFIC_POLL_MS) / 1000.0 + 2.0;
    const double s = traffic_until_restored(jvm);
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, most_s) << "the probe calls stayed under traffic";
    EXPECT_EQ(events_of_round(jvm, 20000), 0u) << "probe calls left after the trace, traffic back";
    for (int i = 0; i < 50 && jvm_threads_named(jvm.pid(), "jmethodtime") > 0; i++)
        usleep(20000);
    EXPECT_EQ(jvm_threads_named(jvm.pid(), "jmethodtime"), 0u) << "the agent's watches ended";
}

jmt::JvmTarget examined(int pid) { return jmt::examine_target(pid).target; }

bool flag_on(int pid) { return examined(pid).probes_on; }

Traced trace_round(WarmJvm &jvm, int n, std::vector<std::string> extra, std::vector<std::string> selector)
{
    if (selector.empty())
        selector = {"-p", jvm.pid_text()};
    std::vector<std::string> argv = {JMT_BINARY};
    argv.insert(argv.end(), selector.begin(), selector.end());
    argv.insert(argv.end(), {"--package", "demo/warm/tree", "--json", "--settle", "20"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    Child jmt(argv, false);
    Traced t;
    if (wait_tracing(jmt, 120000).empty())
        return t;
    jvm.round(n);
    jmt.signal(SIGINT);
    EXPECT_EQ(jmt.wait_exit(60000), 0);
    t.err = jmt.drain(true, 2000);
    try {
        t.report = nlohmann::json::parse(jmt.drain(false, 5000));
    } catch (const std::exception &e) {
        ADD_FAILURE() << "no JSON report: " << e.what() << "\n" << t.err;
    }
    return t;
}

void expect_tree_counts(const Traced &t, uint64_t n)
{
    EXPECT_EQ(calls_of(t.report, kTree, "a", "()V"), n) << t.err;
    EXPECT_EQ(calls_of(t.report, kTree, "b", "()V"), 2 * n) << t.err;
    EXPECT_EQ(calls_of(t.report, kTree, "c", "()V"), 5 * n) << t.err;
}

void expect_tmp_clean(int pid)
{
    DIR *d = opendir(("/proc/" + std::to_string(pid) + "/root/tmp").c_str());
    ASSERT_NE(d, nullptr);
    while (dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        EXPECT_NE(name.rfind(".jmethodtime-", 0), 0u) << name;
        EXPECT_NE(name.rfind(".attach_pid", 0), 0u) << name;
    }
    closedir(d);
}

size_t agent_copies(int pid)
{
    std::set<std::pair<std::string, uint64_t>> files;
    for (const jmt::MapsEntry &e : jmt::parse_maps(jmt::read_file("/proc/" + std::to_string(pid) + "/maps")))
        if (e.path.find("/libjmtagent.so") != std::string::npos && e.perms.find('x') != std::string::npos)
            files.emplace(e.dev, e.inode);
    return files.size();
}

std::string standby(int pid)
{
    Child standby({JMT_BINARY, "standby", "-p", std::to_string(pid)}, false);
    EXPECT_EQ(standby.wait_exit(60000), 0) << standby.drain(true, 1000);
    return standby.drain(false, 1000);
}

}  // namespace jmt_it
