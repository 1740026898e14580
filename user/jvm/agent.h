// jmethodtime's JVMTI agent in a target JVM (jvm/agent/jmt_agent.c): placing
// it where the JVM can load it, asking it to retransform classes through
// HotSpot's attach "load" command, and reading its state from the JVM's memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jvm/agent/agent_abi.h"
#include "jvm/attach.h"
#include "util/unique_fd.h"

namespace jmt {

// The agent loaded in a JVM: its state and the path the JVM loaded it from.
struct LoadedAgent {
    jmt_agent_state state{};
    std::string path;  // as the JVM opens it (its root, its mount namespace)
};

// The agent loaded in pid, from /proc/PID/maps and its memory; nullopt when
// none is. Throws jmt::Error when one is loaded but of another ABI version.
std::optional<LoadedAgent> find_agent(int pid);

// Whether dir is a private directory the agent is placed in: an absolute path ending in
// ".jmethodtime-" and 16 hex digits.
bool is_agent_dir(const std::string &dir);

// Where the agent may go in the JVM's mount namespace, and how to reach the JVM.
struct AgentPlace {
    bool attach_disabled = false;  // -XX:+DisableAttachMechanism: refused at once
    // Tried when the JVM cannot map the agent from /tmp (mounted noexec): the directory of
    // its libjvm.so, as it sees it. Either must be a directory only root can change.
    std::string fallback_dir;
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
