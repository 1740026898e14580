// JVM discovery through /proc and libelf: where libjvm.so is, whether it has
// the hotspot probes, whether the running JVM enabled them.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jvm/probe_access.h"
#include "jvm/libjvm_file.h"
#include "util/procfs.h"

namespace jmt {

// One mapping of libjvm.so found in /proc/PID/maps.
struct LibjvmMapping {
    std::string path;    // as /proc/PID/maps names it (util/mapped_path.h)
    uint64_t start = 0;  // address of the mapping with file offset 0
    bool found = false;
    MapsEntry entry;  // that mapping's line
};

// Parses the text of /proc/PID/maps: the libjvm.so mapping with offset 0.
LibjvmMapping find_libjvm(const std::string &maps_text);

// pid's libjvm memory: the bias of mapping (info is its file's read), info's symbols.
std::shared_ptr<const class JvmMemory> libjvm_memory(int pid, const LibjvmMapping &mapping, const LibjvmInfo &info);
// The same for the libjvm.so pid's maps show now; null while none is mapped.
std::shared_ptr<const class JvmMemory> libjvm_memory(int pid, const LibjvmInfo &info);

// What the preflight found about a pid.
struct JvmTarget {
    int pid = 0;
    uint64_t start_ticks = 0;  // /proc/PID/stat's starttime when examined: the process pid names
    std::string comm;
    std::string command;                    // /proc/PID/cmdline, arguments joined by spaces
    std::string libjvm;                     // path usable from here (util/mapped_path.h)
    std::string libjvm_seen;                // path as the target opens it (its root, its mount namespace)
    std::string jdk_version;                // JAVA_VERSION of the JDK's release file; empty if unknown
    bool has_probes = false;                // libjvm has the hotspot method__entry/method__return notes
    bool probes_on = false;                 // the running JVM has DTraceMethodProbes (or the extended flag) on
    ProbeAccess access = ProbeAccess::Off;  // how a trace gets the probes (jvm/probe_access.h)
    std::string off_reason;                 // access Off: one line naming the cause and the fix
    int switch_owner = 0;                   // access Switched, LeftOn: the jmethodtime that switched the probes on
    uint32_t deferred_methods = 0;          // the last trace's methods still compiled with probe calls until traffic
    bool attach_disabled = false;           // -XX:+DisableAttachMechanism
    uint64_t libjvm_bias = 0;               // libjvm's vaddr 0 in the JVM's memory
    std::map<std::string, uint64_t> libjvm_symbols;         // of hotspot::kLibjvmSymbols, st_value
    std::optional<std::array<uint8_t, 7>> arg_regs;         // entry/return share one layout
    std::optional<std::array<uint8_t, 2>> unload_arg_regs;  // class__unloaded's name and length
    std::vector<uint64_t> probe_addrs;  // method__entry/method__return sites in its memory (attach mode)
    // Its libjvm's memory as read here, HotSpot's flag table read once (jvm/hotspot_flags.h);
    // null for a JDK not started yet (inspect_jdk).
    std::shared_ptr<const class JvmMemory> memory;
};

// Why a pid cannot be traced, in the preflight's order. ProbesOff: off, and
// they cannot be switched on (access Off); Busy: switched on for another
// jmethodtime that runs.
enum class TargetProblem { None, NoProcess, Unreadable, KernelThread, NotJvm, NoProbes, ProbesOff, Busy };

struct TargetStatus {
    JvmTarget target;
    TargetProblem problem = TargetProblem::None;
    std::string message;  // one line naming the cause and the fix; empty when None
    int err = 0;
};

// Never throws for a bad target: the problem and its message say what is wrong.
TargetStatus examine_target(int pid);

// examine_target, throwing jmt::Error with the message unless the JVM is traceable.
JvmTarget inspect_target(int pid);

// The JVM launch mode will run (java, resolved to its JDK's libjvm, not started
// yet): its libjvm's probes and their registers; throws jmt::Error naming the
// cause and the fix when the JDK has none. pid is 0 until it runs.
JvmTarget inspect_jdk(const std::string &java, const std::string &libjvm);

// Every JVM of the host (processes with libjvm.so mapped), by pid.
std::vector<JvmTarget> list_jvms();

// The pids of the JVMs of jvms whose command line matches pattern (a regular
// expression searched anywhere in it), in jvms' order, at most max; throws
// jmt::Error when none or more than max match, or when pattern is not a
// regular expression.
std::vector<int> pick_jvms(const std::vector<JvmTarget> &jvms, const std::string &pattern, size_t max);

// The JDK version a libjvm.so belongs to, from the release file of its JDK
// (JAVA_VERSION="17.0.13"); root_prefix is prepended to find the file (a
// ProcessView's prefix).
std::string jdk_version_of(const std::string &libjvm_seen, const std::string &root_prefix);

// The feature release of a JAVA_VERSION string ("17.0.15" -> 17, "1.8.0_392" -> 8,
// "21" -> 21); 0 when unknown.
int jdk_feature_release(const std::string &version);

// JDK 21 and later have virtual threads, which HotSpot's probes see on their carrier threads.
constexpr int kFirstJdkWithVirtualThreads = 21;

}  // namespace jmt
