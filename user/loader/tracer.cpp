#include "loader/tracer.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <iostream>

#include "jmethodtime.skel.h"
#include "util/error.h"

namespace jmt {

namespace {

// The traced JVMs in the programs' target order, each with its libjvm.
std::vector<VthreadTarget> vthread_targets(const TracerConfig &config)
{
    std::vector<int> pids{config.programs.pid};
    pids.insert(pids.end(), config.programs.other_pids.begin(), config.programs.other_pids.end());
    std::vector<VthreadTarget> out;
    for (int pid : pids) {
        VthreadTarget t{pid, config.libjvm};
        for (const TracedLibjvm &lib : config.libjvms)
            if (std::find(lib.pids.begin(), lib.pids.end(), pid) != lib.pids.end())
                t.libjvm = lib.path;
        out.push_back(t);
    }
    return out;
}

}  // namespace

Tracer::Tracer(const TracerConfig &config)
{
    const std::vector<VthreadTarget> vthread_targets_ = vthread_targets(config);
    HooksByLibjvm hooks = find_hooks(vthread_targets_);
    ProgramConfig programs = config.programs;
    programs.vthread_hooks = any_hooks(hooks);
    skel_ = load_programs(programs);
    SkeletonTotals totals = cover_totals(skel_.get());
    method_totals_ = std::move(totals.methods);
    path_totals_ = std::move(totals.paths);
    row_totals_ = std::move(totals.rows);
    const ProgramGlobals globals = program_globals(skel_.get());
    const IdCounters &ids = globals.ids;
    std::vector<TotalsGrower::Watch> watched{{method_totals_.get(), ids.methods}};
    if (path_totals_)
        watched.push_back({path_totals_.get(), ids.paths});
    if (row_totals_)
        watched.push_back({row_totals_.get(), ids.rows});
    grower_ = std::make_unique<TotalsGrower>(std::move(watched));
    // Before any probe is attached: program_maps refuses maps its readers do not fit.
    reader_ =
        std::make_unique<SnapshotReader>(SnapshotSources{program_maps(skel_.get()), globals, method_totals_.get(),
                                                         path_totals_.get(), row_totals_.get(), config.programs.pid});
    if (config.programs.slower_than_ns)
        slow_calls_ = std::make_unique<SlowCallReader>(skel_->maps.slow_calls, config.slow_calls_kept);
    std::vector<TracedLibjvm> where = config.libjvms;
    if (where.empty())
        where.push_back({config.libjvm, {config.programs.pid}, false});
    bool unload_warned = false;
    const bool method_regs = programs.arg_regs.has_value();
    for (const TracedLibjvm &lib : where) {
        for (int pid : lib.whole ? std::vector<int>{-1} : lib.pids) {
            if (where.size() == 1 && lib.pids.size() == 1 && !lib.whole) {
                window_pid_ = pid;
                window_libjvm_ = lib.path;
                return_link_ = links_.size();  // the return, then the entry
                entry_link_ = links_.size() + 1;
            }
            // Returns first: a call that enters between the two attaches then has its return seen
            // (a return without its entry is counted and dropped), instead of a frame never closed.
            links_.push_back(
                attach_usdt(return_program(skel_.get()), pid, lib.path, "hotspot", "method__return", method_regs));
            links_.push_back(
                attach_usdt(skel_->progs.handle_entry, pid, lib.path, "hotspot", "method__entry", method_regs));
            // The return first: frames close (and add to totals) only there, and an entry
            // detached first would leave returns popping their callers' frames (a() closed
            // without the c() entered after it).
            method_links_.push_back(links_.size() - 2);
            method_links_.push_back(links_.size() - 1);
            // Class unloading: the method table forgets the class's keys before its names' memory is
            // reused. A libjvm without the probe (none known) would leave churned names unchecked: said once.
            try {
                links_.push_back(attach_usdt(skel_->progs.handle_class_unloaded, pid, lib.path, "hotspot",
                                             "class__unloaded", programs.unload_arg_regs.has_value()));
            } catch (const Error &e) {
                if (!unload_warned)
                    std::cerr << "jmethodtime: warning: " << e.what()
                              << "; names of methods of classes that unload may be misattributed" << std::endl;
                unload_warned = true;
            }
        }
    }
    if (programs.vthread_hooks)
        vthread_hooks_ = std::make_unique<VthreadHooks>(
            skel_.get(), vthread_targets_, std::move(hooks),
            std::any_of(where.begin(), where.end(), [](const TracedLibjvm &l) { return l.whole; }));
    const std::pair<bpf_program *, const char *> scheduler[] = {{skel_->progs.handle_switch, "sched_switch"},
                                                                {skel_->progs.handle_wakeup, "sched_wakeup"},
                                                                {skel_->progs.handle_exit, "sched_process_exit"}};
    for (const auto &[prog, tracepoint] : scheduler) {
        bpf_link *link = bpf_program__attach(prog);
        if (!link) {
            int err = errno;
            throw Error(std::string("cannot attach to the ") + tracepoint + " BTF tracepoint: " + errno_text(err), err);
        }
        links_.emplace_back().emplace_back(link);
    }
    for (const std::string &w : take_libbpf_warnings())
        std::cerr << "jmethodtime: libbpf: " << w << (w.empty() || w.back() != '\n' ? "\n" : "") << std::flush;
}

Tracer::~Tracer() = default;

void Tracer::set_method_probes(bool entry, bool ret)
{
    if (!can_switch_method_probes())
        throw Error("the method probes are shared by several JVMs: they cannot be detached one at a time", 0);
    const bool regs = skel_->rodata->fast_args != 0;
    if (ret && links_[return_link_].empty())
        links_[return_link_] =
            attach_usdt(return_program(skel_.get()), window_pid_, window_libjvm_, "hotspot", "method__return", regs);
    if (entry && links_[entry_link_].empty())
        links_[entry_link_] =
            attach_usdt(skel_->progs.handle_entry, window_pid_, window_libjvm_, "hotspot", "method__entry", regs);
    if (!entry)
        links_[entry_link_].clear();
    if (!ret)
        links_[return_link_].clear();
}

void Tracer::detach_method_probes()
{
    for (size_t link : method_links_)
        links_[link].clear();
}

std::pair<uint64_t, uint64_t> Tracer::method_program_ns() const
{
    return {program_run_stats(skel_->progs.handle_entry).first, program_run_stats(return_program(skel_.get())).first};
}

std::vector<SlowCall> Tracer::take_slow_calls(uint64_t &dropped)
{
    std::vector<SlowCall> out;
    if (!slow_calls_)
        return out;
    SlowCallReader::Taken taken = slow_calls_->take();
    dropped += taken.dropped;
    for (const jmt_slow_call &raw : taken.calls)
        out.push_back(reader_->slow_call(raw));
    return out;
}

Snapshot Tracer::snapshot() const
{
    Snapshot snap = reader_->snapshot();
    if (vthread_hooks_)
        snap.virtual_threads_not_followed = vthread_hooks_->not_followed();
    return snap;
}

}  // namespace jmt
