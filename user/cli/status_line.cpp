#include "cli/status_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <set>

#include "cost/overhead.h"
#include "report/report.h"

namespace jmt {

namespace {

constexpr uint64_t kNsPerSec = 1000000000ULL;

}  // namespace

std::string status_line(const StatusFacts &f, size_t width)
{
    std::string text = std::to_string(f.elapsed_ns / kNsPerSec) + " s: " + format_count(f.events) + " probe events, " +
                       std::to_string(f.methods) + " methods traced";
    if (f.trap_share)
        text += ", traps " + std::to_string(std::lround(100.0 * *f.trap_share)) + "% of the JVM's CPU";
    for (size_t i = 0; i < f.losses.size(); i++)
        text += (i ? ", " : "; ") + f.losses[i].first + " " + format_count(f.losses[i].second);
    if (width > 0 && text.size() > width)
        text.resize(width);
    return text;
}

std::vector<std::pair<std::string, uint64_t>> loss_counts(const Diagnostics &diag)
{
    static const std::set<std::string> expected = {"unmatched_returns", "returns_unjudged", "cpu_clamped",
                                                   "switch_unseen"};
    std::vector<std::pair<std::string, uint64_t>> losses;
    for (auto &c : diagnostic_counts(diag))
        if (!expected.count(c.first))
            losses.push_back(std::move(c));
    return losses;
}

void ProgressLine::show(uint64_t elapsed_ns, const TraceProgress &p, std::optional<ProbeCost> cost)
{
    if (!enabled_)
        return;
    StatusFacts f;
    f.elapsed_ns = elapsed_ns;
    f.events = p.events.events;
    f.methods = p.methods;
    const Overhead window = overhead_since(p.events, window_start_);
    if (cost && window.jvm_cpu_ns > 0)
        f.trap_share = trap_share(window, *cost).value_or(0);  // no event in the window: 0%
    window_start_ = p.events;
    f.losses = loss_counts(p.diag);
    struct winsize ws {};
    // One column less than the terminal: a line that fills it exactly may wrap on some terminals.
    const size_t width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 0;
    std::fprintf(stderr, "\r\033[K%s", status_line(f, width).c_str());
    std::fflush(stderr);
    shown_ = true;
}

void ProgressLine::clear()
{
    if (shown_)
        std::fputs("\r\033[K", stderr);
    shown_ = false;
}

}  // namespace jmt
