// A process named by a pidfd, opened while /proc/PID/stat still shows the start time it was
// examined with: from then on the descriptor names that process and no other, whatever becomes
// of its pid. Writes into the process check it is alive after they open their way in (a pid
// cannot be reused while its process lives), signals go through the descriptor.
#pragma once

#include <cstdint>

#include "util/unique_fd.h"

namespace jmt {

class ProcessHandle {
public:
    // The process pid, which must have started at start_ticks (/proc/PID/stat's starttime; 0: the
    // one that has the pid now). Throws jmt::Error (ESRCH) when pid names no process or another one.
    ProcessHandle(int pid, uint64_t start_ticks);

    int pid() const { return pid_; }
    uint64_t start_ticks() const { return start_ticks_; }
    // Whether the process still runs (a zombie counts as gone only once reaped).
    bool alive() const;
    // Throws jmt::Error (ESRCH) naming what was about to be done when the process has gone.
    void check_alive(const char *doing) const;
    // sig to the process through the descriptor; false (errno set) when it has gone.
    bool signal(int sig) const;

private:
    int pid_ = 0;
    uint64_t start_ticks_ = 0;
    UniqueFd pidfd_;
};

}  // namespace jmt
