#include "util/process_handle.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "util/error.h"
#include "util/procfs.h"

namespace jmt {

ProcessHandle::ProcessHandle(int pid, uint64_t start_ticks) : pid_(pid)
{
    pidfd_ = UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (pidfd_.get() < 0) {
        const int err = errno;
        throw Error(err == ESRCH ? "no process with pid " + std::to_string(pid) + " (it exited)"
                                 : "cannot open " + who(pid) + " (pidfd_open: " + strerror(err) +
                                       "; Linux 5.3 or newer is needed)",
                    err);
    }
    // The descriptor names whatever had the pid when it was opened: the start time read after it
    // tells whether that is the process examined.
    const std::optional<uint64_t> now = process_start_ticks(pid);
    if (!now || (start_ticks && *now != start_ticks))
        throw Error(who(pid) + " exited" + (now ? ", and another process now has its pid" : "") +
                        ": nothing was written to it",
                    ESRCH);
    start_ticks_ = *now;
}

bool ProcessHandle::alive() const { return signal(0); }

void ProcessHandle::check_alive(const char *doing) const
{
    if (!alive())
        throw Error(who(pid_) + " exited before " + doing, ESRCH);
}

bool ProcessHandle::signal(int sig) const { return syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) == 0; }

}  // namespace jmt
