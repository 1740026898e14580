// HotSpot's method probes switched on in a running JVM for one trace's classes
// only, and off again after it; and standby, which leaves a JVM started with
// -XX:+DTraceMethodProbes as cheap as one started without it.
//
// C1 and C2 read DTraceMethodProbes when they compile a method; up to JDK 23
// the interpreter and the native wrappers read it at every call. With the
// flag byte set (through /proc/PID/mem) and the filter's classes retransformed
// by the agent (control/agent.h), HotSpot deoptimizes the code that depends on
// them, which runs interpreted and compiles again with the probe calls: only
// the filter's code, and what compiles while the trace lasts, traps. At the
// end the flag goes off, and the agent retransforms the classes of every method
// compiled meanwhile (those have the probe calls) once traffic is back (DEFER:
// a quiet JVM keeps that code, its probe calls cheap without a tracer, and the
// next trace traps as narrowly). The counts of the traced methods are exact
// from the switch on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "control/agent.h"
#include "jvm/agent_state.h"
#include "jvm/probe_access.h"
#include "jvm/agent_abi.h"
#include "util/process_handle.h"
#include "util/unique_fd.h"

namespace jmt {

struct JvmTarget;

// Waits until the JVM's compiling settles: at most kSettleTrickle methods
// compiled over the last kSettleWindowNs. Fed the agent's compile count.
class SettleWatch {
public:
    static constexpr uint64_t kSettleWindowNs = 2'000'000'000ULL;
    static constexpr uint64_t kSettleTrickle = 2;
    void feed(uint64_t now_ns, uint64_t compiles);
    bool settled() const;
    // Methods compiled over the last window (per second), for the status line.
    double rate_per_s() const;

private:
    std::vector<std::pair<uint64_t, uint64_t>> samples_;  // (ns, compiles), the last window's
};

// The agent's class filter: "*" (every class: no --package or --class), else
// "p:PKG" and "g:GLOB" items. Throws jmt::Error (E2BIG) when the list is longer
// than one attach argument takes: widened to every class it would retransform the
// whole JVM.
std::string agent_class_filter(const std::vector<std::string> &packages, const std::vector<std::string> &class_globs);

// The JVM's hot code as the agent knows it: the methods that had compiled code
// when the agent last deoptimized it (cause: the one-time full deoptimization,
// standby's, or a trace's end), and how many of them have compiled again since.
struct HotCode {
    uint32_t methods = 0;
    uint32_t back = 0;
    uint32_t cause = JMT_OP_NONE;  // enum jmt_agent_op: BEGIN, STANDBY, RESTORE
    HotCode() = default;
    explicit HotCode(const jmt_agent_state &st) : methods(st.hot), back(st.hot_back), cause(st.hot_cause) {}
    // More than kColdShare of them still interpreted: a switch now traps about as widely as the flag at start.
    bool cold() const;
    // "the one-time deoptimization of all compiled code", "standby's deoptimization", "the last trace's end".
    std::string cause_text() const;
};
// Of a JVM's hot methods, the share not compiled again above which its code is said to be still
// interpreted. Under traffic a good part never comes back (start-up code: on Tomcat 1,209 of 2,977
// after the full deoptimization, once compiles settled); on a quiet JVM next to none does.
constexpr double kColdShare = 0.9;

// What a wait for compiles ended with.
struct CompileWait {
    bool stopped = false;  // hooks.wait said stop
    bool settled = true;   // false: the limit came first
    double seconds = 0;
    HotCode hot;  // at its end
};

// What a switch (or standby) did, for the header and the docs.
struct SwitchReport {
    std::string recovered;      // a switch left on by an earlier jmethodtime, put back first: the line saying so
    bool full_deopt = false;    // the one-time full deoptimization was taken (JDK 22 and older)
    double settle_s = 0;        // waited for compiles to settle
    bool settled = true;        // false: --settle's limit came first
    uint32_t classes = 0;       // classes retransformed by the switch
    uint32_t unmodifiable = 0;  // classes the filter takes that cannot be (hidden classes)
    double switch_ms = 0;       // the switch's retransform, as the tool waited for it
    HotCode hot;                // when the flag went on: cold() says the trace traps about as the flag at start
    HotCode end_hot;            // after the end's restore and the wait for its methods (end_wait_s)
    double end_wait_s = 0;
    uint32_t end_deferred = 0;  // the end's methods left with probe calls until traffic (DEFER)
};

// The session's side of the wait for compiles to settle.
struct SwitchHooks {
    std::function<void(const std::string &)> progress;  // a status line (may be empty)
    std::function<bool(uint64_t deadline_ns)> wait;     // sleeps until deadline; false: stop now
};

// Polls pid's agent until its compiles settle (SettleWatch), at most max_s seconds, with a
// status line each second that says what (e.g. "before switching its probes on") and how
// many hot methods have compiled again. Throws jmt::Error when the JVM is gone.
CompileWait wait_for_compiles(int pid, const SwitchHooks &hooks, double max_s, const std::string &what);

class ProbeSwitch {
public:
    // For a Switchable or Standby JVM (or LeftOn: put back first).
    ProbeSwitch(const JvmTarget &target, std::string classes);
    // Switched on: switched off, and problems said on notes, never thrown.
    ~ProbeSwitch();
    ProbeSwitch(const ProbeSwitch &) = delete;
    ProbeSwitch &operator=(const ProbeSwitch &) = delete;

    // Makes this jmethodtime the JVM's one owner (the agent's BEGIN, with its watch): before any
    // probe is attached, so that of two tracers started at once the second is refused here, in
    // one line, before it touches anything. Takes the one-time deoptimization where needed.
    // Throws jmt::Error (EBUSY: another jmethodtime that runs holds the JVM).
    void claim();
    // claim() if not done, waits for compiles to
    // settle (at most settle_max_s; 0: not at all), sets the flag and switches
    // the filter's classes. False when hooks.wait said stop: nothing is on then.
    // Throws jmt::Error naming the cause and the fix.
    bool switch_on(const SwitchHooks &hooks, double settle_max_s);
    // Flag off, the classes retransformed again once traffic is back (the agent's DEFER), or now
    // where the agent cannot watch for it; what went wrong goes to notes.
    void switch_off(std::ostream &notes);
    // After switch_off: whether methods it deoptimized (compiled during the trace) have not
    // compiled again; wait_end waits for them (at most settle_max_s), into report().end_hot.
    bool end_pending() const;
    void wait_end(const SwitchHooks &hooks, double settle_max_s);
    const SwitchReport &report() const { return report_; }
    int pid() const { return jvm_.pid(); }

private:
    ProcessHandle jvm_;  // the JVM as examined: every write and request checks it is still that process
    std::string classes_;
    AgentPlace place_;
    uint64_t flag_addr_ = 0;
    bool deopt_needed_ = false;
    bool began_ = false;     // the agent remembers compiles
    bool flag_set_ = false;  // the flag byte is ours to clear
    UniqueFd watch_;         // the owner's FIFO: the agent restores by itself once it closes unrestored
    SwitchReport report_;
};

// A switch left on by a jmethodtime that ended without switching it off, put
// back: flag off, classes retransformed. Returns the line that says so.
std::string recover_switch(const JvmTarget &target);

// Puts a JVM started with -XX:+DTraceMethodProbes on standby: flag off, its
// compiled code deoptimized once (every class with compiled code
// retransformed, or, where HotSpot has not recorded every dependency yet, one
// class, which deoptimizes all). A Switchable JVM (flag off already) whose
// next redefinition deoptimizes all takes that one-time deoptimization now.
// Either then waits (at most settle_max_s) for its hot code to compile again
// under the traffic of the moment. Returns the lines that say what it did and
// whether the JVM is ready: later traces deoptimize only their own classes.
std::string put_on_standby(const JvmTarget &target, const SwitchHooks &hooks, double settle_max_s);

}  // namespace jmt
