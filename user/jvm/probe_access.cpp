#include "jvm/probe_access.h"

namespace jmt {

Access decide_access(const AccessFacts &f)
{
    Access a;
    const std::string named = "pid " + std::to_string(f.pid);
    if (!f.has_probes) {
        a.access = ProbeAccess::Missing;
        return a;
    }
    if (f.agent_loaded && (f.agent_mode == JMT_AGENT_TRACKING || f.agent_mode == JMT_AGENT_SWITCHED)) {
        a.access = f.owner_alive ? ProbeAccess::Switched : ProbeAccess::LeftOn;
        return a;
    }
    if (f.flag_on) {
        a.access = ProbeAccess::AtStart;
        return a;
    }
    if (f.agent_loaded && f.agent_mode == JMT_AGENT_STANDBY) {
        a.access = ProbeAccess::Standby;
        return a;
    }
    const std::string restart = "restart it with -XX:+DTraceMethodProbes (then `jmethodtime standby -p " +
                                std::to_string(f.pid) +
                                "` keeps it cheap until traced), or start it with "
                                "`jmethodtime [options] -- java ...`";
    a.access = ProbeAccess::Off;
    if (!f.flag_found)
        a.off_reason = named +
                       " runs with the method probes off, and its libjvm has neither a symbol table nor "
                       "HotSpot's flag table to switch them on: " +
                       restart;
    else if (f.jdk_feature == 0)
        a.off_reason = named +
                       " runs with the method probes off, and its JDK version cannot be told (no release "
                       "file, no version string): " +
                       restart;
    else if (f.jdk_feature >= kFirstJdkWithFixedInterpreterProbes)
        a.off_reason = named + " runs JDK " + std::to_string(f.jdk_feature) +
                       " with the method probes off: from JDK 24 the interpreter has its probe calls only when "
                       "started with the flag, so a switch at run time would miss interpreted calls; " +
                       restart;
    else if (f.attach_disabled)
        a.off_reason = named +
                       " runs with the method probes off and -XX:+DisableAttachMechanism, and jmethodtime "
                       "switches them on through HotSpot's attach mechanism: restart it without that flag, "
                       "or " +
                       restart.substr(std::string("restart it ").size());
    else if (f.dynamic_agents_off)
        a.off_reason = named +
                       " runs with the method probes off and -XX:-EnableDynamicAgentLoading, and jmethodtime "
                       "switches them on through a small agent: restart it without that flag, or " +
                       restart.substr(std::string("restart it ").size());
    else
        a.access = ProbeAccess::Switchable;
    return a;
}

const char *access_name(ProbeAccess access)
{
    switch (access) {
    case ProbeAccess::Missing: return "missing";
    case ProbeAccess::AtStart: return "enabled";
    case ProbeAccess::Standby: return "standby";
    case ProbeAccess::Switchable: return "switchable";
    case ProbeAccess::Switched: return "traced";
    case ProbeAccess::LeftOn: return "left on";
    case ProbeAccess::Off: return "off";
    }
    return "?";
}

}  // namespace jmt
