#include "lifecycle.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "error.h"

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

EndReason wait_for_end(const StopSignals &stop, int pid, double duration_s)
{
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    struct PidFd {
        int fd;
        ~PidFd()
        {
            if (fd >= 0)
                close(fd);
        }
    } guard{pidfd};
    const uint64_t deadline = duration_s > 0 ? monotonic_ns() + static_cast<uint64_t>(duration_s * 1e9) : 0;
    for (;;) {
        int timeout_ms = pidfd >= 0 ? -1 : 200;  // without pidfd, poll the pid
        if (deadline) {
            uint64_t now = monotonic_ns();
            if (now >= deadline)
                return EndReason::Duration;
            int left = static_cast<int>((deadline - now + 999999) / 1000000);
            timeout_ms = timeout_ms < 0 ? left : std::min(timeout_ms, left);
        }
        struct pollfd fds[2] = {{stop.fd(), POLLIN, 0}, {pidfd, POLLIN, 0}};
        int n = poll(fds, pidfd >= 0 ? 2 : 1, timeout_ms);
        if (n < 0 && errno != EINTR)
            throw Error(std::string("poll failed: ") + strerror(errno), errno);
        if (n > 0 && (fds[0].revents & POLLIN)) {
            // Consume it: a signal left pending would be delivered when the mask is restored.
            struct signalfd_siginfo info;
            ssize_t got = read(stop.fd(), &info, sizeof(info));
            (void)got;
            return EndReason::Signal;
        }
        if (n > 0 && pidfd >= 0 && (fds[1].revents & POLLIN))
            return EndReason::TargetExited;
        if (pidfd < 0 && kill(pid, 0) != 0 && errno == ESRCH)
            return EndReason::TargetExited;
    }
}

}  // namespace jmt
