// What every attach-and-wait tool of the project shares: the kernel check,
// stop signals read from a signalfd, and waiting for the end of a trace.
#pragma once

#include <signal.h>

#include <cstddef>
#include <cstdint>
#include <vector>

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

// Whether a stop signal (SIGINT, SIGTERM, SIGHUP) waits unread: a long wait outside wait_until
// (an attach reply) gives up on it, and the signal stays for the trace's end to read.
bool stop_pending();

// The exit of a process, seen through a pidfd (polled with kill(pid, 0) on
// kernels without pidfd_open). Opened once, so a reused pid is never mistaken
// for the target.
class TargetWatch {
public:
    explicit TargetWatch(int pid);
    ~TargetWatch();
    TargetWatch(const TargetWatch &) = delete;
    TargetWatch &operator=(const TargetWatch &) = delete;
    int pid() const { return pid_; }
    int fd() const { return fd_; }  // -1 without pidfd

private:
    int pid_;
    int fd_;
};

enum class Wake { Signal, Deadline, TargetExited };

struct Woken {
    Wake wake = Wake::Deadline;
    int signo = 0;               // Wake::Signal: which
    bool from_terminal = false;  // Wake::Signal: sent by the terminal to the whole foreground group
    size_t target = 0;           // Wake::TargetExited: which of the targets
};

// Waits for a stop signal, the monotonic deadline_ns (0: none), or the exit of one of targets.
Woken wait_until(const StopSignals &stop, const std::vector<const TargetWatch *> &targets, uint64_t deadline_ns);

enum class EndReason { Signal, Duration, TargetExited, Overhead };

// Waits for a stop signal, duration_s seconds (0: no limit), or the exit of pid.
EndReason wait_for_end(const StopSignals &stop, int pid, double duration_s);

}  // namespace jmt
