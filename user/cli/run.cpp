#include "cli/run.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/status_line.h"
#include "cost/calibrate.h"
#include "cost/cost_range.h"
#include "util/error.h"
#include "target/jvm.h"
#include "target/jvm_list.h"
#include "target/launch.h"
#include "target/lifecycle.h"
#include "cost/overhead.h"
#include "report/report.h"
#include "report/flamegraph.h"
#include "report/pprof.h"
#include "report/summary.h"
#include "kernel/tracer.h"
#include "target/source.h"

namespace jmt {

namespace {

constexpr uint64_t kNsPerSec = 1000000000ULL;
constexpr uint64_t kProgressPeriodNs = kNsPerSec;  // progress line refresh

std::string describe_filter(const Options &o)
{
    return filter_text(o.packages, o.class_globs, o.method_globs);
}

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

// Where the report goes: -o FILE (opened before tracing, so a wrong path fails
// at once) or standard output.
class ReportSink {
public:
    // option: the option that named path, for the error message.
    explicit ReportSink(const std::string &path, const char *option = "-o") : path_(path)
    {
        if (path.empty())
            return;
        file_ = std::make_unique<std::ofstream>(path, std::ios::out | std::ios::trunc | std::ios::binary);
        if (!*file_)
            throw Error("cannot write to " + path + ": " + strerror(errno) + "; give a writable path with " +
                            option,
                        errno);
    }
    bool enabled() const { return file_ != nullptr; }
    std::ostream &stream() { return file_ ? *file_ : std::cout; }
    void flush()
    {
        stream().flush();
        if (!stream())
            throw Error("writing to " + (file_ ? path_ : std::string("standard output")) +
                            " failed: " + strerror(errno) + "; check the disk space and the path",
                        errno);
    }

private:
    std::string path_;
    std::unique_ptr<std::ofstream> file_;
};

// Files written besides the report: --pprof (and --flamegraph), opened before tracing.
struct PathFiles {
    ReportSink pprof;
    ReportSink flamegraph;
    explicit PathFiles(const Options &o) : pprof(o.pprof, "--pprof"), flamegraph(o.flamegraph, "--flamegraph") {}
};

// tree: the call paths of the whole trace (empty unless wants_call_paths).
// Returns the profile as written (probe cost decided, rows filtered).
Profile write_report(ReportSink &sink, const Options &options, Profile profile, CallTree tree = {},
                  PathFiles *files = nullptr)
{
    std::vector<MethodStats *> path_stats;
    for (PathNode &node : tree.nodes)
        path_stats.push_back(&node.stats);
    correct_profile(profile, std::move(path_stats));
    if (profile.foreign)
        tree = with_untraced_nodes(tree);
    profile.methods = rows_with_min_calls(profile.methods, options.min_calls);
    std::ostream &out = sink.stream();
    if (files && files->pprof.enabled()) {
        std::vector<std::pair<std::string, std::string>> labels;  // Issue 18: host and pid on every sample
        for (const ReportSource &s : profile.sources)
            labels = {{"host", s.hostname}, {"pid", std::to_string(s.pid)}};
        write_pprof(files->pprof.stream(), {PprofSource{&tree, labels}}, profile.duration_ns);
        files->pprof.flush();
    }
    if (files && files->flamegraph.enabled()) {
        const std::string title = "jmethodtime pid " + std::to_string(profile.pid) + ": " +
                                  filter_text(profile.packages, profile.class_globs, profile.method_globs) +
                                  ", " + format_duration(profile.duration_ns);
        write_flamegraph_html(files->flamegraph.stream(), tree, title, options.metric);
        files->flamegraph.flush();
    }
    if (options.folded) {
        write_folded(out, tree, options.metric);
    } else if (options.tree) {
        write_tree(out, profile, tree, options.min_percent);
    } else if (options.json) {
        write_json(out, profile, profile.interval ? nullptr : &tree);  // Issue 18: "paths" of the whole trace
    } else if (options.csv) {
        write_csv(out, profile, options.sort);
    } else {
        TableOptions table;
        table.top = options.top;
        table.sort = options.sort;
        write_table(out, profile, table);
        if (profile.interval)
            out << "\n";
    }
    sink.flush();
    return profile;
}

int run_list(const Options &options)
{
    if (geteuid() != 0)
        std::cerr << "jmethodtime: not root: JVMs of other users are not listed (run as root to see all)"
                  << std::endl;
    std::vector<JvmTarget> jvms = list_jvms();
    ReportSink sink(options.output);
    if (options.json)
        write_jvm_json(sink.stream(), jvms);
    else
        write_jvm_table(sink.stream(), jvms);
    sink.flush();
    return 0;
}

int run_trace(const Options &options)
{
    check_kernel();
    check_privileges();
    const bool launch = !options.command.empty();
    JvmTarget target;
    LaunchPlan plan;
    if (launch) {
        const char *path = getenv("PATH");
        plan = plan_launch(options.command, path ? path : "/usr/local/bin:/usr/bin:/bin");
        target = inspect_jdk(plan.java, plan.libjvm);
    } else {
        target = inspect_target(options.pid);
    }
    ReportSink sink(options.output);
    PathFiles path_files(options);
    StopSignals stop;
    std::unique_ptr<CostSampler> sampler;
    if (!options.raw)
        sampler = std::make_unique<CostSampler>(
            CalibrationConfig{options.verbose, options.per_thread, wants_call_paths(options), options.foreign});

    // Launch mode: the child waits at its gate until the probes are attached.
    std::unique_ptr<LaunchedCommand> child;
    if (launch) {
        child = std::make_unique<LaunchedCommand>(plan.argv);
        target.pid = child->pid();
    }
    TracerConfig config;
    config.programs.pid = target.pid;
    config.programs.packages = options.packages;
    config.programs.class_globs = options.class_globs;
    config.programs.method_globs = options.method_globs;
    config.programs.per_thread = options.per_thread;
    config.programs.call_paths = wants_call_paths(options);
    config.programs.foreign = options.foreign;
    config.programs.max_paths = options.max_paths;
    config.programs.arg_regs = target.arg_regs;
    config.programs.verbose = options.verbose;
    config.libjvm = target.libjvm;
    auto tracer = std::make_unique<Tracer>(config);
    TargetWatch watch(target.pid);
    if (sampler)
        sampler->start();  // after the fork: the child of a threaded process only execs
    if (launch)
        child->release();

    const uint64_t start_ns = monotonic_ns();
    if (launch)
        std::cerr << "Tracing " << describe_filter(options) << " in " << plan.java << " (pid " << target.pid
                  << ") from its start; the report follows its exit" << std::endl;
    else
        std::cerr << "Tracing " << describe_filter(options) << " in pid " << target.pid << " (" << target.comm
                  << "); Ctrl-C or SIGTERM to stop" << std::endl;

    Profile base;
    base.pid = target.pid;
    base.packages = options.packages;
    base.class_globs = options.class_globs;
    base.method_globs = options.method_globs;
    base.per_thread = options.per_thread;
    base.foreign = options.foreign;
    base.corrected = !options.raw;
    base.sources = {describe_source(target.pid, target.jdk_version, unix_now_ns() - (monotonic_ns() - start_ns))};
    // The calibration's estimate for [from_ns, to_ns]; write_report decides the cost taken out from it.
    auto calibrate = [&sampler](Profile &p, uint64_t from_ns, uint64_t to_ns) {
        if (!sampler)
            return;
        const CostEstimate e = estimate_probe_cost(sampler->samples(), from_ns, to_ns);
        p.calibrated_cost = e.cost;
        p.cost_samples = e.samples;
    };

    const uint64_t interval_ns = static_cast<uint64_t>(options.interval_s * 1e9);
    const uint64_t end_deadline = options.duration_s > 0 ? start_ns + static_cast<uint64_t>(options.duration_s * 1e9) : 0;
    uint64_t next_interval = interval_ns ? start_ns + interval_ns : 0;
    // The command shares the terminal in launch mode: no progress line over its output.
    const bool show_progress = !launch && isatty(STDERR_FILENO);
    ProgressLine progress(show_progress);
    uint64_t next_progress = show_progress ? start_ns + kProgressPeriodNs : 0;

    // The probe events and the JVM's CPU time where the window starts (the trace's or the interval's).
    OverheadTotals window_start;
    window_start.jvm_cpu_ns = process_cpu_ns(target.pid);
    std::optional<uint64_t> last_cpu = window_start.jvm_cpu_ns;  // the latest reading, every kCpuReadPeriodNs
    progress.start(window_start);  // Issue 22: the status line's trap share starts here
    uint64_t next_cpu_read = start_ns + kCpuReadPeriodNs;
    std::optional<OverheadGuard> guard;  // --max-overhead
    if (options.max_overhead_percent > 0) {
        guard.emplace(options.max_overhead_percent);
        guard->start(start_ns, window_start);
    }
    double tripped_share = 0;  // the traps' share that ended the trace (EndReason::Overhead)
    // cpu: read at the window's end; a JVM already reaped keeps the last reading.
    auto measure_overhead = [&](Profile &p, const Diagnostics &diag, std::optional<uint64_t> cpu) {
        OverheadTotals now = event_totals(diag.entries, diag.returns, diag.traced_calls);
        now.jvm_cpu_ns = cpu ? cpu : last_cpu;
        p.overhead = overhead_since(now, window_start);
        p.overhead.jvm_cpu_early = !cpu && last_cpu;
        window_start = now;
    };

    std::vector<MethodRow> previous;  // -i: totals at the end of the last interval
    std::vector<uint64_t> previous_gaps;  // -i: the gap histogram then
    uint64_t interval_start = start_ns;
    uint32_t interval_no = 0;
    auto interval_profile = [&](const Snapshot &snap, uint64_t now, std::optional<uint64_t> cpu) {
        Profile p = base;
        p.interval = ++interval_no;
        p.end_unix_ns = unix_now_ns();
        p.duration_ns = now - interval_start;
        p.methods = rows_since(snap.methods, previous);
        p.gap_hist = gaps_since(snap.gap_hist, previous_gaps);
        previous_gaps = snap.gap_hist;
        p.diag = snap.diag;
        calibrate(p, interval_start, now);
        measure_overhead(p, snap.diag, cpu);
        previous = snap.methods;
        interval_start = now;
        return p;
    };

    EndReason reason;
    for (;;) {
        Woken w = wait_until(stop, watch, earliest({end_deadline, next_interval, next_progress, next_cpu_read}));
        if (w.wake == Wake::Signal) {
            if (!launch) {
                reason = EndReason::Signal;
                break;
            }
            // The terminal signals the command itself; signals sent to jmethodtime are passed on.
            if (!w.from_terminal)
                child->forward(w.signo);
            continue;
        }
        if (w.wake == Wake::TargetExited) {
            reason = EndReason::TargetExited;
            break;
        }
        const uint64_t now = monotonic_ns();
        if (end_deadline && now >= end_deadline) {
            reason = EndReason::Duration;
            break;
        }
        if (now >= next_cpu_read) {
            if (std::optional<uint64_t> cpu = process_cpu_ns(target.pid))
                last_cpu = cpu;
            while (next_cpu_read <= now)
                next_cpu_read += kCpuReadPeriodNs;
            if (guard && last_cpu && sampler && guard->due(now)) {
                OverheadTotals totals = tracer->progress().events;
                totals.jvm_cpu_ns = last_cpu;
                const ProbeCost cost = estimate_probe_cost(sampler->samples(), now - kOverheadWindowNs, now).cost;
                if (std::optional<double> share = guard->feed(now, totals, cost)) {
                    tripped_share = *share;
                    reason = EndReason::Overhead;
                    break;
                }
            }
        }
        if (next_interval && now >= next_interval) {
            Profile p = interval_profile(tracer->snapshot(), now, process_cpu_ns(target.pid));
            progress.clear();
            write_report(sink, options, std::move(p));
            while (next_interval <= now)
                next_interval += interval_ns;
        }
        if (next_progress && now >= next_progress) {
            // Issue 22: the status line with the traps' share over the last second and the loss counters.
            Tracer::Progress p = tracer->progress();
            p.events.jvm_cpu_ns = last_cpu;
            std::optional<ProbeCost> cost;
            if (sampler)
                cost = estimate_probe_cost(sampler->samples(), now - kProgressPeriodNs, now).cost;
            progress.show(now - start_ns, p, cost);
            next_progress += kProgressPeriodNs;
        }
    }
    const uint64_t end_ns = monotonic_ns();
    if (sampler)
        sampler->stop();
    Snapshot snap = tracer->snapshot();
    const std::optional<uint64_t> end_cpu = process_cpu_ns(target.pid);  // before a launched JVM is reaped
    CallTree tree = tracer->call_tree();
    tracer.reset();  // detach before formatting: the JVM runs untraced from here
    progress.clear();

    int exit_code = 0;
    if (launch && reason == EndReason::TargetExited) {
        exit_code = child->wait();
        std::cerr << "Command exited with status " << exit_code << "; detached" << std::endl;
    } else if (reason == EndReason::TargetExited) {
        std::cerr << "Target pid " << target.pid << " exited; detached" << std::endl;
    } else if (reason == EndReason::Overhead) {
        std::cerr << "jmethodtime: the probes' traps took " << std::lround(tripped_share * 100)
                  << "% of the JVM's CPU time for " << kOverheadTripWindows << " s in a row, over --max-overhead "
                  << options.max_overhead_percent << "%: detached from pid " << target.pid << std::endl;
    } else {
        std::cerr << "Detached from pid " << target.pid << std::endl;
    }

    Profile last = interval_ns ? interval_profile(snap, end_ns, end_cpu) : base;
    if (!interval_ns) {
        last.duration_ns = end_ns - start_ns;
        last.methods = std::move(snap.methods);
        last.gap_hist = std::move(snap.gap_hist);
        last.diag = snap.diag;
        calibrate(last, start_ns, end_ns);
        measure_overhead(last, snap.diag, end_cpu);
    }
    const Profile written = write_report(sink, options, std::move(last), std::move(tree), &path_files);
    // Issue 22: the header's facts on stderr when the report went to a file or a pipe.
    if (summary_wanted(sink.enabled(), isatty(STDOUT_FILENO)))
        for (const std::string &line : summary_lines(written))
            std::cerr << line << "\n";

    if (launch && reason != EndReason::TargetExited) {
        std::cerr << "The command runs on untraced; waiting for it to exit" << std::endl;
        exit_code = child->wait();
    }
    return exit_code;
}

}  // namespace

int run(const Options &options)
{
    try {
        return options.list ? run_list(options) : run_trace(options);
    } catch (const Error &e) {
        std::cerr << "jmethodtime: " << e.what() << std::endl;
        return 1;
    }
}

}  // namespace jmt
