// How a running JVM's method probes can be had, decided from what was read in it
// (jvm/jvm.h) and never by changing it: the switch (control/probe_switch.h) acts on it.
#pragma once

#include <cstdint>
#include <string>

#include "jvm/agent_abi.h"

namespace jmt {

// How a JVM's method probes can be had.
enum class ProbeAccess {
    Missing,     // its JDK was built without the probes
    AtStart,     // started with -XX:+DTraceMethodProbes: every compiled method carries the probe calls
    Standby,     // started with the flag, on standby: switched on for each trace's classes
    Switchable,  // started without it, JDK 8 to 23: switched on for each trace's classes
    Switched,    // switched on now, for a jmethodtime that runs (switch_owner)
    LeftOn,      // switched on by a jmethodtime that ended without switching it off
    Off,         // cannot be had (off_reason)
};

// What decides it, read from the JVM.
struct AccessFacts {
    int pid = 0;
    bool has_probes = false;
    bool flag_on = false;             // the DTraceMethodProbes byte now
    bool flag_found = false;          // its address is known (.symtab or VMStructs)
    int jdk_feature = 0;              // 17, 25; 0 when unknown
    bool attach_disabled = false;     // -XX:+DisableAttachMechanism
    bool dynamic_agents_off = false;  // -XX:-EnableDynamicAgentLoading
    bool agent_loaded = false;        // jmethodtime's agent, with:
    uint32_t agent_mode = JMT_AGENT_IDLE;
    bool owner_alive = false;  // the jmethodtime that switched it runs
};

struct Access {
    ProbeAccess access = ProbeAccess::Off;
    std::string off_reason;  // Off, Missing: one line naming the cause and the fix
};

// The JDK release from which the interpreter's probe calls exist only when the flag is given at start.
constexpr int kFirstJdkWithFixedInterpreterProbes = 24;

Access decide_access(const AccessFacts &facts);

// --list's names: "enabled", "standby", "switchable", "traced", "left on", "off", "missing".
const char *access_name(ProbeAccess access);

}  // namespace jmt
