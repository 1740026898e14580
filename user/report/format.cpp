#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include "jmethodtime.h"
#include "report/report.h"

namespace jmt {

namespace {

constexpr uint64_t kNsPerUs = 1000;
constexpr uint64_t kNsPerS = 1000 * 1000 * 1000;
// Trap time share of the JVM's CPU time from which the overhead line advises short traces.
constexpr long kOverheadWarnPercent = 25;
// From here on a duration is shown in whole seconds: 999.5 s rounds to "1000 s".
constexpr uint64_t kWholeSecondsFromNs = 999'500'000'000ULL;

// "d.dd", "dd.d" or "ddd" for sig in [100, 999] with int_digits (1..3) digits
// before the decimal point.
std::string place_point(uint64_t sig, int int_digits)
{
    const std::string s = std::to_string(sig);
    if (int_digits >= 3)
        return s;
    return s.substr(0, static_cast<size_t>(int_digits)) + "." + s.substr(static_cast<size_t>(int_digits));
}

}  // namespace

std::string overhead_text(const Profile &profile)
{
    const Overhead &o = profile.overhead;
    std::string text = "Probe events: " + format_count(o.events);
    if (profile.duration_ns > 0)
        text += " (" +
                format_count(static_cast<uint64_t>(static_cast<double>(o.events) * 1e9 /
                                                   static_cast<double>(profile.duration_ns))) +
                "/s)";
    const uint64_t trap_ns = overhead_ns(o, profile.probe_cost);
    if (profile.corrected && trap_ns > 0) {
        text += "; about " + format_duration(trap_ns) + " of trap time";
        if (const std::optional<double> share = trap_share(o, profile.probe_cost)) {
            const long percent = std::lround(100.0 * *share);
            text += ", " + std::to_string(percent) + "% of the JVM's " + format_duration(o.jvm_cpu_ns) +
                    " on a CPU";
            if (o.jvm_cpu_early)
                text += " (read up to " + format_duration(kCpuReadPeriodNs) + " before it exited)";
            if (percent >= kOverheadWarnPercent)
                text += "; every Java call traps, traced or not: keep such traces short";
        } else {
            text += " (the JVM's CPU time is unknown: it was gone before it was read)";
        }
    } else if (o.jvm_cpu_ns > 0) {
        text += "; the JVM was on a CPU for " + format_duration(o.jvm_cpu_ns);
    }
    return text;
}

std::string format_count(uint64_t n)
{
    if (n < 10000)
        return std::to_string(n);
    const char *units[] = {"K", "M", "G", "T"};
    double v = static_cast<double>(n);
    int u = -1;
    while (v >= 1000 && u < 3) {
        v /= 1000;
        u++;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v, units[u]);
    return buf;
}

// Three significant digits in us, ms or s, rounded half up in integers (no
// binary fractions, so 1005 ns is "1.01 us" like 1015 ns is "1.02 us"). A
// value that rounds up to 1000 of a unit moves to the next unit.
std::string format_duration(uint64_t ns)
{
    if (ns < kNsPerUs)
        return std::to_string(ns) + " ns";
    if (ns >= kWholeSecondsFromNs) {
        // Seconds stay seconds; no overflow for any uint64_t.
        uint64_t s = ns / kNsPerS + (ns % kNsPerS >= kNsPerS / 2 ? 1 : 0);
        return std::to_string(s) + " s";
    }
    // Here 1000 <= ns < 999.5e9: 4 to 12 digits, so sums below do not overflow.
    uint64_t scale = 1;  // 10^(digits - 3)
    int digits = 3;      // digits of ns
    while (ns / scale >= 1000) {
        scale *= 10;
        digits++;
    }
    uint64_t sig = (ns + scale / 2) / scale;  // in [100, 1000]
    if (sig == 1000) {
        sig = 100;
        digits++;
    }
    // The rounded value is sig * 10^(digits - 3) ns; 4..6 digits are us, 7..9 ms, 10..12 s.
    static const char *const kUnits[] = {"us", "ms", "s"};
    const int unit = (digits - 4) / 3;
    return place_point(sig, digits - 3 * (unit + 1)) + " " + kUnits[unit];
}

std::string format_utc(uint64_t unix_ns)
{
    const time_t secs = static_cast<time_t>(unix_ns / kNsPerS);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char buf[48];
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%03uZ", static_cast<unsigned>(unix_ns / (kNsPerUs * 1000) % 1000));
    return buf;
}

namespace {

struct DiagnosticCounter {
    const char *name;
    uint64_t count;
    std::string text;  // what the count means, after "name: count "
};

// Every diagnostic counter a user is told about, zero or not.
std::vector<DiagnosticCounter> diagnostic_counters(const Diagnostics &d)
{
    std::vector<DiagnosticCounter> lines;
    auto add = [&lines](const char *name, uint64_t n, const std::string &text) {
        lines.push_back({name, n, text});
    };
    add("depth_overflow", d.depth_overflow,
        "calls ran deeper than the " + std::to_string(JMT_MAX_DEPTH) +
            "-frame stack bound; they are counted, their time is charged to the deepest recorded caller");
    add("unmatched_returns", d.unmatched_returns,
        "returns of traced methods entered before tracing started were ignored");
    add("dropped_frames", d.dropped_frames,
        "calls ended without a return event (an exception thrown out of a C1-inlined method); they are "
        "counted, their own time is charged to their caller");
    add("thread_state_fail", d.thread_state_fail,
        "events were ignored: per-thread state could not be allocated (kernel memory); some calls are "
        "missing");
    add("method_table_full", d.method_table_full,
        "times a method was not traced because the method table was full; its calls are missing (narrow "
        "--package)");
    add("names_fail", d.names_fail,
        "method names could not be read in the kernel; events of a class not yet readable were skipped, "
        "other names were read from the JVM's memory instead");
    add("arg_fail", d.arg_fail, "probe events had unreadable arguments and were ignored");
    add("glob_budget_out", d.glob_budget_out,
        "methods were not traced because a --class or --method pattern took more than " +
            std::to_string(JMT_GLOB_STEPS) + " steps to match their name; use fewer '*' or a literal part");
    add("thread_rows_full", d.thread_rows_full,
        "calls could not be split by thread (the per-thread table of " + std::to_string(JMT_MAX_THREAD_ROWS) +
            " rows was full); they are in the row of thread \"[not split: thread table full]\"");
    add("paths_full", d.paths_full,
        "frames were counted under the call path [truncated] (the table of " + std::to_string(JMT_MAX_PATHS) +
            " call paths was full); per-method totals are exact");
    add("cpu_clamped", d.cpu_clamped,
        "frames measured more on-CPU time than elapsed time (a clock error seen under heavy load); their "
        "on-CPU time was cut to their elapsed time");
    add("switch_unseen", d.switch_unseen,
        "context switches of traced threads were not seen by the kernel program; the on-CPU clock of each "
        "such thread restarted at its next probe event (on-CPU time may be a little low)");
    add("foreign_lost", d.foreign_lost,
        "calls had an untraced callee whose return never fired (an exception out of a C1-inlined method): "
        "their time after it counts as foreign");
    add("truncated_names", d.truncated_names,
        "names were longer than the kernel buffer (or unreadable) and could not be completed from the "
        "JVM's memory; they are shown truncated, ending in \"...\"");
    return lines;
}

}  // namespace

std::vector<std::string> diagnostic_lines(const Diagnostics &d)
{
    std::vector<std::string> lines;
    for (const DiagnosticCounter &c : diagnostic_counters(d))
        if (c.count)
            lines.push_back(std::string(c.name) + ": " + std::to_string(c.count) + " " + c.text);
    return lines;
}

std::vector<std::pair<std::string, uint64_t>> diagnostic_counts(const Diagnostics &d)
{
    std::vector<std::pair<std::string, uint64_t>> counts;
    for (const DiagnosticCounter &c : diagnostic_counters(d))
        if (c.count)
            counts.emplace_back(c.name, c.count);
    return counts;
}

}  // namespace jmt
