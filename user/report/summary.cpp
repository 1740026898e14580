#include "report/summary.h"

#include <set>
#include <tuple>

#include "report/report.h"

namespace jmt {

namespace {

// "12 methods, 3456 calls", or split by thread "12 methods in 3 threads, 3456 calls".
std::string methods_text(const Profile &profile)
{
    std::set<std::tuple<std::string, std::string, std::string>> methods;
    std::set<uint64_t> threads;
    uint64_t calls = 0;
    for (const MethodRow &m : profile.methods) {
        methods.emplace(m.klass, m.method, m.signature);
        if (row_thread(m))
            threads.insert(row_thread(m));
        calls += m.stats.calls;
    }
    std::string text = std::to_string(methods.size()) + (methods.size() == 1 ? " method" : " methods");
    if (per_thread_profile(profile))
        text += " in " + std::to_string(threads.size()) + (threads.size() == 1 ? " thread" : " threads");
    return text + ", " + std::to_string(calls) + (calls == 1 ? " call" : " calls");
}

}  // namespace

std::vector<std::string> summary_lines(const Profile &profile)
{
    std::vector<std::string> lines = {traced_text(profile)};
    if (profile.overhead.events > 0)
        lines.push_back(overhead_text(profile));
    if (profile.overhead.saturated)
        lines.push_back(run_queue_text(profile));
    // The switch's warnings (code still interpreted, a cold spot left): the lines after the first.
    const std::string probes = probes_text(profile);
    for (size_t at = probes.find('\n'); at != std::string::npos;) {
        const size_t next = probes.find('\n', at + 1);
        lines.push_back(probes.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1));
        at = next;
    }
    lines.push_back(profile.methods.empty() ? nothing_traced_text(profile) : methods_text(profile));
    const auto counts = diagnostic_counts(profile.diag);
    if (!counts.empty()) {
        std::string warn = "Diagnostics (see the report):";
        for (size_t i = 0; i < counts.size(); i++)
            warn += (i ? ", " : " ") + counts[i].first + " " + std::to_string(counts[i].second);
        lines.push_back(warn);
    }
    return lines;
}

bool summary_wanted(bool report_to_file, bool stdout_is_terminal) { return report_to_file || !stdout_is_terminal; }

}  // namespace jmt
