#include "cli/session.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "cost/correction.h"
#include "cost/cost_range.h"
#include "cost/evidence.h"
#include "loader/kernel_features.h"
#include "loader/privileges.h"
#include "model/merge.h"
#include "report/report.h"
#include "report/summary.h"
#include "jvm/source.h"
#include "util/error.h"

namespace jmt {

namespace {

constexpr uint64_t kNsPerSec = 1000000000ULL;
constexpr uint64_t kProgressPeriodNs = kNsPerSec;  // status line refresh

uint64_t unix_now_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

uint64_t earliest(std::initializer_list<uint64_t> deadlines)
{
    uint64_t best = 0;
    for (uint64_t d : deadlines)
        if (d && (!best || d < best))
            best = d;
    return best;
}

std::string env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

}  // namespace

TraceSession::TraceSession(const Options &options)
    : options_(options), launch_(!options.command.empty()), spec_(output_spec(options))
{
    find_target();
    sink_ = std::make_unique<ReportSink>(options.output);
    path_files_ = std::make_unique<PathFiles>(options);
    // Calibrated with --raw too: the overhead line, the status line and --max-overhead price the traps.
    sampler_ = std::make_unique<CostSampler>(
        CalibrationConfig{options.verbose, options.per_thread, wants_call_paths(options), options.foreign});
    if (!options.raw)  // the kernel's, per call: correct_profile moves each histogram to the final cost
        base_.latency_cost = start_up_cost(sampler_->samples());
    // The untraced window starts after the calibration, whose spinning would slow the JVM's
    // threads on a shared cache (launch mode: no JVM yet).
    if (!launch_) {
        work_ = std::make_unique<WorkMeter>(target_pids(targets_));
        untraced_from_ns_ = monotonic_ns();
        work_->next(untraced_from_ns_);
    }
    attach();
}

TraceSession::~TraceSession() = default;

void TraceSession::find_target()
{
    check_kernel();
    check_privileges();
    check_kernel_features();
    if (launch_) {
        const std::string path = env("PATH");
        plan_ = plan_launch(options_.command, path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path);
        run_as_ = resolve_run_as(options_.user, env("SUDO_UID"), env("SUDO_GID"));
        targets_ = {inspect_jdk(plan_.java, plan_.libjvm)};
        if (const std::string no = launch_problem(kernel_support(), targets_[0].arg_regs.has_value()); !no.empty())
            throw Error(no, ENOTSUP);
    } else {
        targets_ = find_targets(options_.pid, options_.match,
                                options_.match.empty() ? std::vector<JvmTarget>{} : list_jvms(), std::cerr);
    }
}

void TraceSession::attach()
{
    // Launch mode: the child waits at its gate until the probes are attached.
    if (launch_) {
        if (!run_as_.note.empty())
            std::cerr << run_as_.note << std::endl;
        child_ = std::make_unique<LaunchedCommand>(plan_.argv, run_as_);
        targets_.front().pid = child_->pid();
    }
    // A breakpoint at a probe site before we attach: another tracer's uprobe.
    bool held_before = false;
    const std::vector<int> pids = target_pids(targets_);
    for (const JvmTarget &t : targets_) {
        for (uint64_t addr : t.probe_addrs)
            held_before |= breakpoint_at(t.pid, addr);
        watches_.push_back(std::make_unique<TargetWatch>(t.pid));
    }
    if (work_) {
        const uint64_t until = untraced_from_ns_ + kUntracedWindowNs;
        if (monotonic_ns() < until && wait_until(stop_, watching_all(), until).wake == Wake::Signal)
            throw Error("stopped before the trace started, while the JVM's work was measured without probes");
        base_.untraced_work = work_->next(monotonic_ns());
    }
    // Switched JVMs are this jmethodtime's before any probe is attached: of two tracers started at
    // once, the second stops here (one line), and neither sees the other's uprobes as a holder.
    switched_.claim(targets_, options_.packages, options_.class_globs);
    tracer_ = std::make_unique<Tracer>(tracer_config(options_, targets_, base_.latency_cost));
    check_probe_holders(held_before);
    switch_probes_on();
    if (options_.cost_before)
        measure_cost_before();
    if (sampler_)
        sampler_->start();  // after the fork: the child of a threaded process only execs
    if (launch_)
        child_->release();
    start_ns_ = monotonic_ns();
    const std::string filter = filter_text(options_.packages, options_.class_globs, options_.method_globs);
    if (launch_)
        std::cerr << "Tracing " << filter << " in " << plan_.java << " (pid " << pids.front()
                  << ") from its start; the report follows its exit" << std::endl;
    else
        std::cerr << "Tracing " << filter << " in "
                  << (targets_.size() > 1 ? std::to_string(targets_.size()) + " JVMs: " : "") << targets_text(targets_)
                  << "; Ctrl-C or SIGTERM to stop" << std::endl;

    base_.pid = pids.front();
    base_.jvm_pids = targets_.size() > 1 ? pids : std::vector<int>{};
    base_.per_jvm = options_.per_jvm && targets_.size() > 1;
    base_.jdk_version = targets_.front().jdk_version;
    for (const JvmTarget &t : targets_)
        base_.virtual_threads =
            base_.virtual_threads || jdk_feature_release(t.jdk_version) >= kFirstJdkWithVirtualThreads;
    base_.packages = options_.packages;
    base_.class_globs = options_.class_globs;
    base_.method_globs = options_.method_globs;
    base_.per_thread = options_.per_thread;
    base_.foreign = options_.foreign;
    base_.latency = !options_.no_latency;
    base_.slower_than_ns = options_.slower_than_ns;
    base_.corrected = !options_.raw;
    for (const JvmTarget &t : targets_) {
        base_.sources.push_back(describe_source(t.pid, t.jdk_version, unix_now_ns()));
        base_.sources.back().kernel = kernel_description();  // with the compat programs' fallbacks
    }

    interval_ns_ = static_cast<uint64_t>(options_.interval_s * 1e9);
    end_deadline_ = options_.duration_s > 0 ? start_ns_ + static_cast<uint64_t>(options_.duration_s * 1e9) : 0;
    next_interval_ = interval_ns_ ? start_ns_ + interval_ns_ : 0;
    // The command shares the terminal in launch mode: no status line over its output.
    const bool show = !launch_ && isatty(STDERR_FILENO);
    progress_ = std::make_unique<ProgressLine>(show);
    next_progress_ = show ? start_ns_ + kProgressPeriodNs : 0;
    cpu_ = std::make_unique<JvmsCpu>(pids);
    // The first window holds every event since the attach; its CPU time and work start here,
    // after the switch (the probes fire from there on).
    OverheadTotals at_start;
    at_start.jvm_cpu_ns = cpu_->read();
    if (work_)
        work_->next(monotonic_ns());
    at_start.jvm_runq_ns = 0;  // the kernel counts from the attach
    interval_totals_.start(at_start);
    window_start_ns_ = start_ns_;
    progress_->start(at_start);
    next_cpu_read_ = start_ns_ + kCpuReadPeriodNs;
    if (options_.max_overhead_percent > 0) {
        guard_.emplace(options_.max_overhead_percent);
        guard_->start(start_ns_, at_start);
    }
}

void TraceSession::switch_probes_on()
{
    const std::vector<const TargetWatch *> watching = watching_all();
    switched_.switch_on(
        targets_, options_.packages, options_.class_globs, options_.settle_s,
        [this, &watching](uint64_t deadline) { return wait_until(stop_, watching, deadline).wake == Wake::Deadline; },
        base_.probes);
}

std::vector<const TargetWatch *> TraceSession::watching_all() const
{
    std::vector<const TargetWatch *> watching;
    for (const auto &watch : watches_)
        watching.push_back(watch.get());
    return watching;
}

int TraceSession::run()
{
    for (;;) {
        const Woken w = wait_until(stop_, watching_all(),
                                   earliest({end_deadline_, next_interval_, next_progress_, next_cpu_read_}));
        if (w.wake == Wake::Signal) {
            if (!launch_)
                return finish(EndReason::Signal);
            // The terminal signals the command itself; signals sent to jmethodtime are passed on.
            if (!w.from_terminal)
                child_->forward(w.signo);
            continue;
        }
        if (w.wake == Wake::TargetExited) {
            // Several JVMs: the trace goes on while one of them runs.
            const int pid = watches_[w.target]->pid();
            watches_.erase(watches_.begin() + static_cast<std::ptrdiff_t>(w.target));
            if (watches_.empty())
                return finish(EndReason::TargetExited);
            progress_->clear();
            std::cerr << "Pid " << pid << " exited; tracing the other " << watches_.size()
                      << (watches_.size() == 1 ? " JVM" : " JVMs") << std::endl;
            continue;
        }
        const uint64_t now = monotonic_ns();
        if (end_deadline_ && now >= end_deadline_)
            return finish(EndReason::Duration);
        if (std::optional<EndReason> end = tick(now))
            return finish(*end);
    }
}

std::optional<EndReason> TraceSession::tick(uint64_t now)
{
    if (now >= next_cpu_read_)
        if (std::optional<EndReason> end = read_cpu(now))
            return end;
    if (next_interval_ && now >= next_interval_) {
        bool fresh = false;
        const std::optional<uint64_t> cpu = cpu_->read(&fresh);
        Profile p = window_profile(tracer_->snapshot(), now, fresh ? cpu : std::nullopt);
        progress_->clear();
        report(std::move(p), {}, false);
        while (next_interval_ <= now)
            next_interval_ += interval_ns_;
    }
    if (next_progress_ && now >= next_progress_)
        show_progress(now);
    return std::nullopt;
}

void TraceSession::check_probe_holders(bool held_before)
{
    const bool first = !holders_checked_;
    if (first)
        for (const JvmTarget &t : targets_)
            for (const UprobeSite &site : own_uprobe_sites(t.libjvm, own_link_ids_))
                probe_sites_.insert(site);
    holders_checked_ = true;
    // Other JVMs' tracers hold links on the same sites: a holder counts when it
    // names one of our JVMs' pids, or, at the start, when a breakpoint was already
    // in a JVM's own memory (uprobes of a pid are set in that process only).
    const std::vector<ProbeHolder> links = link_holders(probe_sites_, own_link_ids_);
    auto tracing_ours = [this](const std::vector<ProbeHolder> &from) {
        std::vector<ProbeHolder> found;
        for (const JvmTarget &t : targets_)
            for (const ProbeHolder &h : tracing_pid(from, t.pid))
                found.push_back(h);
        return found;
    };
    std::vector<ProbeHolder> holders = tracing_ours(links);
    std::string who;
    if (!holders.empty()) {
        who = holders_text(holders);
    } else if (held_before) {
        holders = links.empty() ? tracing_ours(perf_event_holders()) : links;
        if (holders.empty())
            holders = perf_event_holders();
        who = "a tracer whose uprobe was on the probe sites first" +
              (holders.empty() ? std::string() : " (perhaps " + holders_text(holders) + ")");
    } else {
        return;
    }
    // On standby, or switched at run time, the other tracer sees only the code that calls the probes.
    std::string partial;
    for (const JvmTarget &t : targets_)
        if (t.access == ProbeAccess::Standby || t.access == ProbeAccess::Switchable)
            partial = " (pid " + std::to_string(t.pid) +
                      (t.access == ProbeAccess::Standby ? " is on standby" : " runs without the flag") +
                      ": that tracer sees only interpreted calls and the classes a jmethodtime switches on)";
    if (first && !options_.shared_probes)
        throw Error("the method probes of " + targets_text(targets_) + " are already in use by " + who + partial +
                        ": every event would run both tracers' programs and each would take out only its own "
                        "cost; stop the other tracer, or add --shared-probes to trace anyway with wider bounds",
                    EBUSY);
    std::vector<std::string> &shared = base_.shared_probes;
    if (std::find(shared.begin(), shared.end(), who) != shared.end())
        return;
    shared.push_back(who);
    std::cerr << "jmethodtime: the method probes are " << (first ? "" : "now ") << "shared with " << who
              << ": every event also runs its programs; the bounds on times allow up to twice the probe cost"
              << std::endl;
}

std::optional<EndReason> TraceSession::read_cpu(uint64_t now)
{
    if (now >= next_holder_check_) {
        check_probe_holders(false);
        next_holder_check_ = now + kHolderCheckPeriodNs;
    }
    const std::optional<uint64_t> cpu = cpu_->read();
    while (next_cpu_read_ <= now)
        next_cpu_read_ += kCpuReadPeriodNs;
    if (!guard_ || !cpu || !sampler_ || !guard_->due(now))
        return std::nullopt;
    OverheadTotals totals = tracer_->progress().events;
    totals.jvm_cpu_ns = cpu;
    const ProbeCost cost = estimate_probe_cost(sampler_->samples(), now - kOverheadWindowNs, now).cost;
    if (std::optional<double> share = guard_->feed(now, totals, cost)) {
        tripped_share_ = *share;
        return EndReason::Overhead;
    }
    return std::nullopt;
}

void TraceSession::show_progress(uint64_t now)
{
    // The traps' share over the last second and the loss counters.
    TraceProgress p = tracer_->progress();
    p.events.jvm_cpu_ns = cpu_->last();
    std::optional<ProbeCost> cost;
    if (sampler_)
        cost = estimate_probe_cost(sampler_->samples(), now - kProgressPeriodNs, now).cost;
    progress_->show(now - start_ns_, p, cost);
    next_progress_ += kProgressPeriodNs;
}

Profile TraceSession::window_profile(const Snapshot &snap, uint64_t now, std::optional<uint64_t> cpu)
{
    Profile p = base_;
    if (p.virtual_threads)
        p.virtual_threads_not_followed = snap.virtual_threads_not_followed.value_or(
            "its libjvm.so has no symbol table (.symtab) naming HotSpot's freeze and thaw");
    if (interval_ns_) {
        p.interval = ++interval_no_;
        p.end_unix_ns = unix_now_ns();
    }
    p.duration_ns = now - window_start_ns_;
    p.diag = snap.diag;
    p.slow_calls = tracer_->take_slow_calls(p.diag.slow_calls_dropped);
    p.kernel_memory_bytes = snap.kernel_memory_bytes;
    p.method_ids = snap.method_ids;
    p.rejected_by_package = snap.rejected_by_package;
    p.rejected_by_globs = snap.rejected_by_globs;
    if (sampler_) {
        const CostEstimate e = estimate_probe_cost(sampler_->samples(), window_start_ns_, now);
        p.calibrated_cost = e.cost;
        p.cost_samples = e.samples;
    }
    // cpu: read at the window's end; a JVM already reaped keeps the last reading.
    OverheadTotals totals = event_totals(snap.diag.entries, snap.diag.returns, snap.diag.traced_calls);
    totals.jvm_cpu_ns = cpu ? cpu : cpu_->last();
    totals.jvm_runq_ns = snap.diag.runq_ns;
    interval_totals_.next(p, jvm_rows(snap.methods, base_.per_jvm), snap.gap_hist, totals);
    p.overhead.jvm_cpu_early = !cpu && cpu_->last();
    if (work_)
        p.traced_work = work_->next(now);
    window_start_ns_ = now;
    return p;
}

Profile TraceSession::report(Profile profile, CallTree tree, bool with_files)
{
    std::vector<MethodStats *> path_stats;
    for (PathNode &node : tree.nodes)
        path_stats.push_back(&node.stats);
    correct_profile(profile, std::move(path_stats));
    if (profile.foreign)
        tree = with_untraced_nodes(tree);
    profile.methods = rows_with_min_calls(profile.methods, options_.min_calls);
    ReportSink *flamegraph = with_files && path_files_->flamegraph.enabled() ? &path_files_->flamegraph : nullptr;
    ReportSink *pprof = with_files && path_files_->pprof.enabled() ? &path_files_->pprof : nullptr;
    write_outputs(sink_->stream(), spec_, profile, tree, flamegraph ? &flamegraph->stream() : nullptr,
                  pprof ? &pprof->stream() : nullptr);
    for (ReportSink *file : {flamegraph, pprof})
        if (file)
            file->flush();
    sink_->flush();
    return profile;
}

int TraceSession::finish(EndReason reason)
{
    const uint64_t end_ns = monotonic_ns();
    if (sampler_)
        sampler_->stop();
    bool fresh = false;
    const std::optional<uint64_t> cpu = cpu_->read(&fresh);  // before a launched JVM is reaped
    const std::optional<uint64_t> end_cpu = fresh ? cpu : std::nullopt;
    tracer_->detach_method_probes();  // one cut: no parent counted while its callees are being read
    const Snapshot snap = tracer_->snapshot();
    CallTree tree = tracer_->call_tree();
    if (targets_.size() > 1)
        tree = merge_trees({&tree});  // a method's paths in each JVM, summed
    // The window's totals and work are read before the windows after it.
    Profile profile = window_profile(snap, end_ns, end_cpu);
    measure_cost_after(profile, reason == EndReason::Signal || reason == EndReason::Duration);
    tracer_.reset();  // detach before formatting: the JVM runs untraced from here
    // Until the end's deoptimized methods compile again (bounded by --settle); a second signal stops the wait.
    switched_.switch_off(
        std::cerr, [this](uint64_t deadline) { return wait_until(stop_, {}, deadline).wake == Wake::Deadline; },
        options_.settle_s, profile.probes);
    progress_->clear();
    int exit_code = 0;
    if (launch_ && reason == EndReason::TargetExited)
        exit_code = child_->wait();
    say_how_it_ended(reason, exit_code);

    const Profile written = report(std::move(profile), std::move(tree), true);
    // The header's facts on stderr when the report went to a file or a pipe.
    if (summary_wanted(sink_->enabled(), isatty(STDOUT_FILENO)))
        for (const std::string &line : summary_lines(written))
            std::cerr << line << "\n";
    if (launch_ && reason != EndReason::TargetExited) {
        std::cerr << "The command runs on untraced; waiting for it to exit" << std::endl;
        exit_code = child_->wait();
    }
    return exit_code;
}

void TraceSession::say_how_it_ended(EndReason reason, int exit_code) const
{
    if (launch_ && reason == EndReason::TargetExited)
        std::cerr << "Command exited with status " << exit_code << "; detached" << std::endl;
    else if (reason == EndReason::TargetExited)
        std::cerr << (targets_.size() > 1 ? std::string("The traced JVMs exited")
                                          : "Target pid " + std::to_string(targets_.front().pid) + " exited")
                  << "; detached" << std::endl;
    else if (reason == EndReason::Overhead)
        std::cerr << "jmethodtime: the probes' traps took " << std::lround(tripped_share_ * 100)
                  << "% of the JVM's CPU time for " << kOverheadTripWindows << " s in a row, over --max-overhead "
                  << options_.max_overhead_percent << "%: detached from " << targets_text(targets_) << std::endl;
    else
        std::cerr << "Detached from "
                  << (targets_.size() > 1 ? targets_text(targets_) : "pid " + std::to_string(targets_.front().pid))
                  << std::endl;
}

}  // namespace jmt
