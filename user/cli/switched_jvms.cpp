#include "cli/switched_jvms.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "util/error.h"

namespace jmt {

namespace {

std::string seconds_text(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), s < 10 ? "%.1f s" : "%.0f s", s);
    return buf;
}

// "Switched pid N's method probes on ...": what the switch did, in one line.
std::string switched_line(int pid, const SwitchReport &r, double settle_s)
{
    std::string line = "Switched pid " + std::to_string(pid) + "'s method probes on for the filter's classes: " +
                       std::to_string(r.classes) + (r.classes == 1 ? " class" : " classes") + " retransformed in " +
                       std::to_string(std::lround(r.switch_ms)) + " ms";
    if (r.full_deopt)
        line += ", after the one-time deoptimization of all compiled code";
    if (settle_s > 0)
        line += r.settled ? ", once its compiles settled (" + seconds_text(r.settle_s) + ")"
                          : ", its compiles still running after " + seconds_text(r.settle_s) +
                                " (--settle): code compiling meanwhile traps too";
    return line;
}

}  // namespace

bool switched_at_run_time(ProbeAccess access)
{
    return access == ProbeAccess::Switchable || access == ProbeAccess::Standby || access == ProbeAccess::LeftOn;
}

void SwitchedJvms::switch_on(const std::vector<JvmTarget> &targets, const std::vector<std::string> &packages,
                             const std::vector<std::string> &class_globs, double settle_s,
                             const std::function<bool(uint64_t deadline_ns)> &wait, ProbesInfo &info)
{
    const std::string classes = agent_class_filter(packages, class_globs);
    const bool tty = isatty(STDERR_FILENO);
    bool shown = false;
    SwitchHooks hooks;
    hooks.progress = [tty, &shown](const std::string &line) {
        if (tty) {
            std::cerr << "\r" << line << "\033[K" << std::flush;
            shown = true;
        }
    };
    hooks.wait = wait;
    for (const JvmTarget &t : targets) {
        if (!switched_at_run_time(t.access)) {
            info.access = info.access.empty() || info.access == "at_start" ? "at_start" : "mixed";
            continue;
        }
        switches_.push_back(std::make_unique<ProbeSwitch>(t, classes));
        ProbeSwitch &sw = *switches_.back();
        if (!sw.report().recovered.empty())
            std::cerr << sw.report().recovered << std::endl;
        if (settle_s > 0 && !tty)
            std::cerr << "Waiting for pid " << t.pid << "'s compiles to settle (at most " << seconds_text(settle_s)
                      << ") before switching its probes on" << std::endl;
        const bool on = sw.switch_on(hooks, settle_s);
        if (shown)
            std::cerr << "\r\033[K" << std::flush;
        if (!on)
            throw Error("stopped while waiting for pid " + std::to_string(t.pid) +
                            "'s compiles to settle: nothing was traced, and its probes are as they were",
                        EINTR);
        const SwitchReport &r = sw.report();
        std::cerr << switched_line(t.pid, r, settle_s) << std::endl;
        info.access = info.access.empty() || info.access == "switched" ? "switched" : "mixed";
        info.classes += r.classes;
        info.unmodifiable += r.unmodifiable;
        info.settle_s = std::max(info.settle_s, r.settle_s);
        info.settled = info.settled && r.settled;
    }
}

void SwitchedJvms::switch_off(std::ostream &notes)
{
    for (auto &sw : switches_)
        sw->switch_off(notes);
}

}  // namespace jmt
