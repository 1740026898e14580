// What every attach-and-wait tool of the project shares: the kernel check,
// stop signals read from a signalfd, and waiting for the end of a trace.
#pragma once

#include <signal.h>

#include <cstdint>

namespace jmt {

uint64_t monotonic_ns();

// Throws jmt::Error when the kernel has no BTF.
void check_kernel();

// Blocks SIGINT, SIGTERM and SIGHUP and reads them from a signalfd, so a stop
// request never kills the tool mid-attach or mid-report. Restores the mask.
class StopSignals {
public:
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals &) = delete;
    StopSignals &operator=(const StopSignals &) = delete;
    int fd() const { return fd_; }

private:
    sigset_t set_{}, old_{};
    int fd_ = -1;
};

enum class EndReason { Signal, Duration, TargetExited };

// Waits for a stop signal, duration_s seconds (0: no limit), or the exit of pid.
EndReason wait_for_end(const StopSignals &stop, int pid, double duration_s);

}  // namespace jmt
