#include "jvm/jvm.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include "jmethodtime.h"
#include "jvm/agent_state.h"
#include "jvm/elf_file.h"
#include "jvm/hotspot_flags.h"
#include "jvm/hotspot_symbols.h"
#include "util/error.h"
#include "util/mapped_path.h"

namespace jmt {

namespace {

bool ends_with(const std::string &s, const std::string &suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

LibjvmMapping find_libjvm(const std::string &maps_text)
{
    LibjvmMapping m;
    for (const MapsEntry &e : parse_maps(maps_text)) {
        if (e.offset != 0 || !ends_with(e.path, "/libjvm.so"))
            continue;
        m.path = e.path;
        m.start = e.start;
        m.found = true;
        m.entry = e;
        return m;
    }
    return m;
}

std::shared_ptr<const JvmMemory> libjvm_memory(int pid, const LibjvmMapping &mapping, const LibjvmInfo &info)
{
    return std::make_shared<const JvmMemory>(pid, load_bias(mapping.start, info.first_load_vaddr), info.symbols);
}

std::shared_ptr<const JvmMemory> libjvm_memory(int pid, const LibjvmInfo &info)
{
    const LibjvmMapping m = find_libjvm(read_file("/proc/" + std::to_string(pid) + "/maps"));
    return m.found ? libjvm_memory(pid, m, info) : nullptr;
}

namespace {

bool cmdline_enables_probes(int pid)
{
    std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::string environ = read_file("/proc/" + std::to_string(pid) + "/environ");
    for (const char *flag : {"-XX:+DTraceMethodProbes", "-XX:+ExtendedDTraceProbes"}) {
        if (cmdline.find(flag) != std::string::npos || environ.find(flag) != std::string::npos)
            return true;
    }
    return false;
}

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

}  // namespace

namespace {

// /proc/PID/cmdline with NULs as spaces.
std::string command_line(const std::string &proc)
{
    std::string cmd = read_file(proc + "/cmdline");
    while (!cmd.empty() && cmd.back() == '\0')
        cmd.pop_back();
    for (char &c : cmd)
        if (c == '\0')
            c = ' ';
    return cmd;
}

bool is_kernel_thread(const std::string &proc)
{
    // Field 9 of stat is flags; PF_KTHREAD = 0x00200000.
    const std::vector<std::string> f = stat_fields(read_file(proc + "/stat"));
    return f.size() > 9 - 3 && (std::strtoul(f[9 - 3].c_str(), nullptr, 10) & 0x00200000UL) != 0;
}

// The JDK of whose (a pid, or the java launch mode runs), at libjvm, has no method probes.
std::string no_probes_message(const std::string &whose, const std::string &libjvm)
{
    return "the JDK of " + whose + " (" + libjvm +
           ") was built without DTrace probes (no hotspot method__entry/method__return stapsdt notes): use a "
           "JDK built with --enable-dtrace, such as Debian's or Temurin's";
}

// The JVM of whose runs a libjvm built for another machine (under emulation, as
// qemu-user runs one): its probes trap only in its own machine's kernel.
std::string machine_mismatch_message(const std::string &whose, const std::string &libjvm, uint16_t machine)
{
    return "the JVM of " + whose + " (" + libjvm + ") is built for " + machine_name(machine) +
           " and this jmethodtime for " + machine_name(host_machine()) +
           ": run the jmethodtime built for the JVM's machine on a host of that machine";
}

std::string unquote(std::string v)
{
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
        v = v.substr(1, v.size() - 2);
    return v;
}

}  // namespace

std::string jdk_version_of(const std::string &libjvm_seen, const std::string &root_prefix)
{
    // JDK 9+: HOME/lib/server/libjvm.so; JDK 8: HOME/jre/lib/ARCH/server/libjvm.so.
    std::string dir = libjvm_seen;
    for (int up = 0; up < 5; up++) {
        size_t slash = dir.rfind('/');
        if (slash == std::string::npos || slash == 0)
            break;
        dir.resize(slash);
        std::istringstream in(read_file(root_prefix + dir + "/release"));
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("JAVA_VERSION=", 0) == 0)
                return unquote(line.substr(13));
    }
    return {};
}

namespace {

TargetStatus failed(TargetStatus st, TargetProblem p, const std::string &message, int err)
{
    st.problem = p;
    st.message = message;
    st.err = err;
    return st;
}

// The text of proc's maps; nullopt, with st's problem set, when it cannot be read.
std::optional<std::string> read_maps(const std::string &proc, const std::string &named, TargetStatus &st)
{
    std::string maps;
    std::ifstream in(proc + "/maps");
    int err = errno;
    if (in) {
        std::ostringstream ss;
        ss << in.rdbuf();
        maps = ss.str();
    }
    if (!maps.empty())
        return maps;
    if (is_kernel_thread(proc)) {
        st = failed(st, TargetProblem::KernelThread,
                    named + " is a kernel thread, not a JVM: give the pid of a java process (`jmethodtime --list`)",
                    EINVAL);
    } else if (!in) {
        if (err == 0)
            err = EACCES;
        st = failed(st, TargetProblem::Unreadable,
                    geteuid() != 0
                        ? "cannot read " + proc + "/maps (" + strerror(err) +
                              "): run jmethodtime as root (sudo), or as the JVM's user with "
                              "CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE"
                        : "cannot read " + proc + "/maps (" + strerror(err) + ") although running as root: " + named +
                              " holds privileges this process lacks, or a security module forbids "
                              "ptrace access to it; run jmethodtime where it may ptrace the JVM",
                    err);
    } else if (access(proc.c_str(), F_OK) != 0) {
        // The file opened but read nothing: the process is exiting, or access was refused on read.
        st = failed(st, TargetProblem::NoProcess, named + " exited: check the pid", ESRCH);
    } else {
        st = failed(st, TargetProblem::Unreadable,
                    "cannot read " + proc + "/maps: " +
                        (geteuid() != 0 ? std::string("run jmethodtime as root (sudo)")
                                        : std::string("access refused although running as root; run "
                                                      "jmethodtime where it may ptrace the JVM")),
                    EACCES);
    }
    return std::nullopt;
}

// Whether the running JVM has DTraceMethodProbes on: its flag byte in memory
// (libjvm's .symtab or HotSpot's flag table give its address), else its command line.
bool probes_enabled(int pid, const JvmMemory &memory)
{
    const std::optional<uint64_t> flag = memory.flag(hotspot::kDTraceMethodProbes);
    const std::optional<uint8_t> byte = flag ? memory.read_u8(*flag) : std::nullopt;
    return byte ? *byte != 0 : cmdline_enables_probes(pid);
}

// The JDK's feature release from its version string in the JVM's memory
// (Abstract_VM_Version::_s_vm_release, "17.0.15+6-Debian-1deb12u1"); 0 when unknown.
int vm_release_feature(const JvmMemory &memory)
{
    const std::optional<uint64_t> at = memory.symbol(hotspot::kVmRelease);
    const std::optional<uint64_t> str = at ? memory.read_u64(*at) : std::nullopt;
    return str ? jdk_feature_release(memory.read_string(*str, 64)) : 0;
}

// t.access, from the flag bytes (t.probes_on read already), the JDK release and jmethodtime's
// agent in the JVM (maps_text: its /proc/PID/maps, read by the preflight).
void decide_probe_access(JvmTarget &t, const JvmMemory &memory, const std::string &maps_text)
{
    AccessFacts f;
    f.pid = t.pid;
    f.has_probes = t.has_probes;
    f.flag_on = t.probes_on;
    f.flag_found = memory.flag(hotspot::kDTraceMethodProbes).has_value();
    f.jdk_feature = jdk_feature_release(t.jdk_version);
    if (!f.jdk_feature)
        f.jdk_feature = vm_release_feature(memory);
    if (const std::optional<uint64_t> at = memory.flag(hotspot::kDisableAttachMechanism))
        f.attach_disabled = t.attach_disabled = memory.read_u8(*at).value_or(0) != 0;
    if (const std::optional<uint64_t> at = memory.flag(hotspot::kEnableDynamicAgentLoading))
        f.dynamic_agents_off = memory.read_u8(*at).value_or(1) == 0;
    if (const std::optional<LoadedAgent> agent = find_agent(t.pid, maps_text)) {
        f.agent_loaded = true;
        // Deferred: the flag off, the last trace's compiled code waiting for traffic; as idle or
        // standby to the next trace, which takes it over.
        const bool deferred = agent->state.mode == JMT_AGENT_DEFERRED;
        f.agent_mode = !deferred              ? agent->state.mode
                       : agent->state.standby ? uint32_t(JMT_AGENT_STANDBY)
                                              : uint32_t(JMT_AGENT_IDLE);
        if (deferred)
            t.deferred_methods = std::max(agent->state.deferred, 1u);
        t.switch_owner = agent->state.owner_pid;
        // The agent's own watch on its owner's FIFO: a pid in another namespace would tell nothing.
        f.owner_alive = agent->state.watching != 0;
    }
    const Access a = decide_access(f);
    t.access = a.access;
    t.off_reason = a.off_reason;
}

}  // namespace

TargetStatus examine_target(int pid)
{
    TargetStatus st;
    JvmTarget &t = st.target;
    t.pid = pid;
    const std::string proc = "/proc/" + std::to_string(pid);
    const std::string who = "pid " + std::to_string(pid);
    if (access(proc.c_str(), F_OK) != 0)
        return failed(st, TargetProblem::NoProcess,
                      "no process with pid " + std::to_string(pid) + ": check the pid (e.g. `jmethodtime --list`)",
                      ESRCH);
    t.start_ticks = process_start_ticks(pid).value_or(0);
    t.comm = trim(read_file(proc + "/comm"));
    t.command = command_line(proc);
    const std::string named = who + " (" + t.comm + ")";
    const std::optional<std::string> maps = read_maps(proc, named, st);
    if (!maps)
        return st;
    const LibjvmMapping m = find_libjvm(*maps);
    if (!m.found)
        return failed(st, TargetProblem::NotJvm,
                      named + " is not a JVM: no libjvm.so is mapped; give the pid of a java process "
                              "(`jmethodtime --list`)",
                      EINVAL);
    // A container's paths through its root, a chroot's as they are (util/mapped_path.h).
    const ProcessView view = process_view(pid, m.entry);
    t.libjvm = mapped_file_here(pid, view, m.entry);
    t.libjvm_seen = view.own(m.path).empty() ? m.path : view.own(m.path);
    t.jdk_version = jdk_version_of(m.path, view.prefix);
    LibjvmInfo info;
    try {
        info = inspect_libjvm(t.libjvm);
    } catch (const Error &e) {
        return failed(st, TargetProblem::Unreadable, who + ": " + e.what(), e.error_number());
    }
    // The file read must be the one whose path was checked against the maps line: a libjvm.so
    // replaced at its path since would give another build's notes and symbols (the flag's address
    // among them). Read through map_files (no path matched), it is the mapping itself.
    if (const std::optional<FileId> mapped = maps_file_id(m.entry); view.verified && mapped && *mapped != info.file)
        return failed(st, TargetProblem::Unreadable,
                      named + "'s " + m.path + " was replaced while jmethodtime read it: run jmethodtime again",
                      ESTALE);
    if (info.machine != host_machine())
        return failed(st, TargetProblem::Unreadable, machine_mismatch_message(named, m.path, info.machine), ENOEXEC);
    if (!has_method_probes(info, &t.arg_regs)) {
        t.access = ProbeAccess::Missing;
        return failed(st, TargetProblem::NoProbes, no_probes_message(named, m.path), ENOTSUP);
    }
    t.has_probes = true;
    t.unload_arg_regs = class_unloaded_registers(info);
    t.memory = libjvm_memory(pid, m, info);
    t.libjvm_bias = t.memory->bias();
    t.libjvm_symbols = info.symbols;
    const JvmMemory &memory = *t.memory;
    t.probes_on = probes_enabled(pid, memory);
    for (const UsdtNote &note : info.notes)
        if (note.name == "method__entry" || note.name == "method__return")
            t.probe_addrs.push_back(t.libjvm_bias + note.location);
    try {
        decide_probe_access(t, memory, *maps);
    } catch (const Error &e) {
        return failed(st, TargetProblem::Unreadable, e.what(), e.error_number());
    }
    if (t.access == ProbeAccess::Off)
        return failed(st, TargetProblem::ProbesOff, t.off_reason, ENOTSUP);
    if (t.access == ProbeAccess::Switched)
        return failed(st, TargetProblem::Busy,
                      named + "'s method probes are switched on for jmethodtime pid " + std::to_string(t.switch_owner) +
                          ", which traces it: wait for it to end, or stop it",
                      EBUSY);
    return st;
}

JvmTarget inspect_jdk(const std::string &java, const std::string &libjvm)
{
    JvmTarget t;
    t.comm = "java";
    t.libjvm = t.libjvm_seen = libjvm;
    t.jdk_version = jdk_version_of(libjvm, "");
    const LibjvmInfo info = inspect_libjvm(libjvm);
    if (info.machine != host_machine())
        throw Error(machine_mismatch_message(java, libjvm, info.machine), ENOEXEC);
    if (!has_method_probes(info, &t.arg_regs))
        throw Error(no_probes_message(java, libjvm), ENOTSUP);
    t.has_probes = true;
    t.unload_arg_regs = class_unloaded_registers(info);
    return t;
}

JvmTarget inspect_target(int pid)
{
    TargetStatus st = examine_target(pid);
    if (st.problem != TargetProblem::None)
        throw Error(st.message, st.err);
    return st.target;
}

std::vector<JvmTarget> list_jvms()
{
    std::vector<int> pids;
    if (DIR *dir = opendir("/proc")) {
        while (struct dirent *e = readdir(dir)) {
            char *end = nullptr;
            long pid = strtol(e->d_name, &end, 10);
            if (pid > 0 && end && *end == '\0')
                pids.push_back(static_cast<int>(pid));
        }
        closedir(dir);
    }
    std::sort(pids.begin(), pids.end());
    std::vector<JvmTarget> jvms;
    for (int pid : pids) {
        if (pid == getpid())
            continue;
        TargetStatus st = examine_target(pid);
        if (st.problem == TargetProblem::None || st.problem == TargetProblem::NoProbes ||
            st.problem == TargetProblem::ProbesOff || st.problem == TargetProblem::Busy)
            jvms.push_back(st.target);
    }
    return jvms;
}

int jdk_feature_release(const std::string &version)
{
    size_t digits = 0;
    while (digits < version.size() && isdigit(static_cast<unsigned char>(version[digits])))
        digits++;
    if (digits == 0 || digits > 4)
        return 0;
    int major = std::stoi(version.substr(0, digits));
    if (major == 1 && version.size() > 2 && version[1] == '.')  // 1.8.0_392: JDK 8
        return jdk_feature_release(version.substr(2));
    return major;
}

std::vector<int> pick_jvms(const std::vector<JvmTarget> &jvms, const std::string &pattern, size_t max)
{
    std::regex re;
    try {
        re = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
        throw Error("--match '" + pattern + "' is not a regular expression (" + e.what() + ")", EINVAL);
    }
    std::vector<int> found;
    for (const JvmTarget &j : jvms)
        if (std::regex_search(j.command, re))
            found.push_back(j.pid);
    if (found.empty())
        throw Error("--match '" + pattern + "': no JVM's command line matches (jmethodtime --list shows them)", ESRCH);
    if (found.size() > max) {
        std::string pids;
        for (int pid : found)
            pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
        throw Error("--match '" + pattern + "' matches " + std::to_string(found.size()) + " JVMs (pids " + pids +
                        "), more than the " + std::to_string(max) + " one trace follows: narrow the pattern",
                    E2BIG);
    }
    return found;
}

}  // namespace jmt
