// One trace, in small steps: start (preflight, attach, release a launched
// command), tick (CPU readings, the --max-overhead guard, interval reports,
// the status line), and the final report. Direction of flow: the tracer's
// snapshots become Profiles, cost/ corrects them, report/ formats them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "cli/options.h"
#include "cli/sink.h"
#include "cli/status_line.h"
#include "cli/switched_jvms.h"
#include "cli/tracer_config.h"
#include "cost/interval.h"
#include "jvm/jvm_set.h"
#include "jvm/jvm_work.h"
#include "cost/calibrate.h"
#include "cost/overhead.h"
#include "cost/probe_windows.h"
#include "loader/probe_holders.h"
#include "loader/tracer.h"
#include "model/profile.h"
#include "report/dispatch.h"
#include "jvm/jvm.h"
#include "control/launch.h"
#include "util/lifecycle.h"

namespace jmt {

class TraceSession {
public:
    // Preflight, output files, calibration, the launched command (held at its
    // gate) and the probes; throws jmt::Error naming the cause and the fix.
    explicit TraceSession(const Options &options);
    ~TraceSession();
    TraceSession(const TraceSession &) = delete;
    TraceSession &operator=(const TraceSession &) = delete;

    // Traces until the end (signal, -d, the JVM's exit, --max-overhead),
    // reports, and returns the exit code (a launched command's status).
    int run();

private:
    void find_target();
    void attach();
    // JVMs whose probes are switched on at run time (Switchable, Standby,
    // LeftOn): each waits for its compiles to settle and is switched on for
    // the filter's classes. Throws jmt::Error when stopped meanwhile.
    void switch_probes_on();
    // Other tracers on our probe sites: refused at the start (jmt::Error)
    // unless --shared-probes; later ones are said once and go in the report.
    void check_probe_holders(bool held_before);
    // Work due at now; an end reason when the guard tripped.
    std::optional<EndReason> tick(uint64_t now);
    std::optional<EndReason> read_cpu(uint64_t now);
    void show_progress(uint64_t now);
    // The profile of [window start, now]: rows since the last window, gaps, calibration, overhead.
    Profile window_profile(const Snapshot &snap, uint64_t now, std::optional<uint64_t> cpu);
    // Corrects profile (and tree), writes every output; returns the profile as written.
    Profile report(Profile profile, CallTree tree, bool with_files);
    // --cost-before: the windows (cost/probe_windows.h) on the switched JVM, then
    // the trace's programs loaded anew; throws jmt::Error when stopped meanwhile.
    void measure_cost_before();
    // What one event cost the JVM into profile: --cost-before's windows, or
    // windows now where the trace stopped with the JVM at work.
    void measure_cost_after(Profile &profile, bool at_work);
    int finish(EndReason reason);
    void say_how_it_ended(EndReason reason, int exit_code) const;

    const Options &options_;
    const bool launch_;
    OutputSpec spec_;
    std::vector<JvmTarget> targets_;  // the traced JVMs: one, or several (--match)
    LaunchPlan plan_;
    RunAs run_as_;
    std::unique_ptr<ReportSink> sink_;
    std::unique_ptr<PathFiles> path_files_;
    StopSignals stop_;
    std::unique_ptr<CostSampler> sampler_;
    std::unique_ptr<LaunchedCommand> child_;
    std::unique_ptr<Tracer> tracer_;
    // Declared after tracer_: destroyed first, so a switched JVM is switched off on every way out.
    SwitchedJvms switched_;
    std::vector<std::unique_ptr<TargetWatch>> watches_;  // the traced JVMs still running
    Profile base_;                                       // what every window's profile starts from

    // Clocks (monotonic ns; 0: not due).
    uint64_t start_ns_ = 0, end_deadline_ = 0, interval_ns_ = 0, next_interval_ = 0, next_progress_ = 0,
             next_cpu_read_ = 0;
    std::unique_ptr<ProgressLine> progress_;
    std::optional<OverheadGuard> guard_;  // --max-overhead
    double tripped_share_ = 0;            // the traps' share that ended the trace (EndReason::Overhead)
    std::unique_ptr<JvmsCpu> cpu_;        // the JVMs' CPU time, read every kCpuReadPeriodNs
    // The JVMs' work (CPU time and I/O calls) from before the probes go on, then window by window.
    std::unique_ptr<WorkMeter> work_;
    std::vector<const TargetWatch *> watching_all() const;
    uint64_t untraced_from_ns_ = 0;
    IntervalTotals interval_totals_;  // the current report interval (the trace, or one -i interval) from its start
    uint64_t window_start_ns_ = 0;
    uint32_t interval_no_ = 0;
    // Our links' uprobe sites and ids, to tell other tracers' links from ours.
    std::set<UprobeSite> probe_sites_;
    std::set<uint32_t> own_link_ids_;
    bool holders_checked_ = false;
    std::vector<ProbeWindow> windows_before_;  // --cost-before
    uint64_t windows_before_ns_ = 0;           // their wall time
    std::string windows_before_why_;           // why they did not run
    uint64_t next_holder_check_ = 0;           // monotonic ns
    static constexpr uint64_t kHolderCheckPeriodNs = 1'000'000'000;
};

}  // namespace jmt
