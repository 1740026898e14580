// Other tracers on the probes jmethodtime attaches to. Every probe event runs
// every attached program, so a second tracer makes each event dearer than the
// calibration measured. Seen two ways:
// - BPF links of type perf event on a uprobe at the same file and offset as
//   ours (kernel 6.6+ reports their file and offset): another jmethodtime, or
//   another libbpf tool; their owner is named from /proc/*/fdinfo (link_id);
// - a breakpoint byte (0xCC) at a probe site in the JVM's memory before we
//   attach: any uprobe (bcc, bpftrace, perf probe), owner unknown; the
//   processes with a perf event open are named as candidates.
// After we attach, the breakpoint is ours too: a later tracer is seen by its
// link, and counted when its command line names the JVM's pid (names_pid).
// Not seen: uprobe_multi links (BPF_LINK_TYPE_UPROBE_MULTI), and a later
// tracer of every process (no pid on its command line).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace jmt {

struct ProbeHolder {
    int pid = 0;
    std::string comm;
    std::vector<std::string> args;  // its command line
};

// Whether a command line names pid as its target: an argument that is the pid,
// or --pid=PID / -pPID (jmethodtime -p PID, bpftrace -p PID, bcc tools' PID).
// A uprobe link does not say which process it traces, and a libjvm's probe
// sites are the same for every JVM of the host: this tells a tracer of our
// JVM from a tracer of another one.
bool names_pid(const std::vector<std::string> &args, int pid);

// The holders whose command line names pid.
std::vector<ProbeHolder> tracing_pid(const std::vector<ProbeHolder> &holders, int pid);

// A uprobe site: the file (device, inode) and the offset in it.
struct UprobeSite {
    uint64_t dev = 0, ino = 0, offset = 0;
    bool operator<(const UprobeSite &o) const
    {
        return dev != o.dev ? dev < o.dev : ino != o.ino ? ino < o.ino : offset < o.offset;
    }
};

// The uprobe sites in the file at path of the links this process holds, and
// the ids of all its links (libbpf's USDT links have no fd of their own: the
// process's bpf-link fds are read instead).
std::set<UprobeSite> own_uprobe_sites(const std::string &path, std::set<uint32_t> &own_ids);

// Processes other than this one that hold a perf-event link on one of sites
// (links in own_ids excluded), whatever process they trace; one entry per pid.
std::vector<ProbeHolder> link_holders(const std::set<UprobeSite> &sites, const std::set<uint32_t> &own_ids);

// Processes other than this one with a perf event open.
std::vector<ProbeHolder> perf_event_holders();

// True when the byte at addr in pid's memory is an int3 breakpoint.
bool breakpoint_at(int pid, uint64_t addr);

// "pid 123 (java), pid 456 (bpftrace)".
std::string holders_text(const std::vector<ProbeHolder> &holders);

}  // namespace jmt
