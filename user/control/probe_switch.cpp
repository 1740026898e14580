#include "control/probe_switch.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "control/agent.h"
#include "control/flag_write.h"
#include "jvm/hotspot_flags.h"
#include "jvm/hotspot_symbols.h"
#include "jvm/jvm.h"
#include "util/lifecycle.h"
#include "util/error.h"
#include "util/process_handle.h"
#include "util/procfs.h"

namespace jmt {

namespace {

constexpr uint64_t kSettlePollNs = 100'000'000;        // the agent's compile count, read this often
constexpr uint64_t kProgressPeriodNs = 1'000'000'000;  // the status line while waiting

std::string owner_field(const ProcessIdentity &self)
{
    return "owner=" + std::to_string(self.pid) + "." + std::to_string(self.start);
}

// The target's memory as examine_target read it (its VMStructs read once), else opened now.
std::shared_ptr<const JvmMemory> memory_of(const JvmTarget &t)
{
    return t.memory ? t.memory : std::make_shared<const JvmMemory>(t.pid, t.libjvm_bias, t.libjvm_symbols);
}

// Where the agent goes: /tmp, else libjvm's own directory.
AgentPlace place_of(const JvmTarget &t)
{
    AgentPlace place;
    place.start_ticks = t.start_ticks;
    place.lock_path = t.libjvm;
    place.attach_disabled = t.attach_disabled;
    const size_t slash = t.libjvm_seen.rfind('/');
    if (slash != std::string::npos && slash > 0)
        place.fallback_dir = t.libjvm_seen.substr(0, slash);
    return place;
}

uint64_t flag_address(const JvmMemory &memory)
{
    const std::optional<uint64_t> at = memory.flag(hotspot::kDTraceMethodProbes);
    if (!at)
        throw Error(who(memory.pid()) + ": DTraceMethodProbes is in neither libjvm's symbol table nor HotSpot's "
                                        "flag table: start the JVM with -XX:+DTraceMethodProbes",
                    ENOTSUP);
    return *at;
}

// Whether the next redefinition deoptimizes all compiled code: HotSpot has
// not recorded every dependency yet (JDK 22 and older, no agent at start).
// Unknown (no symbol): taken on those JDKs, where a needless one costs only a
// recompile; never from JDK 23, where every dependency is recorded.
bool full_deopt_pending(const JvmMemory &memory, int jdk_feature)
{
    if (const std::optional<uint64_t> at = memory.symbol(hotspot::kAllDependenciesRecorded))
        if (const std::optional<uint8_t> recorded = memory.read_u8(*at))
            return *recorded == 0;
    return jdk_feature > 0 && jdk_feature < 23;
}

std::string ms_text(double ms)
{
    char buf[32];
    snprintf(buf, sizeof(buf), ms < 10 ? "%.1f ms" : "%.0f ms", ms);
    return buf;
}

std::string seconds_text(double s)
{
    char buf[32];
    snprintf(buf, sizeof(buf), s < 10 ? "%.1f s" : "%.0f s", s);
    return buf;
}

}  // namespace

bool HotCode::cold() const
{
    return methods > 0 && static_cast<double>(methods - std::min(back, methods)) > kColdShare * methods;
}

std::string HotCode::cause_text() const
{
    switch (cause) {
    case JMT_OP_BEGIN: return "the one-time deoptimization of all compiled code";
    case JMT_OP_STANDBY: return "standby's deoptimization";
    case JMT_OP_RESTORE: return "the last trace's end";
    default: return "the agent's last deoptimization";
    }
}

CompileWait wait_for_compiles(int pid, const SwitchHooks &hooks, double max_s, const std::string &what)
{
    CompileWait out;
    const uint64_t start = monotonic_ns();
    const uint64_t limit = start + static_cast<uint64_t>(std::max(0.0, max_s) * 1e9);
    SettleWatch watch;
    uint64_t next_progress = start + kProgressPeriodNs;
    for (;;) {
        const uint64_t now = monotonic_ns();
        const std::optional<LoadedAgent> agent = find_agent(pid);
        if (!agent)
            throw Error(who(pid) + " exited", ESRCH);
        out.hot = HotCode(agent->state);
        watch.feed(now, agent->state.compiles);
        if (max_s <= 0 || watch.settled() || now >= limit) {
            out.settled = max_s <= 0 || watch.settled();
            break;
        }
        if (now >= next_progress && hooks.progress) {
            char line[224];
            snprintf(line, sizeof(line),
                     "Waiting for pid %d's compiles to settle %s: %.0f methods/s now, %u of %u hot methods compiled "
                     "again (%.0f s of at most %.0f)",
                     pid, what.c_str(), watch.rate_per_s(), out.hot.back, out.hot.methods,
                     static_cast<double>(now - start) / 1e9, max_s);
            hooks.progress(line);
            next_progress += kProgressPeriodNs;
        }
        if (!hooks.wait(std::min(limit, now + kSettlePollNs))) {
            out.stopped = true;
            break;
        }
    }
    out.seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
    return out;
}

void SettleWatch::feed(uint64_t now_ns, uint64_t compiles)
{
    samples_.emplace_back(now_ns, compiles);
    // Keep one sample at or before the window's start.
    while (samples_.size() > 2 && samples_[1].first + kSettleWindowNs <= now_ns)
        samples_.erase(samples_.begin());
}

bool SettleWatch::settled() const
{
    if (samples_.size() < 2)
        return false;
    const auto &first = samples_.front(), &last = samples_.back();
    return last.first - first.first >= kSettleWindowNs && last.second - first.second <= kSettleTrickle;
}

double SettleWatch::rate_per_s() const
{
    if (samples_.size() < 2 || samples_.back().first == samples_.front().first)
        return 0;
    return static_cast<double>(samples_.back().second - samples_.front().second) * 1e9 /
           static_cast<double>(samples_.back().first - samples_.front().first);
}

std::string agent_class_filter(const std::vector<std::string> &packages, const std::vector<std::string> &class_globs)
{
    if (packages.empty() && class_globs.empty())
        return "*";
    std::string items;
    for (const std::string &p : packages)
        items += (items.empty() ? "" : " ") + ("p:" + p);
    for (const std::string &g : class_globs)
        items += (items.empty() ? "" : " ") + ("g:" + g);
    // "op=switch;owner=PID.START;classes=" takes at most 64 bytes of the argument. Longer is
    // refused: every class instead would retransform the whole JVM.
    const size_t most = std::min<size_t>(JMT_AGENT_FILTER_MAX, JMT_AGENT_OPTIONS_MAX) - 64;
    if (items.size() > most)
        throw Error("the --package and --class filter makes " + std::to_string(items.size()) +
                        " bytes of the agent's class filter, over the " + std::to_string(most) +
                        " one request to a JVM without the flag takes: give fewer or shorter packages, or start "
                        "the JVM with -XX:+DTraceMethodProbes",
                    E2BIG);
    return items;
}

ProbeSwitch::ProbeSwitch(const JvmTarget &target, std::string classes)
    : jvm_(target.pid, target.start_ticks), classes_(std::move(classes)), place_(place_of(target))
{
    const std::shared_ptr<const JvmMemory> memory = memory_of(target);
    flag_addr_ = flag_address(*memory);
    if (target.access == ProbeAccess::LeftOn)
        report_.recovered = recover_switch(target);
    deopt_needed_ = full_deopt_pending(*memory, jdk_feature_release(target.jdk_version));
}

ProbeSwitch::~ProbeSwitch()
{
    if (began_ || flag_set_) {
        std::ostringstream notes;
        switch_off(notes);
        fputs(notes.str().c_str(), stderr);
    }
}

void ProbeSwitch::claim()
{
    if (began_)
        return;
    // Compiles are remembered from here, so that none made with the flag on is missed; the
    // agent watches watch_ from here, and restores by itself if it closes before a restore.
    agent_request(pid(),
                  "op=begin;" + owner_field(self_identity()) + ";flag=" + std::to_string(flag_addr_) +
                      (deopt_needed_ ? ";deopt=1" : ""),
                  place_, {}, &watch_);
    began_ = true;
    report_.full_deopt = deopt_needed_;
}

bool ProbeSwitch::switch_on(const SwitchHooks &hooks, double settle_max_s)
{
    const std::string owner = owner_field(self_identity());
    claim();
    const CompileWait w = wait_for_compiles(pid(), hooks, settle_max_s, "before switching its probes on");
    if (w.stopped)
        return false;
    report_.settled = w.settled;
    report_.settle_s = w.seconds;
    report_.hot = w.hot;
    agent_request(pid(), "op=arm;" + owner, place_);
    write_flag(jvm_, flag_addr_, 1);
    flag_set_ = true;
    const uint64_t switch_start = monotonic_ns();
    const jmt_agent_state st = agent_request(pid(), "op=switch;" + owner + ";classes=" + classes_, place_);
    report_.switch_ms = static_cast<double>(monotonic_ns() - switch_start) / 1e6;
    report_.classes = st.retransformed;
    report_.unmodifiable = st.unmodifiable;
    return true;
}

void ProbeSwitch::switch_off(std::ostream &notes)
{
    if (!began_ && !flag_set_)
        return;
    if (!jvm_.alive() || !process_start_ticks(pid())) {  // the JVM is gone (or a zombie), and its code with it
        began_ = flag_set_ = false;
        watch_.reset();
        return;
    }
    try {
        if (flag_set_)
            write_flag(jvm_, flag_addr_, 0);
        flag_set_ = false;
        const jmt_agent_state st = agent_request(pid(), "op=defer;" + owner_field(self_identity()), place_);
        began_ = false;
        watch_.reset();  // the agent's watch wakes, finds the JVM deferred or restored, and ends
        if (st.mode == JMT_AGENT_DEFERRED)
            report_.end_deferred = st.deferred;
        else
            report_.end_hot = HotCode(st);
    } catch (const Error &e) {
        watch_.reset();  // the agent's watch restores by itself
        if (jvm_.alive())
            notes << "jmethodtime: could not switch " << who(pid()) << "'s probes off: " << e.what()
                  << "; its agent switches them off itself, its owner's watch closed" << std::endl;
        began_ = flag_set_ = false;
    }
}

bool ProbeSwitch::end_pending() const
{
    const HotCode &end = report_.end_hot;
    return end.cause == JMT_OP_RESTORE && end.back < end.methods;
}

void ProbeSwitch::wait_end(const SwitchHooks &hooks, double settle_max_s)
{
    if (settle_max_s <= 0 || !end_pending())
        return;
    try {
        const CompileWait w = wait_for_compiles(pid(), hooks, settle_max_s, "after the trace's end");
        report_.end_hot = w.hot;
        report_.end_wait_s = w.seconds;
    } catch (const Error &) {
        // The JVM ended meanwhile: its code with it.
    }
}

std::string recover_switch(const JvmTarget &target)
{
    write_flag(ProcessHandle(target.pid, target.start_ticks), flag_address(*memory_of(target)), 0);
    const jmt_agent_state st = agent_request(target.pid, "op=restore", place_of(target));
    return "jmethodtime: " + who(target.pid) + "'s probes were left switched on by a jmethodtime (pid " +
           std::to_string(target.switch_owner) + ") that ended without switching them off: switched off (" +
           std::to_string(st.retransformed) + (st.retransformed == 1 ? " class" : " classes") + " retransformed)";
}

namespace {

// Whether the JVM's hot code is back after a deoptimization, in one line.
std::string readiness_line(int pid, const CompileWait &w)
{
    const std::string counts = std::to_string(w.hot.back) + " of its " + std::to_string(w.hot.methods) +
                               " hot methods compiled again in " + seconds_text(w.seconds);
    if (!w.hot.cold())
        return who(pid) + " is ready: " + counts +
               (w.settled && w.hot.back < w.hot.methods ? " (its compiles settled: the others are not called now)"
                                                        : "") +
               "; each trace now deoptimizes only its own classes and starts narrow, quiet or not";
    return who(pid) + " is not ready: " + counts +
           (w.settled ? ", and it compiles nothing now (no traffic)" : ", its compiles still running (--settle)") +
           ": the rest compile again with traffic, and a trace before then traps about as widely as the flag at start";
}

}  // namespace

std::string put_on_standby(const JvmTarget &target, const SwitchHooks &hooks, double settle_max_s)
{
    const JvmMemory &memory = *memory_of(target);
    const bool full = full_deopt_pending(memory, jdk_feature_release(target.jdk_version));
    const bool switchable = target.access == ProbeAccess::Switchable;
    std::string done;
    if (switchable && !full) {
        const std::optional<LoadedAgent> agent = find_agent(target.pid);
        if (!agent || HotCode(agent->state).methods == 0)
            return who(target.pid) +
                   " needs nothing ahead of a trace: HotSpot records its code's dependencies (JDK 23, "
                   "or a class redefined before), so each trace deoptimizes only its own classes";
        done = who(target.pid) +
               " needs no deoptimization ahead of a trace (HotSpot records its code's "
               "dependencies); waiting for the code " +
               HotCode(agent->state).cause_text() + " deoptimized to compile again";
    } else {
        const uint64_t flag = flag_address(memory);
        const ProcessHandle jvm(target.pid, target.start_ticks);
        if (!switchable)
            write_flag(jvm, flag, 0);
        const uint64_t start = monotonic_ns();
        jmt_agent_state st{};
        try {
            st = agent_request(target.pid, std::string("op=standby") + (full ? ";deopt=1" : ""), place_of(target));
        } catch (const Error &) {
            if (!switchable)
                write_flag(jvm, flag, 1);  // as found: its compiled code still has the calls
            throw;
        }
        const std::string how =
            (full ? std::string("all compiled code deoptimized once (one class retransformed)")
                  : std::to_string(st.retransformed) + " classes with compiled code retransformed") +
            " in " + ms_text(static_cast<double>(monotonic_ns() - start) / 1e6);
        done = switchable ? who(target.pid) + " took its one-time deoptimization ahead of traces: " + how
                          : who(target.pid) + " is on standby: DTraceMethodProbes off, " + how +
                                "; its code compiles again without probe calls, and each trace switches on only "
                                "its classes' code";
    }
    return done + "\n" + readiness_line(target.pid, wait_for_compiles(target.pid, hooks, settle_max_s, "after it"));
}

}  // namespace jmt
