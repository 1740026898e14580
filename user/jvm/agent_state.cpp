#include "jvm/agent_state.h"

#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "agent_image.h"
#include "jvm/elf_file.h"
#include "util/error.h"
#include "util/mapped_path.h"
#include "util/procfs.h"

namespace jmt {

namespace {

// Where jmt_agent_state is in the agent's image: its st_value in .dynsym, and
// the first PT_LOAD's vaddr, which the mapping at offset 0 starts at.
struct StateSymbol {
    uint64_t value = 0;
    uint64_t first_load = 0;
};

const StateSymbol &state_symbol()
{
    static const StateSymbol sym = [] {
        StateSymbol out;
        if (elf_version(EV_CURRENT) == EV_NONE)
            throw Error("libelf initialisation failed");
        Elf *elf = elf_memory(const_cast<char *>(reinterpret_cast<const char *>(kAgentImage)), sizeof(kAgentImage));
        bool found = false;
        const std::vector<GElf_Phdr> loads = elf_loads(elf);
        if (!loads.empty())
            out.first_load = loads.front().p_vaddr;
        for_each_symbol(elf, {SHT_DYNSYM}, [&](const GElf_Sym &s, const char *name) {
            if (!found && strcmp(name, JMT_AGENT_STATE_SYMBOL) == 0) {
                out.value = s.st_value;
                found = true;
            }
        });
        elf_end(elf);
        if (!found)
            throw Error("the embedded agent has no " JMT_AGENT_STATE_SYMBOL " symbol: a broken build");
        return out;
    }();
    return sym;
}

}  // namespace

AgentImage agent_image() { return {kAgentImage, sizeof(kAgentImage)}; }

bool is_agent_dir(const std::string &dir)
{
    const size_t slash = dir.rfind('/');
    if (dir.empty() || dir[0] != '/' || slash == std::string::npos)
        return false;
    const std::string name = dir.substr(slash + 1);
    const size_t prefix = sizeof(kAgentDirPrefix) - 1;
    return name.size() == prefix + kAgentDirRandomHex && name.compare(0, prefix, kAgentDirPrefix) == 0 &&
           name.find_first_not_of("0123456789abcdef", prefix) == std::string::npos &&
           dir.find("/../") == std::string::npos && dir.find("/./") == std::string::npos;
}

std::optional<LoadedAgent> find_agent(int pid)
{
    return find_agent(pid, read_file("/proc/" + std::to_string(pid) + "/maps"));
}

std::optional<LoadedAgent> find_agent(int pid, const std::string &maps_text)
{
    const std::vector<MapsEntry> maps = parse_maps(maps_text);
    // The loaded agent has code mapped: a dlopen that failed (a /tmp mounted noexec) may
    // leave the file's first mapping behind, without it.
    auto executable = [&maps](const MapsEntry &file) {
        for (const MapsEntry &e : maps)
            if (e.dev == file.dev && e.inode == file.inode && e.perms.find('x') != std::string::npos)
                return true;
        return false;
    };
    for (const MapsEntry &e : maps) {
        const size_t slash = e.path.rfind('/');
        if (e.offset != 0 || slash == std::string::npos || e.path.substr(slash + 1) != kAgentFile ||
            !is_agent_dir(e.path.substr(0, slash)) || !executable(e))
            continue;
        const StateSymbol &sym = state_symbol();
        const std::string bytes =
            read_target_memory(pid, load_bias(e.start, sym.first_load) + sym.value, sizeof(jmt_agent_state));
        if (bytes.size() != sizeof(jmt_agent_state))
            return std::nullopt;
        LoadedAgent agent;
        memcpy(&agent.state, bytes.data(), sizeof(agent.state));
        // The path the JVM loaded it by, which later requests name again (a chroot's maps show ours).
        const std::string own = process_view(pid, maps).own(e.path);
        agent.path = own.empty() ? e.path : own;
        if (agent.state.magic != JMT_AGENT_MAGIC || agent.state.abi != JMT_AGENT_ABI_VERSION)
            throw Error("pid " + std::to_string(pid) + " holds a jmethodtime agent of another version (" + e.path +
                            "): use the jmethodtime that loaded it, or restart the JVM",
                        EPROTO);
        return agent;
    }
    return std::nullopt;
}

ProcessIdentity self_identity()
{
    ProcessIdentity id;
    id.pid = getpid();
    id.start = process_start_ticks(id.pid).value_or(0);
    return id;
}

}  // namespace jmt
