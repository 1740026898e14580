// The traced JVMs whose probes a trace switches on at run time (control/probe_switch.h):
// switched on once the probes are attached, with the wait for compiles to settle shown on
// stderr, and off after they are detached, or on any way out (destruction).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "model/profile.h"
#include "jvm/jvm.h"
#include "control/probe_switch.h"

namespace jmt {

class SwitchedJvms {
public:
    // Makes this jmethodtime the one owner of each target whose access calls for a switch
    // (ProbeSwitch::claim), before its probes are attached. Throws jmt::Error (EBUSY: another
    // jmethodtime holds one; the ones claimed are let go).
    void claim(const std::vector<JvmTarget> &targets, const std::vector<std::string> &packages,
               const std::vector<std::string> &class_globs);
    // Switches on the targets whose access calls for it (Switchable, Standby, LeftOn) for the
    // classes packages and class_globs can match, each after its compiles settle (at most
    // settle_s); wait sleeps until a deadline and says false when the trace must stop. Their
    // figures go into info. Throws jmt::Error naming the cause (stopped meanwhile: nothing on).
    void switch_on(const std::vector<JvmTarget> &targets, const std::vector<std::string> &packages,
                   const std::vector<std::string> &class_globs, double settle_s,
                   const std::function<bool(uint64_t deadline_ns)> &wait, ProbesInfo &info);
    // Every switched JVM switched off; what went wrong goes to notes. With wait, then waits
    // (at most settle_s each) for the methods each end deoptimized to compile again, and
    // puts what came back into info.
    void switch_off(std::ostream &notes);
    void switch_off(std::ostream &notes, const std::function<bool(uint64_t deadline_ns)> &wait, double settle_s,
                    ProbesInfo &info);

private:
    // The switch of t: the one claim() made, else a new one (its recovery said on stderr).
    ProbeSwitch &switch_of(const JvmTarget &t, const std::vector<std::string> &packages,
                           const std::vector<std::string> &class_globs);

    std::vector<std::unique_ptr<ProbeSwitch>> switches_;
};

// Whether a trace of a JVM with this access switches its probes on at run time.
bool switched_at_run_time(ProbeAccess access);

}  // namespace jmt
