// The warm Rounds JVM (examples/java/demo/warm) the run-time switch is tested
// on, traces of its rounds, and the probe events a round fires, counted by the
// kernel (empty BPF programs on the JVM's probes and bpf_enable_stats' run
// counts): shared by the switch and JDK-matrix suites.
#pragma once

#include <string>
#include <vector>

#include "harness.h"
#include "jvm/jvm.h"

namespace jmt_it {

constexpr int kWarmCalls = 200000;  // before READY: C1 and C2 compile and inline the tree
constexpr char kTree[] = "demo/warm/tree/Tree";

// A Rounds JVM, JIT-compiled and waiting for rounds. Its pid is the JVM's own,
// whatever wrapper starts it (Workload::pid).
struct WarmJvm {
    // command: a Rounds command (warm_command, WarmJvm::command), run as it says.
    explicit WarmJvm(const JavaCommand &command) : java_(command, "READY", 120000) {}
    // The Rounds command with its wrapper (argv run in front of java, which it must exec),
    // launcher and class path.
    static JavaCommand command(const std::vector<std::string> &wrapper, const std::string &java,
                               std::vector<std::string> flags, const std::string &classpath);
    // n calls of Tree.a(), waited for.
    void round(int n);
    int pid() const { return java_.pid(); }
    std::string pid_text() const { return std::to_string(pid()); }
    Workload java_;
};

// The Rounds command, without the probes' flag unless flags have it.
JavaCommand warm_command(std::vector<std::string> flags = {});

// The probe events a round of n calls fires.
uint64_t events_of_round(WarmJvm &jvm, int n);

// Rounds of traffic until the JVM's agent has taken out the code a trace's end left with probe
// calls (its mode no longer deferred): the seconds that took, printed; -1 (a failure) after limit_s.
double traffic_until_restored(WarmJvm &jvm, double limit_s = 30);
// No probe call left once traffic is back: traffic_until_restored within the agent's traffic
// window and its restore, then a round fires nothing and no thread of the agent is left.
void expect_nothing_left_under_traffic(WarmJvm &jvm);

// Threads of pid whose name (comm, 15 bytes) starts with prefix.
size_t jvm_threads_named(int pid, const std::string &prefix);

jmt::JvmTarget examined(int pid);

// The DTraceMethodProbes byte, read as jmethodtime reads it.
bool flag_on(int pid);

struct Traced {
    nlohmann::json report;
    std::string err;
};

// A trace of the tree's package while one round of n calls runs; the JVM named by -p, or by
// the selector given (--match REGEX).
Traced trace_round(WarmJvm &jvm, int n, std::vector<std::string> extra = {}, std::vector<std::string> selector = {});

// n calls of a(): 2n of b(), 5n of c().
void expect_tree_counts(const Traced &t, uint64_t n);

// Nothing of the switch left in the JVM's /tmp: no agent directory, no attach trigger.
void expect_tmp_clean(int pid);

// Distinct files of jmethodtime's agent mapped in pid: it is loaded once, however many traces.
size_t agent_copies(int pid);

// `jmethodtime standby -p PID`, expected to succeed; its stdout.
std::string standby(int pid);

}  // namespace jmt_it
