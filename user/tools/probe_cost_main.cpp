// jmt-probe-cost [ROUNDS [PAIRED_ROUNDS]]: the cost of one probe event on this kernel, measured
// on the tool's own probes (the ones the start-up calibration fires) under
// nothing, the empty floor programs, and jmethodtime's programs keeping or
// rejecting the method, keeping it through --class/--method globs ("globs"),
// keeping it with --per-thread rows ("thread"), and keeping it with call paths
// ("paths": --folded, --tree, --flamegraph, --pprof), and under --foreign: keeping it ("fkeep"),
// rejecting it nested inside an untraced call ("freject", most of a JVM's
// filtered-out events) and rejecting it right under the traced frame, where
// each event opens or closes the frame's foreign segment ("fedge"). In-process and repeatable: the benchmark's companion
// to tests/bench/overhead.sh, which measures inside a JVM.
#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cost/calibrate.h"
#include "util/error.h"
#include "floor.skel.h"
#include "jmethodtime.skel.h"
#include "util/lifecycle.h"
#include "loader/totals_chunks.h"
#include "loader/tracer.h"

namespace {

struct FloorDeleter {
    void operator()(floor_bpf *skel) const { floor_bpf__destroy(skel); }
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Mean run time per run between two readings of a program's statistics.
double per_run(std::pair<uint64_t, uint64_t> a, std::pair<uint64_t, uint64_t> b)
{
    return b.second > a.second ? double(b.first - a.first) / double(b.second - a.second) : 0.0;
}

struct Mode {
    const char *name;
    bpf_program *entry, *ret;  // null for the bare probe site
    bool traced_class;
    bool nested = false;  // inside an untraced call (see self_probe::pair_ns)
};

// The programs of every mode, loaded once: the floor, and the tracer's
// programs without filter, with --package (with and without the latency
// histograms), with globs, --per-thread, call paths and --foreign.
struct Programs {
    std::unique_ptr<floor_bpf, FloorDeleter> floor;
    jmt::SkeletonPtr without_filter, with_filter, without_latency, with_globs, per_thread, with_paths, with_foreign;
    std::vector<jmt::SkeletonTotals> totals;  // each instance's chunks, as a trace has them
};

// --package with the calibration's traced package: the "keep" and "reject" modes.
jmt::ProgramConfig package_config(int pid)
{
    jmt::ProgramConfig c;
    c.pid = pid;
    c.packages = {jmt::self_probe::kTracedPackage};
    c.arg_regs = jmt::self_probe::arg_regs();
    return c;
}

Programs load_all(int pid)
{
    using namespace jmt;
    Programs p;
    p.floor.reset(floor_bpf__open_and_load());
    if (!p.floor) {
        int err = errno;
        throw Error(std::string("cannot load the floor programs: ") + strerror(err), err);
    }
    const ProgramConfig filtered = package_config(pid);
    ProgramConfig unfiltered = filtered;
    unfiltered.packages.clear();
    // The same verdicts through --class/--method globs (decided once per method).
    ProgramConfig globbed = filtered;
    globbed.class_globs = {"*/Calibration", "*/Outer"};
    globbed.method_globs = {"f?re"};
    ProgramConfig no_latency = filtered;
    no_latency.latency = false;
    ProgramConfig threaded = filtered;
    threaded.per_thread = true;
    ProgramConfig pathed = filtered;
    pathed.call_paths = true;
    ProgramConfig foreign = filtered;
    foreign.foreign = true;
    p.with_filter = load_programs(filtered);
    p.without_filter = load_programs(unfiltered);
    p.without_latency = load_programs(no_latency);
    p.with_globs = load_programs(globbed);
    p.per_thread = load_programs(threaded);
    p.with_paths = load_programs(pathed);
    p.with_foreign = load_programs(foreign);
    for (jmethodtime_bpf *skel : {p.with_filter.get(), p.without_filter.get(), p.without_latency.get(),
                                  p.with_globs.get(), p.per_thread.get(), p.with_paths.get(), p.with_foreign.get()})
        p.totals.push_back(cover_totals(skel));
    return p;
}

std::vector<Mode> modes_of(const Programs &p)
{
    using jmt::return_program;
    return {
        {"bare", nullptr, nullptr, true},
        {"floor", p.floor->progs.floor_entry, p.floor->progs.floor_return, true},
        {"full", p.without_filter->progs.handle_entry, return_program(p.without_filter.get()), true},
        {"keep", p.with_filter->progs.handle_entry, return_program(p.with_filter.get()), true},
        {"nolat", p.without_latency->progs.handle_entry, return_program(p.without_latency.get()), true},
        {"reject", p.with_filter->progs.handle_entry, return_program(p.with_filter.get()), false},
        {"globs", p.with_globs->progs.handle_entry, return_program(p.with_globs.get()), true},
        {"thread", p.per_thread->progs.handle_entry, return_program(p.per_thread.get()), true},
        {"paths", p.with_paths->progs.handle_entry, return_program(p.with_paths.get()), true},
        {"fkeep", p.with_foreign->progs.handle_entry, return_program(p.with_foreign.get()), true},
        {"freject", p.with_foreign->progs.handle_entry, return_program(p.with_foreign.get()), false, true},
        {"fedge", p.with_foreign->progs.handle_entry, return_program(p.with_foreign.get()), false},
    };
}

std::vector<jmt::LinkPtr> attach_mode(const Mode &m, int pid)
{
    return m.entry ? jmt::attach_entry_return(m.entry, m.ret, pid, jmt::self_probe::kBinary, jmt::self_probe::kProvider)
                   : std::vector<jmt::LinkPtr>{};
}

// ns per event of each mode above the bare site and the floor, from the thread's CPU clock.
void print_event_costs(const std::vector<Mode> &modes, int rounds, int pid)
{
    std::map<std::string, std::vector<double>> pair_ns;
    for (int r = 0; r < rounds; r++) {
        for (const Mode &m : modes) {
            const std::vector<jmt::LinkPtr> links = attach_mode(m, pid);
            pair_ns[m.name].push_back(jmt::self_probe::pair_ns(m.traced_class, 3, m.nested));
        }
    }
    const double bare = median(pair_ns["bare"]);
    const double floor_ns = (median(pair_ns["floor"]) - bare) / 2;
    std::printf("Probe event cost on this kernel: the tool's own probes, %d rounds x 3 batches of 2000 "
                "entry+return pairs, medians\n",
                rounds);
    std::printf("%-8s %10s %12s %8s\n", "mode", "ns/event", "above floor", "x floor");
    for (const Mode &m : modes) {
        if (!m.entry)
            continue;
        const double ns = (median(pair_ns[m.name]) - bare) / 2;
        std::printf("%-8s %10.1f %12.1f %8.2f\n", m.name, ns, ns - floor_ns, ns / floor_ns);
    }
    std::printf("ns/event: above the bare probe site (%.1f ns per pair with nothing attached)\n", bare);
}

// The programs alone, from the kernel's run-time statistics (held on by this
// fd only while measuring; they add their own ~20 ns per run): each mode's
// mean run time per program in each of rounds alternating passes, medians,
// and the body above the empty programs' (the floor's) beside them.
void print_program_costs(const std::vector<Mode> &modes, int rounds, int pid)
{
    const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (stats_fd < 0) {
        std::printf("(program run-time statistics unavailable: %s)\n", strerror(errno));
        return;
    }
    std::map<std::string, std::vector<double>> entry_ns, return_ns;
    for (int r = 0; r < rounds; r++) {
        for (const Mode &m : modes) {
            if (!m.entry)
                continue;
            const std::vector<jmt::LinkPtr> links = attach_mode(m, pid);
            const auto e0 = jmt::program_run_stats(m.entry), r0 = jmt::program_run_stats(m.ret);
            jmt::self_probe::pair_ns(m.traced_class, 10, m.nested);
            const auto e1 = jmt::program_run_stats(m.entry), r1 = jmt::program_run_stats(m.ret);
            entry_ns[m.name].push_back(per_run(e0, e1));
            return_ns[m.name].push_back(per_run(r0, r1));
        }
    }
    close(stats_fd);
    const double floor_entry = median(entry_ns["floor"]), floor_return = median(return_ns["floor"]);
    std::printf("\nPrograms' run time per event (kernel.bpf_stats_enabled), medians of %d alternating rounds;\n"
                "the empty programs (floor): %.1f ns entry, %.1f ns return\n",
                rounds, floor_entry, floor_return);
    std::printf("%-8s %14s %15s %8s %9s\n", "mode", "entry prog ns", "return prog ns", "entry +", "return +");
    for (const Mode &m : modes) {
        if (!m.entry)
            continue;
        const double e = median(entry_ns[m.name]), r = median(return_ns[m.name]);
        std::printf("%-8s %14.1f %15.1f %8.1f %9.1f\n", m.name, e, r, e - floor_entry, r - floor_return);
    }
    std::printf("entry +, return +: the body's cost, above the empty programs'\n");
}

// Two instances attached to the same probes at once run on the same events,
// so the difference of their run times per event is one configuration's cost
// above the other's, free of the drift between rounds that single modes show
// (about +-20 ns here). Each round loads both afresh, as the placement of an
// instance's maps changes its run time, alternates which one runs first, and
// every two rounds which one loads first.
// "same" pairs two instances of one configuration: the method's own noise.
// JMT_PAIRED_RAW=1: each round's differences on stderr too (for a bootstrap).
struct PairedConfigs {
    const char *name;
    jmt::ProgramConfig a, b;
};

struct MeanAndSpread {
    double median, mean, ci95;  // ns; ci95: 1.96 standard errors of the mean
};

MeanAndSpread summarize(const std::vector<double> &v)
{
    double sum = 0, sq = 0;
    for (double x : v)
        sum += x;
    const double mean = sum / double(v.size());
    for (double x : v)
        sq += (x - mean) * (x - mean);
    const double sd = v.size() > 1 ? std::sqrt(sq / double(v.size() - 1)) : 0;
    return {median(v), mean, 1.96 * sd / std::sqrt(double(v.size()))};
}

void print_paired_costs(const jmt::ProgramConfig &keep, int rounds, int pid)
{
    const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (stats_fd < 0)
        return;
    jmt::ProgramConfig no_latency = keep, slow = keep, threaded = keep;
    no_latency.latency = false;
    threaded.per_thread = true;
    jmt::ProgramConfig threaded_no_latency = threaded;
    threaded_no_latency.latency = false;
    slow.slower_than_ns = 100ull * 1000 * 1000 * 1000;  // 100 s: checked, never over
    const std::vector<PairedConfigs> pairs = {
        {"latency histogram (keep - nolat)", keep, no_latency},
        {"--slower-than 100s check (slow - keep)", slow, keep},
        {"--per-thread's two (thread - its nolat)", threaded, threaded_no_latency},
        {"same (keep - keep)", keep, keep},
    };
    std::printf("\nPaired: two instances on the same events, %d rounds, each loaded afresh, run order "
                "alternating, load order every two rounds;\nper event, first less second (ns), over the %d pairs of "
                "rounds in either order: "
                "median, mean +- 95%% interval\n",
                rounds, rounds / 2);
    std::printf("%-40s %26s %26s\n", "pair", "entry", "return");
    for (const PairedConfigs &pc : pairs) {
        std::vector<double> entry_diff, return_diff;
        for (int r = 0; r < rounds; r++) {
            // Which loads first (its maps placed first) swaps every two rounds, as the run order does every round.
            jmt::SkeletonPtr a, b;
            if ((r / 2) % 2) {
                b = jmt::load_programs(pc.b);
                a = jmt::load_programs(pc.a);
            } else {
                a = jmt::load_programs(pc.a);
                b = jmt::load_programs(pc.b);
            }
            const jmt::SkeletonTotals ta = jmt::cover_totals(a.get()), tb = jmt::cover_totals(b.get());
            const bpf_program *ae = a->progs.handle_entry, *ar = jmt::return_program(a.get());
            const bpf_program *be = b->progs.handle_entry, *br = jmt::return_program(b.get());
            std::vector<jmt::LinkPtr> links;
            for (jmethodtime_bpf *first : {r % 2 ? b.get() : a.get(), r % 2 ? a.get() : b.get()})
                for (jmt::LinkPtr &l :
                     attach_mode({"", first->progs.handle_entry, jmt::return_program(first), true}, pid))
                    links.push_back(std::move(l));
            const auto ae0 = jmt::program_run_stats(ae), ar0 = jmt::program_run_stats(ar);
            const auto be0 = jmt::program_run_stats(be), br0 = jmt::program_run_stats(br);
            jmt::self_probe::pair_ns(true, 10);
            entry_diff.push_back(per_run(ae0, jmt::program_run_stats(ae)) - per_run(be0, jmt::program_run_stats(be)));
            return_diff.push_back(per_run(ar0, jmt::program_run_stats(ar)) - per_run(br0, jmt::program_run_stats(br)));
        }
        if (std::getenv("JMT_PAIRED_RAW"))
            for (int r = 0; r < rounds; r++)
                std::fprintf(stderr, "%s r%d %s-first entry %.1f return %.1f\n", pc.name, r, r % 2 ? "b" : "a",
                             entry_diff[r], return_diff[r]);
        // Which instance runs first moves both by about 40 ns here: each
        // estimate is the mean of a round with a first and the next with b.
        auto balanced = [](const std::vector<double> &d) {
            std::vector<double> out;
            for (size_t i = 1; i < d.size(); i += 2)
                out.push_back((d[i - 1] + d[i]) / 2);
            return out;
        };
        const MeanAndSpread e = summarize(balanced(entry_diff)), ret = summarize(balanced(return_diff));
        std::printf("%-40s %7.1f %7.1f +- %-6.1f %7.1f %7.1f +- %-6.1f\n", pc.name, e.median, e.mean, e.ci95,
                    ret.median, ret.mean, ret.ci95);
    }
    close(stats_fd);
}

}  // namespace

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
    const int paired_rounds = argc > 2 ? std::atoi(argv[2]) : 2 * rounds;
    if (rounds <= 0 || paired_rounds < 2) {
        std::cerr << "usage: jmt-probe-cost [ROUNDS [PAIRED_ROUNDS]]\n";
        return 2;
    }
    try {
        jmt::check_kernel();
        const int pid = static_cast<int>(getpid());
        const Programs programs = load_all(pid);
        const std::vector<Mode> modes = modes_of(programs);
        print_event_costs(modes, rounds, pid);
        print_program_costs(modes, rounds, pid);
        print_paired_costs(package_config(pid), paired_rounds, pid);
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "jmt-probe-cost: " << e.what() << std::endl;
        return 1;
    }
}
