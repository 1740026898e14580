#include "util/lifecycle.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "util/error.h"

namespace jmt {

uint64_t monotonic_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

void check_kernel()
{
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        throw Error("the kernel has no BTF (/sys/kernel/btf/vmlinux is missing): use a kernel built with "
                    "CONFIG_DEBUG_INFO_BTF=y (most distributions since 2021)",
                    ENOENT);
}

StopSignals::StopSignals()
{
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGHUP);
    sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0) {
        int err = errno;
        sigprocmask(SIG_SETMASK, &old_, nullptr);
        throw Error(std::string("signalfd failed: ") + strerror(err), err);
    }
}

StopSignals::~StopSignals()
{
    close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
}

namespace {

// How often a target without a pidfd (kernels before 5.3) is checked for its exit (ms).
constexpr int kPidPollMs = 200;

}  // namespace

bool stop_pending()
{
    sigset_t pending;
    sigemptyset(&pending);
    if (sigpending(&pending) != 0)
        return false;
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
           sigismember(&pending, SIGHUP) == 1;
}

TargetWatch::TargetWatch(int pid) : pid_(pid), fd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))) {}

TargetWatch::~TargetWatch()
{
    if (fd_ >= 0)
        close(fd_);
}

Woken wait_until(const StopSignals &stop, const std::vector<const TargetWatch *> &targets, uint64_t deadline_ns)
{
    // fds[0]: the signals; then one pidfd per target that has one (at[i]: its target).
    std::vector<struct pollfd> fds = {{stop.fd(), POLLIN, 0}};
    std::vector<size_t> at = {0};
    bool polled_by_pid = false;  // without pidfd, poll the pid
    for (size_t t = 0; t < targets.size(); t++) {
        if (targets[t]->fd() >= 0) {
            fds.push_back({targets[t]->fd(), POLLIN, 0});
            at.push_back(t);
        } else {
            polled_by_pid = true;
        }
    }
    for (;;) {
        int timeout_ms = polled_by_pid ? kPidPollMs : -1;
        if (deadline_ns) {
            uint64_t now = monotonic_ns();
            if (now >= deadline_ns)
                return {Wake::Deadline};
            int left = static_cast<int>((deadline_ns - now + 999999) / 1000000);
            timeout_ms = timeout_ms < 0 ? left : std::min(timeout_ms, left);
        }
        for (struct pollfd &p : fds)
            p.revents = 0;
        int n = poll(fds.data(), fds.size(), timeout_ms);
        if (n < 0 && errno != EINTR)
            throw Error(std::string("poll failed: ") + strerror(errno), errno);
        if (n > 0 && (fds[0].revents & POLLIN)) {
            // Consumed: a signal left pending would be delivered when the mask is restored.
            struct signalfd_siginfo info = {};
            if (read(stop.fd(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
                Woken w{Wake::Signal, static_cast<int>(info.ssi_signo), info.ssi_code == SI_KERNEL};
                return w;
            }
            continue;
        }
        for (size_t i = 1; n > 0 && i < fds.size(); i++)
            if (fds[i].revents & POLLIN)
                return {Wake::TargetExited, 0, false, at[i]};
        for (size_t t = 0; t < targets.size(); t++)
            if (targets[t]->fd() < 0 && kill(targets[t]->pid(), 0) != 0 && errno == ESRCH)
                return {Wake::TargetExited, 0, false, t};
    }
}

EndReason wait_for_end(const StopSignals &stop, int pid, double duration_s)
{
    TargetWatch target(pid);
    const uint64_t deadline = duration_s > 0 ? monotonic_ns() + static_cast<uint64_t>(duration_s * 1e9) : 0;
    switch (wait_until(stop, {&target}, deadline).wake) {
    case Wake::Signal: return EndReason::Signal;
    case Wake::Deadline: return EndReason::Duration;
    case Wake::TargetExited: return EndReason::TargetExited;
    }
    return EndReason::Signal;
}

}  // namespace jmt
