// The windows that measure what one probe event costs the traced JVM in its
// own code (cost/probe_windows.h): after the trace, or before it with
// --cost-before.
#include <cmath>
#include <iostream>

#include "cli/session.h"
#include "util/error.h"

namespace jmt {

void TraceSession::measure_cost_before()
{
    if (targets_.size() > 1 || !tracer_->can_switch_method_probes()) {
        windows_before_why_ = "not measured before the trace: its probes are shared (several JVMs, or another tracer)";
        return;
    }
    const int pid = targets_.front().pid;
    std::cerr << "Measuring what one probe event costs pid " << pid << " in its own code before the trace: "
              << "windows with one probe detached, about " << std::lround(kProbeWindowsSeconds)
              << " s, its calls not in the report" << std::endl;
    Wake wake = Wake::Deadline;
    const uint64_t start = monotonic_ns();
    windows_before_ = run_probe_windows(*tracer_, pid, [this, &wake](uint64_t deadline) {
        return (wake = wait_until(stop_, watching_all(), deadline).wake) == Wake::Deadline;
    });
    windows_before_ns_ = monotonic_ns() - start;
    if (wake == Wake::Signal)
        throw Error("stopped before the trace started, while the probe cost was measured (--cost-before)");
    if (wake == Wake::TargetExited)
        throw Error("pid " + std::to_string(pid) +
                    " exited before the trace started, while the probe cost was "
                    "measured (--cost-before): trace a JVM that runs on");
    // The windows' frames and totals stay with their programs: the trace starts on new ones, as at an attach
    // (a call already under way when they attach is left out), and its links are the ones named ours.
    tracer_.reset();
    tracer_ = std::make_unique<Tracer>(tracer_config(options_, targets_, base_.latency_cost));
    own_link_ids_.clear();
    probe_sites_.clear();
    holders_checked_ = false;
    check_probe_holders(false);
}

void TraceSession::measure_cost_after(Profile &profile, bool at_work)
{
    if (options_.cost_before) {
        if (windows_before_why_.empty())
            profile.probe_windows = probe_windows_cost(windows_before_, windows_before_ns_, profile.gap_hist, true);
        else
            profile.probe_windows.why = windows_before_why_;
        return;
    }
    const ProbeWindowsPlan plan =
        plan_probe_windows(profile, {options_.raw, interval_ns_ != 0, at_work, tracer_->can_switch_method_probes()});
    profile.probe_windows.why = plan.why;
    if (!plan.run)
        return;
    progress_->clear();
    std::cerr << "Measuring what one probe event costs pid " << targets_.front().pid << " in its own code: "
              << "windows with one probe detached, about " << std::lround(kProbeWindowsSeconds) << " s (Ctrl-C to skip)"
              << std::endl;
    profile.probe_windows = measure_probe_windows(
        *tracer_, targets_.front().pid,
        [this](uint64_t deadline) { return wait_until(stop_, watching_all(), deadline).wake == Wake::Deadline; },
        profile.gap_hist);
}

}  // namespace jmt
