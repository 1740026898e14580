#include <cstdio>

#include "jmethodtime.h"
#include "report.h"

namespace jmt {

std::string format_duration(uint64_t ns)
{
    char buf[32];
    if (ns < 1000) {
        snprintf(buf, sizeof(buf), "%llu ns", static_cast<unsigned long long>(ns));
        return buf;
    }
    // The largest unit in which the value rounds to at least 1.00; three significant digits.
    struct Unit {
        double scale;
        const char *name;
    };
    static const Unit units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
    const Unit *unit = &units[2];
    for (const Unit &u : units) {
        if (static_cast<double>(ns) / u.scale >= 0.9995) {
            unit = &u;
            break;
        }
    }
    double v = static_cast<double>(ns) / unit->scale;
    int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
    snprintf(buf, sizeof(buf), "%.*f %s", decimals, v, unit->name);
    return buf;
}

std::vector<std::string> diagnostic_lines(const Diagnostics &d)
{
    std::vector<std::string> lines;
    auto add = [&lines](uint64_t n, const std::string &text) {
        if (n)
            lines.push_back(text);
    };
    const std::string depth = std::to_string(JMT_MAX_DEPTH);
    add(d.depth_overflow, "depth_overflow: " + std::to_string(d.depth_overflow) + " calls ran deeper than the " +
                              depth + "-frame stack bound; they are counted, their time is charged to the "
                                      "deepest recorded caller");
    add(d.unmatched_returns, "unmatched_returns: " + std::to_string(d.unmatched_returns) +
                                 " returns of traced methods entered before tracing started were ignored");
    add(d.dropped_frames, "dropped_frames: " + std::to_string(d.dropped_frames) +
                              " calls ended without a return event (an exception thrown out of a C1-inlined "
                              "method); they are counted, their own time is charged to their caller");
    add(d.thread_state_fail, "thread_state_fail: " + std::to_string(d.thread_state_fail) +
                                 " events were ignored: per-thread state could not be allocated (kernel memory)");
    add(d.method_table_full, "method_table_full: " + std::to_string(d.method_table_full) +
                                 " methods were not traced: the method table is full; narrow --package");
    add(d.names_fail, "names_fail: " + std::to_string(d.names_fail) + " method names could not be read");
    add(d.arg_fail, "arg_fail: " + std::to_string(d.arg_fail) +
                        " probe events had unreadable arguments and were ignored");
    add(d.truncated_names, "truncated_names: " + std::to_string(d.truncated_names) +
                               " names were longer than the kernel buffer and are shown truncated");
    return lines;
}

}  // namespace jmt
