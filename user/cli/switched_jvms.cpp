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
    std::string line = "Switched pid " + std::to_string(pid) +
                       "'s method probes on for the filter's classes: " + std::to_string(r.classes) +
                       (r.classes == 1 ? " class" : " classes") + " retransformed in " +
                       std::to_string(std::lround(r.switch_ms)) + " ms";
    if (r.full_deopt)
        line += ", after the one-time deoptimization of all compiled code";
    if (settle_s > 0)
        line += r.settled ? ", once its compiles settled (" + seconds_text(r.settle_s) + ")"
                          : ", its compiles still running after " + seconds_text(r.settle_s) +
                                " (--settle): code compiling meanwhile traps too";
    if (r.hot.methods > 0)
        line += "; " + std::to_string(r.hot.back) + " of its " + std::to_string(r.hot.methods) +
                " hot methods compiled again since " + r.hot.cause_text();
    return line;
}

// A switch onto a JVM whose hot code is still interpreted, in one line.
std::string cold_line(int pid, const HotCode &hot)
{
    return "jmethodtime: pid " + std::to_string(pid) + "'s code is still interpreted (" + std::to_string(hot.back) +
           " of its " + std::to_string(hot.methods) + " hot methods compiled again since " + hot.cause_text() +
           "): this trace traps about as widely as the flag at start; `jmethodtime standby -p " + std::to_string(pid) +
           "` ahead of time, or traffic during the switch, avoids it";
}

// The status line on a terminal, and the way to clear it.
struct StatusLine {
    bool tty = isatty(STDERR_FILENO);
    bool shown = false;
    SwitchHooks hooks(const std::function<bool(uint64_t)> &wait)
    {
        SwitchHooks h;
        h.progress = [this](const std::string &line) {
            if (tty) {
                std::cerr << "\r" << line << "\033[K" << std::flush;
                shown = true;
            }
        };
        h.wait = wait;
        return h;
    }
    void clear()
    {
        if (shown)
            std::cerr << "\r\033[K" << std::flush;
        shown = false;
    }
};

}  // namespace

bool switched_at_run_time(ProbeAccess access)
{
    return access == ProbeAccess::Switchable || access == ProbeAccess::Standby || access == ProbeAccess::LeftOn;
}

void SwitchedJvms::claim(const std::vector<JvmTarget> &targets, const std::vector<std::string> &packages,
                         const std::vector<std::string> &class_globs)
{
    for (const JvmTarget &t : targets)
        if (switched_at_run_time(t.access))
            switch_of(t, packages, class_globs).claim();
}

ProbeSwitch &SwitchedJvms::switch_of(const JvmTarget &t, const std::vector<std::string> &packages,
                                     const std::vector<std::string> &class_globs)
{
    for (const auto &sw : switches_)
        if (sw->pid() == t.pid)
            return *sw;
    switches_.push_back(std::make_unique<ProbeSwitch>(t, agent_class_filter(packages, class_globs)));
    ProbeSwitch &sw = *switches_.back();
    if (!sw.report().recovered.empty())
        std::cerr << sw.report().recovered << std::endl;
    return sw;
}

void SwitchedJvms::switch_on(const std::vector<JvmTarget> &targets, const std::vector<std::string> &packages,
                             const std::vector<std::string> &class_globs, double settle_s,
                             const std::function<bool(uint64_t deadline_ns)> &wait, ProbesInfo &info)
{
    StatusLine status;
    const SwitchHooks hooks = status.hooks(wait);
    for (const JvmTarget &t : targets) {
        if (!switched_at_run_time(t.access)) {
            info.access = info.access.empty() || info.access == "at_start" ? "at_start" : "mixed";
            continue;
        }
        ProbeSwitch &sw = switch_of(t, packages, class_globs);
        if (settle_s > 0 && !status.tty)
            std::cerr << "Waiting for pid " << t.pid << "'s compiles to settle (at most " << seconds_text(settle_s)
                      << ") before switching its probes on" << std::endl;
        const bool on = sw.switch_on(hooks, settle_s);
        status.clear();
        if (!on)
            throw Error("stopped while waiting for pid " + std::to_string(t.pid) +
                            "'s compiles to settle: nothing was traced, and its probes are as they were",
                        EINTR);
        const SwitchReport &r = sw.report();
        std::cerr << switched_line(t.pid, r, settle_s) << std::endl;
        if (r.hot.cold()) {
            std::cerr << cold_line(t.pid, r.hot) << std::endl;
            info.cold = true;
            info.cold_cause = r.hot.cause_text();
        }
        info.hot_methods += r.hot.methods;
        info.hot_back += r.hot.back;
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

void SwitchedJvms::switch_off(std::ostream &notes, const std::function<bool(uint64_t deadline_ns)> &wait,
                              double settle_s, ProbesInfo &info)
{
    StatusLine status;
    const SwitchHooks hooks = status.hooks(wait);
    for (auto &sw : switches_) {
        sw->switch_off(notes);
        if (settle_s > 0 && sw->end_pending()) {
            if (!status.tty)
                std::cerr << "Waiting for pid " << sw->pid() << "'s code deoptimized at the trace's end to compile "
                          << "again (at most " << seconds_text(settle_s) << "): traffic compiles it" << std::endl;
            sw->wait_end(hooks, settle_s);
            status.clear();
        }
        const SwitchReport &r = sw->report();
        info.end_methods += r.end_hot.methods;
        info.end_back += r.end_hot.back;
        info.end_cold = info.end_cold || r.end_hot.cold();
        info.end_deferred += r.end_deferred;
        if (r.end_deferred > 0)
            std::cerr << "Switched pid " << sw->pid() << "'s method probes off: the " << r.end_deferred
                      << " methods compiled during the trace keep their probe calls until traffic, when its agent "
                         "takes them out"
                      << std::endl;
        if (r.end_hot.methods > 0)
            std::cerr << "Switched pid " << sw->pid() << "'s method probes off: " << r.end_hot.back << " of the "
                      << r.end_hot.methods << " methods compiled during the trace compiled again without probe calls"
                      << (r.end_wait_s > 0 ? " in " + seconds_text(r.end_wait_s) : std::string()) << std::endl;
    }
}

}  // namespace jmt
