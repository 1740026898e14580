// jmethodtime's JVMTI agent in a target JVM (control/agent/jmt_agent.c): placing
// it where the JVM can load it and asking it to retransform classes through
// HotSpot's attach "load" command. Reading its state: jvm/agent_state.h.
#pragma once

#include <cstdint>
#include <string>

#include "jvm/agent_abi.h"
#include "jvm/agent_state.h"
#include "control/attach.h"
#include "util/unique_fd.h"

namespace jmt {

// Where the agent may go in the JVM's mount namespace, and how to reach the JVM.
struct AgentPlace {
    uint64_t start_ticks = 0;      // the JVM's start (/proc/PID/stat): a process with its pid later is not it
    bool attach_disabled = false;  // -XX:+DisableAttachMechanism: refused at once
    // Tried when the JVM cannot map the agent from /tmp (mounted noexec), or its /tmp is not a
    // directory only root can change (a link, say): the directory of its libjvm.so, as it sees
    // it. Either must be a directory only root can change.
    std::string fallback_dir;
    // The JVM's libjvm.so, as a path usable here: agent requests to one JVM from any number of
    // tracers take an exclusive flock on it, one at a time (two first loads would place two
    // copies of the agent, each with a state of its own). Empty: no lock.
    std::string lock_path;
};

// Sends options (agent_abi.h) to pid's agent, placing it first, and returns
// its state after the request. Throws jmt::Error naming the cause and the fix
// when the JVM refuses the agent or the agent reports a failure. watch (BEGIN
// only): a FIFO is made beside the agent and named in the request ("watch="),
// and its write end goes to *watch: while it is open the agent knows its owner lives.
jmt_agent_state agent_request(int pid, const std::string &options, const AgentPlace &place,
                              const AttachLimits &limits = {}, UniqueFd *watch = nullptr);

// What an agent's failure means, in words: "JVMTI error 99 (RetransformClasses)".
std::string agent_error_text(const jmt_agent_state &state);

}  // namespace jmt
