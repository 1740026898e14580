// jmt-trap-windows PID SECONDS [WINDOW_MS] [PACKAGE]: what one method__entry and one
// method__return event cost a running JVM, in its own code: the windows jmethodtime runs
// after a trace (cost/probe_windows.h: both probes, the return probe alone, both, the entry
// probe alone, in turn), for SECONDS instead of about 6 s, with PACKAGE's methods traced.
//
// Prints each window (kind, CLOCK_MONOTONIC start and end ns, CPU ns, entries, returns, traced
// calls, the entry and the return program's run time ns, 1 when that was on, its gaps' edge ns)
// and the figures solved from them beside the gaps' edge the windows measured and the likely
// cost jmethodtime takes out of a JVM without I/O (cost/cost_range.h: the edge plus its refill).
// tests/bench/trap_windows.sh puts them beside what the JVM's own timing of its calls says.
// The programs' totals are not read: a probe detached leaves their frames out of step.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cost/cost_range.h"
#include "cost/evidence.h"
#include "cost/probe_windows.h"
#include "jvm/jvm.h"
#include "loader/tracer.h"
#include "util/error.h"
#include "util/lifecycle.h"

namespace {

const char *kind_name(jmt::ProbeWindowKind kind)
{
    switch (kind) {
    case jmt::ProbeWindowKind::Both: return "both";
    case jmt::ProbeWindowKind::ReturnOnly: return "return";
    case jmt::ProbeWindowKind::EntryOnly: return "entry";
    }
    return "";
}

int run(int pid, int seconds, int window_ms, const std::string &package)
{
    jmt::check_kernel();
    const jmt::JvmTarget target = jmt::inspect_target(pid);
    if (!target.probes_on)
        throw jmt::Error(
            "pid " + std::to_string(pid) + ": the method probes are off (start it with -XX:+DTraceMethodProbes)", 0);
    jmt::TracerConfig config;
    config.programs.pid = pid;
    config.programs.arg_regs = target.arg_regs;
    if (!package.empty())
        config.programs.packages = {package};
    config.libjvm = target.libjvm;
    jmt::Tracer tracer(config);
    std::printf("attached\n");
    std::fflush(stdout);
    const uint64_t window_ns = uint64_t(window_ms) * 1'000'000;
    const int cycles = std::max(1, int(uint64_t(seconds) * 1'000'000'000 / (4 * (window_ns + 60'000'000))));
    const std::vector<jmt::ProbeWindow> windows = jmt::run_probe_windows(
        tracer, pid,
        [](uint64_t deadline) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(deadline - std::min(deadline, jmt::monotonic_ns())));
            return true;
        },
        cycles, window_ns);
    const jmt::GapSummary gaps = jmt::summarize_gaps(tracer.snapshot().gap_hist);
    for (const jmt::ProbeWindow &w : windows)
        std::printf("window %s %llu %llu %llu %llu %llu %llu %llu %llu %d %llu\n", kind_name(w.kind),
                    static_cast<unsigned long long>(w.start_ns), static_cast<unsigned long long>(w.end_ns),
                    static_cast<unsigned long long>(w.cpu_ns), static_cast<unsigned long long>(w.entries),
                    static_cast<unsigned long long>(w.returns), static_cast<unsigned long long>(w.traced_calls),
                    static_cast<unsigned long long>(w.entry_prog_ns), static_cast<unsigned long long>(w.return_prog_ns),
                    w.programs_timed ? 1 : 0, static_cast<unsigned long long>(jmt::summarize_gaps(w.gap_hist).edge_ns));
    const jmt::ProbeWindowsCost cost = jmt::solve_probe_windows(windows);
    if (cost.per_event_ns)
        std::printf("one entry event %llu ns, one return event %llu ns (%llu ns per event), programs included; "
                    "each kind's least disturbed windows of %d cycles\n",
                    static_cast<unsigned long long>(cost.entry_ns), static_cast<unsigned long long>(cost.return_ns),
                    static_cast<unsigned long long>(cost.per_event_ns), cycles);
    else
        std::printf("not measured: %s\n", cost.why.c_str());
    std::printf("gaps' edge %llu ns (%llu gaps); the likely cost without I/O (edge plus refill) %llu ns\n",
                static_cast<unsigned long long>(gaps.edge_ns), static_cast<unsigned long long>(gaps.samples),
                static_cast<unsigned long long>(jmt::edge_plus_refill(gaps.edge_ns)));
    return cost.per_event_ns ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 3 || std::atoi(argv[1]) <= 0 || std::atoi(argv[2]) <= 0) {
        std::cerr << "usage: jmt-trap-windows PID SECONDS [WINDOW_MS] [PACKAGE]\n";
        return 2;
    }
    const int window_ms = argc > 3 ? std::atoi(argv[3]) : 200;
    try {
        return run(std::atoi(argv[1]), std::atoi(argv[2]), std::max(window_ms, 20), argc > 4 ? argv[4] : "");
    } catch (const std::exception &e) {
        std::cerr << "jmt-trap-windows: " << e.what() << std::endl;
        return 1;
    }
}
