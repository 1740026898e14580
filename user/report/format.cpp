#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include "cost/overhead.h"
#include "jmethodtime.h"
#include "jvm/agent_abi.h"
#include "report/diagnostic_texts.h"
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

namespace {

// "JVM's", or with several JVMs "JVMs'".
std::string jvms_possessive(const Profile &profile) { return profile.jvm_pids.size() > 1 ? "JVMs'" : "JVM's"; }

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
    if (o.trap_ns > 0) {
        text += "; about " + format_duration(o.trap_ns) + " of trap time";
        if (o.trap_share) {
            const long percent = std::lround(100.0 * *o.trap_share);
            text += ", " + std::to_string(percent) + "% of the " + jvms_possessive(profile) + " " +
                    format_duration(o.jvm_cpu_ns) + " on a CPU";
            if (o.jvm_cpu_early)
                text += " (read up to " + format_duration(kCpuReadPeriodNs) + " before it exited)";
            if (percent >= kOverheadWarnPercent)
                text += profile.probes.access == "switched"
                            ? "; the switched classes' calls trap, traced or not: keep such traces short"
                            : "; every Java call traps, traced or not: keep such traces short";
        } else {
            text += " (the JVM's CPU time is unknown: it was gone before it was read)";
        }
    } else if (o.jvm_cpu_ns > 0) {
        text += std::string(profile.jvm_pids.size() > 1 ? "; the JVMs were" : "; the JVM was") + " on a CPU for " +
                format_duration(o.jvm_cpu_ns);
    }
    return text;
}

std::string probes_text(const Profile &profile)
{
    const ProbesInfo &p = profile.probes;
    if (p.access != "switched" && p.access != "mixed")
        return {};
    std::string out = std::string(p.access == "mixed" ? "Probes switched on at run time in some JVMs"
                                                      : "Probes switched on at run time") +
                      " for " + std::to_string(p.classes) + (p.classes == 1 ? " class" : " classes") +
                      ": only their code, and code compiled while the trace ran, trapped; all of it "
                      "was switched off at the end";
    if (!p.settled)
        out += " (compiles had not settled when the switch came)";
    if (p.unmodifiable > 0)
        out += "; " + std::to_string(p.unmodifiable) +
               " hidden classes the filter takes (lambdas' and proxies' own classes) cannot be switched: their "
               "methods count only the calls that ran interpreted";
    const Overhead &o = profile.overhead;
    const std::string standby = "`jmethodtime standby -p " +
                                (profile.jvm_pids.size() > 1 ? std::string("PID") : std::to_string(profile.pid)) + "`";
    if (p.cold)
        out += "\nThe JVM's code was still interpreted when the probes went on (" + std::to_string(p.hot_back) +
               " of its " + std::to_string(p.hot_methods) + " hot methods compiled again since " + p.cold_cause +
               "): this trace trapped about as widely as the flag at start, " +
               format_count(o.events - std::min(o.events, o.traced_events)) + " filtered-out probe events; " + standby +
               " ahead of time, or traffic during the switch, avoids it";
    if (p.end_cold)
        out += "\nThe end deoptimized the " + std::to_string(p.end_methods) +
               " methods compiled during the trace (they had probe calls); " +
               std::to_string(p.end_methods - p.end_back) +
               " had not compiled again when jmethodtime ended: they run interpreted until traffic compiles them, "
               "and a trace before then traps on them (" +
               standby + " waits for them)";
    if (p.end_deferred > 0)
        out += "\nThe end left the " + std::to_string(p.end_deferred) +
               " methods compiled during the trace with their probe calls (a call each, no trap without a "
               "tracer) until the JVM works again (" +
               std::to_string(JMT_AGENT_TRAFFIC_PERMILLE / 10) + "% of a CPU over " +
               format_duration(uint64_t(JMT_AGENT_TRAFFIC_WINDOW_MS) * 1'000'000) +
               "), when its agent takes them out: a quiet JVM keeps its compiled code, and the next trace traps as "
               "narrowly as this one";
    return out;
}

std::string run_queue_text(const Profile &profile)
{
    const Overhead &o = profile.overhead;
    if (!o.runq_share)
        return "";
    std::string text = "Run queue: the " + jvms_possessive(profile) + " threads waited " +
                       format_duration(*o.jvm_runq_ns) + " for a CPU against " + format_duration(o.jvm_cpu_ns) +
                       " on one (" + std::to_string(std::lround(100.0 * *o.runq_share)) + "% of their runnable time)";
    if (!o.saturated)
        return text;
    text += "; the CPUs were saturated";
    const std::optional<double> traps = o.trap_share;
    if (traps && *traps >= 0.5)
        text += ", largely by the probes' own traps (" + std::to_string(std::lround(100.0 * *traps)) + "% of the " +
                jvms_possessive(profile) + " CPU)";
    return text + ": elapsed times hold that wait (the RunQ columns), on-CPU times do not";
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

std::string format_bounded(uint64_t ns, const uint64_t (&bounds)[2])
{
    const uint64_t lo = std::min(bounds[0], ns), hi = std::max(bounds[1], ns);
    if (hi == 0)
        return format_duration(0);
    const uint64_t spread = std::max(hi - ns, ns - lo);
    if (lo == 0 || ns == 0 || spread >= ns)
        return "\u2264 " + format_duration(hi);
    const uint64_t percent = (spread * 100 + ns - 1) / ns;
    if (percent == 0)
        return format_duration(ns);
    return format_duration(ns) + " \u00b1" + std::to_string(percent) + "%";
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
    // The counters that have a text (diagnostic_texts.h), in its order; "{}" in a text stands for n.
    std::vector<DiagnosticCounter> lines;
    for (const DiagnosticText &t : kDiagnosticTexts) {
        std::string line = t.text;
        const size_t at = line.find("{}");
        if (at != std::string::npos)
            line.replace(at, 2, std::to_string(t.n));
        lines.push_back({t.name, d.*t.count, line});
    }
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
