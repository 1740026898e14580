// jmt-probe-cost [ROUNDS]: the cost of one probe event on this kernel, measured
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
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cost/calibrate.h"
#include "util/error.h"
#include "floor.skel.h"
#include "jmethodtime.skel.h"
#include "target/lifecycle.h"
#include "kernel/tracer.h"

namespace {

struct FloorDeleter {
    void operator()(floor_bpf *skel) const { floor_bpf__destroy(skel); }
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Run time (ns) and run count of a loaded program; zeros without statistics.
std::pair<uint64_t, uint64_t> run_stats(bpf_program *prog)
{
    bpf_prog_info info = {};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
        return {0, 0};
    return {info.run_time_ns, info.run_cnt};
}

}  // namespace

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
    if (rounds <= 0) {
        std::cerr << "usage: jmt-probe-cost [ROUNDS]\n";
        return 2;
    }
    try {
        using namespace jmt;
        check_kernel();
        const int pid = static_cast<int>(getpid());
        const std::string self = self_probe::kBinary;
        std::unique_ptr<floor_bpf, FloorDeleter> floor(floor_bpf__open_and_load());
        if (!floor) {
            int err = errno;
            throw Error(std::string("cannot load the floor programs: ") + strerror(err), err);
        }
        ProgramConfig filtered;
        filtered.pid = pid;
        filtered.packages = {self_probe::kTracedPackage};
        filtered.arg_regs = self_probe::arg_regs();
        ProgramConfig unfiltered = filtered;
        unfiltered.packages.clear();
        // The same verdicts through --class/--method globs (decided once per method).
        ProgramConfig globbed = filtered;
        globbed.class_globs = {"*/Calibration", "*/Outer"};
        globbed.method_globs = {"f?re"};
        ProgramConfig threaded = filtered;
        threaded.per_thread = true;
        SkeletonPtr with_filter = load_programs(filtered);
        SkeletonPtr without_filter = load_programs(unfiltered);
        SkeletonPtr with_globs = load_programs(globbed);
        SkeletonPtr per_thread = load_programs(threaded);
        ProgramConfig pathed = filtered;
        pathed.call_paths = true;
        SkeletonPtr with_paths = load_programs(pathed);
        ProgramConfig foreign = filtered;
        foreign.foreign = true;
        SkeletonPtr with_foreign = load_programs(foreign);

        struct Mode {
            const char *name;
            bpf_program *entry, *ret;
            bool traced_class;
            bool nested = false;  // inside an untraced call (see self_probe::pair_ns)
        };
        const std::vector<Mode> modes = {
            {"bare", nullptr, nullptr, true},
            {"floor", floor->progs.floor_entry, floor->progs.floor_return, true},
            {"full", without_filter->progs.handle_entry, return_program(without_filter.get()), true},
            {"keep", with_filter->progs.handle_entry, return_program(with_filter.get()), true},
            {"reject", with_filter->progs.handle_entry, return_program(with_filter.get()), false},
            {"globs", with_globs->progs.handle_entry, return_program(with_globs.get()), true},
            {"thread", per_thread->progs.handle_entry, return_program(per_thread.get()), true},
            {"paths", with_paths->progs.handle_entry, return_program(with_paths.get()), true},
            {"fkeep", with_foreign->progs.handle_entry, return_program(with_foreign.get()), true},
            {"freject", with_foreign->progs.handle_entry, return_program(with_foreign.get()), false, true},
            {"fedge", with_foreign->progs.handle_entry, return_program(with_foreign.get()), false},
        };
        auto attach_mode = [&](const Mode &m) {
            std::vector<LinkPtr> links;
            if (m.entry) {
                links.push_back(attach_usdt(m.entry, pid, self, self_probe::kProvider, "method__entry"));
                links.push_back(attach_usdt(m.ret, pid, self, self_probe::kProvider, "method__return"));
            }
            return links;
        };
        std::map<std::string, std::vector<double>> pair_ns;
        for (int r = 0; r < rounds; r++) {
            for (const Mode &m : modes) {
                const std::vector<LinkPtr> links = attach_mode(m);
                pair_ns[m.name].push_back(self_probe::pair_ns(m.traced_class, 3, m.nested));
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

        // The programs alone, from the kernel's run-time statistics (held on by
        // this fd only while measuring; they add their own ~20 ns per run).
        const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
        if (stats_fd < 0) {
            std::printf("(program run-time statistics unavailable: %s)\n", strerror(errno));
            return 0;
        }
        std::printf("\n%-8s %14s %15s\n", "mode", "entry prog ns", "return prog ns");
        for (const Mode &m : modes) {
            if (!m.entry)
                continue;
            const std::vector<LinkPtr> links = attach_mode(m);
            const auto e0 = run_stats(m.entry), r0 = run_stats(m.ret);
            self_probe::pair_ns(m.traced_class, 10, m.nested);
            const auto e1 = run_stats(m.entry), r1 = run_stats(m.ret);
            auto per_run = [](std::pair<uint64_t, uint64_t> a, std::pair<uint64_t, uint64_t> b) {
                return b.second > a.second ? double(b.first - a.first) / double(b.second - a.second) : 0.0;
            };
            std::printf("%-8s %14.1f %15.1f\n", m.name, per_run(e0, e1), per_run(r0, r1));
        }
        close(stats_fd);
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "jmt-probe-cost: " << e.what() << std::endl;
        return 1;
    }
}
