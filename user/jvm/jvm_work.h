// The work a traced JVM does, read from outside: its threads' CPU time and the
// I/O calls it makes, with the probes on or off (model/profile.h's JvmWork).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

// One thread's CPU time (ns) and read and write system calls so far.
struct ThreadWork {
    uint64_t cpu_ns = 0;
    uint64_t io_calls = 0;
};

// One reading of a JVM: its threads by tid (its JIT compiler threads left out).
struct WorkReading {
    std::map<int, ThreadWork> threads;
    uint64_t at_ns = 0;  // CLOCK_MONOTONIC
};

// syscr + syscw of a /proc/PID/io text; nullopt when either is missing.
std::optional<uint64_t> parse_io_calls(const std::string &io_text);
// The first field of a /proc/PID/task/TID/schedstat text: ns on a CPU.
std::optional<uint64_t> parse_schedstat_ns(const std::string &schedstat_text);
// Whether a thread of this comm compiles Java code ("C2 CompilerThre", "C1 CompilerThre").
bool is_compiler_thread(const std::string &comm);

// pid's reading now; nullopt when the JVM is gone or unreadable.
std::optional<WorkReading> read_jvm_work(int pid, uint64_t now_ns);

// The work between two readings of one JVM, of the threads that made I/O calls
// in between (a server's request threads; its GC, JIT and timer threads make
// none): the CPU time they gained and their I/O calls. A thread new since
// before counts from 0; one gone since is lost.
JvmWork work_between(const WorkReading &before, const WorkReading &after);

// Several JVMs' work, window after window: next() is the sum of what each JVM
// did since the previous call (a JVM unreadable at either end is left out).
class WorkMeter {
public:
    explicit WorkMeter(std::vector<int> pids);
    JvmWork next(uint64_t now_ns);

private:
    std::vector<int> pids_;
    std::vector<std::optional<WorkReading>> last_;
};

}  // namespace jmt
