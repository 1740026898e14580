// --slower-than: single calls of traced methods over a threshold, as the
// reports list them under the rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jmt {

struct SlowCall {
    std::string klass, method, signature;
    uint32_t tid = 0;
    std::string thread;    // the thread's name
    uint64_t vthread = 0;  // the virtual thread it ran on across an unmount (java.lang.Thread's id), else 0
    int pid = 0;           // several JVMs: the call's JVM
    std::string host;      // merge: the source it came from
    uint64_t start_unix_ns = 0;
    // Its elapsed time (its histogram's: probe events taken out unless --raw), on a CPU
    // (the same events out), waiting for one, and blocked: the rest.
    uint64_t wall_ns = 0, cpu_ns = 0, runq_ns = 0, blocked_ns = 0;
    std::vector<std::string> path;  // its traced callers, outermost first ("class.method(sig)"), then itself
    uint32_t path_cut = 0;          // callers left out of path, below its outermost JMT_SLOW_PATH
};

// Keeps the kept slowest of calls (by wall_ns, slowest first); the rest counted in dropped.
void keep_slowest(std::vector<SlowCall> &calls, size_t kept, uint64_t &dropped);

// "20ms", "500us", "1.5s", "800ns" (no unit: ms) as ns; throws jmt::Error otherwise.
uint64_t parse_duration_ns(const std::string &text);

}  // namespace jmt
