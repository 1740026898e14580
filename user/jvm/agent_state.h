// jmethodtime's JVMTI agent as seen from outside a JVM: whether one is loaded,
// its state read from the JVM's memory, and whether the jmethodtime that owns it
// still runs. Placing it and sending it requests: control/agent.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "jvm/agent_abi.h"

namespace jmt {

// The agent's shared object as the tool embeds it (control/agent/jmt_agent.c).
struct AgentImage {
    const unsigned char *bytes = nullptr;
    size_t size = 0;
};
AgentImage agent_image();

// The agent's file name, and its private directory's name: kAgentDirPrefix and
// kAgentDirRandomHex hex digits.
constexpr char kAgentFile[] = "libjmtagent.so";
constexpr char kAgentDirPrefix[] = ".jmethodtime-";
constexpr size_t kAgentDirRandomHex = 16;

// Whether dir is a private directory the agent is placed in: an absolute path ending in
// kAgentDirPrefix and kAgentDirRandomHex hex digits.
bool is_agent_dir(const std::string &dir);

// The agent loaded in a JVM: its state and the path the JVM loaded it from.
struct LoadedAgent {
    jmt_agent_state state{};
    std::string path;  // as the JVM opens it (its root, its mount namespace)
};

// The agent loaded in pid, from /proc/PID/maps (maps_text: that file's text, read
// already) and its memory; nullopt when none is. Throws jmt::Error when one is
// loaded but of another ABI version.
std::optional<LoadedAgent> find_agent(int pid, const std::string &maps_text);
std::optional<LoadedAgent> find_agent(int pid);

// This process as the agent's owner: pid and start time (clock ticks after boot).
struct ProcessIdentity {
    int pid = 0;
    uint64_t start = 0;
};
ProcessIdentity self_identity();

}  // namespace jmt
