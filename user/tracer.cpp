#include "tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "error.h"
#include "jmethodtime.h"
#include "jmethodtime.skel.h"
#include "jvm.h"
#include "preemption.h"

namespace jmt {

namespace {

bool g_verbose = false;

int print_libbpf(enum libbpf_print_level level, const char *format, va_list args)
{
    if (!g_verbose && level != LIBBPF_WARN)
        return 0;
    if (!g_verbose)
        return 0;  // warnings become jmt::Error messages instead
    return vfprintf(stderr, format, args);
}

std::string errno_text(int err)
{
    return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

// A name as the kernel stored it, completed from the target's memory when the
// kernel buffer was too short or the kernel's read failed.
std::string bytes_or_memory(int pid, uint64_t addr, uint32_t full_len, const char *buf, uint32_t buf_len,
                            bool read_ok, uint64_t &truncated)
{
    if (full_len <= buf_len && read_ok)
        return std::string(buf, full_len);
    std::string full = read_target_memory(pid, addr, full_len);
    if (!full.empty())
        return full;
    truncated++;
    return std::string(buf, buf_len) + "...";
}

MethodStats to_method_stats(const jmt_method_stats &s)
{
    MethodStats m;
    m.calls = s.calls;
    m.wall_incl_ns = s.wall_incl_ns;
    m.wall_excl_ns = s.wall_excl_ns;
    m.cpu_incl_ns = s.cpu_incl_ns;
    m.cpu_excl_ns = s.cpu_excl_ns;
    m.unreturned = s.unreturned;
    m.events_incl = s.events_incl;
    m.events_excl = s.events_excl;
    m.traced_incl = s.traced_incl;
    m.traced_excl = s.traced_excl;
    return m;
}

}  // namespace

void SkeletonDeleter::operator()(jmethodtime_bpf *skel) const
{
    jmethodtime_bpf__destroy(skel);
}

void LinkDeleter::operator()(bpf_link *link) const
{
    bpf_link__destroy(link);
}

SkeletonPtr load_programs(const ProgramConfig &config)
{
    g_verbose = config.verbose;
    libbpf_set_print(print_libbpf);

    SkeletonPtr skel(jmethodtime_bpf__open());
    if (!skel) {
        int err = errno;
        throw Error("cannot open the BPF object: " + errno_text(err), err);
    }
    auto *ro = skel->rodata;
    ro->target_tgid = static_cast<__u32>(config.pid);
    ro->n_prefixes = static_cast<__u32>(config.packages.size());
    for (size_t i = 0; i < config.packages.size() && i < JMT_MAX_PREFIXES; i++) {
        const std::string &p = config.packages[i];
        ro->prefixes[i].len = static_cast<__u32>(p.size());
        for (size_t j = 0; j < p.size() && j < JMT_PREFIX_LEN; j++)
            const_cast<char &>(ro->prefixes[i].s[j]) = p[j];
    }
    static const bool atomic_totals = kernel_preemption() != Preemption::Off;
    ro->atomic_totals = atomic_totals ? 1 : 0;
    if (config.verbose)
        std::fprintf(stderr, "jmethodtime: per-CPU totals use %s adds (kernel preemption %s)\n",
                     atomic_totals ? "atomic" : "plain", atomic_totals ? "on or unknown" : "off");
    if (config.arg_regs) {
        ro->fast_args = 1;
        for (size_t i = 0; i < config.arg_regs->size(); i++)
            const_cast<__u8 &>(ro->arg_reg[i]) = (*config.arg_regs)[i];
    }

    if (jmethodtime_bpf__load(skel.get())) {
        int err = errno;
        if (err == EPERM || err == EACCES)
            throw Error("not allowed to load BPF programs: run jmethodtime as root (or with CAP_BPF, "
                        "CAP_PERFMON and CAP_SYS_PTRACE)", err);
        throw Error("the kernel refused the BPF programs: " + errno_text(err) +
                        "; a kernel >= 5.15 with BTF is needed (run with -v for the verifier log)",
                    err);
    }
    return skel;
}

LinkPtr attach_usdt(bpf_program *prog, int pid, const std::string &binary, const char *provider,
                    const char *probe)
{
    bpf_link *link = bpf_program__attach_usdt(prog, pid, binary.c_str(), provider, probe, nullptr);
    if (link)
        return LinkPtr(link);
    int err = errno;
    const std::string what = std::string("attaching ") + provider + ":" + probe;
    if (err == EINVAL)
        throw Error(what + " failed with EINVAL: another tracer (a bcc tool such as ucalls or trace) "
                           "probably holds this probe with a different semaphore offset; stop it and retry",
                    err);
    if (err == ESRCH || err == ENOENT)
        throw Error(what + " failed: the process exited or " + binary + " is gone (" + errno_text(err) + ")",
                    err);
    throw Error(what + " in " + binary + " failed: " + errno_text(err), err);
}

Tracer::Tracer(const TracerConfig &config) : config_(config)
{
    const int pid = config.programs.pid;
    skel_ = load_programs(config.programs);
    links_.push_back(attach_usdt(skel_->progs.handle_entry, pid, config.libjvm, "hotspot", "method__entry"));
    links_.push_back(attach_usdt(skel_->progs.handle_return, pid, config.libjvm, "hotspot", "method__return"));
    bpf_link *sw = bpf_program__attach(skel_->progs.handle_switch);
    if (!sw) {
        int err = errno;
        throw Error("cannot attach to the sched_switch BTF tracepoint: " + errno_text(err), err);
    }
    links_.emplace_back(sw);
    bpf_link *exit_link = bpf_program__attach(skel_->progs.handle_exit);
    if (!exit_link) {
        int err = errno;
        throw Error("cannot attach to the sched_process_exit BTF tracepoint: " + errno_text(err), err);
    }
    links_.emplace_back(exit_link);
}

Tracer::~Tracer() = default;

Snapshot Tracer::snapshot() const
{
    Snapshot snap;
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0)
        throw Error("cannot count the possible CPUs", -ncpu);

    std::vector<jmt_cpu> per_cpu_counters(static_cast<size_t>(ncpu));
    __u64 counters[JMT_CNT_NR] = {};
    const __u32 zero = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.cpu_state), &zero, per_cpu_counters.data()) == 0)
        for (const jmt_cpu &cpu : per_cpu_counters)
            for (int c = 0; c < JMT_CNT_NR; c++)
                counters[c] += cpu.counters[c];
    Diagnostics &d = snap.diag;
    d.entries = counters[JMT_CNT_ENTRIES];
    d.returns = counters[JMT_CNT_RETURNS];
    d.traced_calls = counters[JMT_CNT_TRACED_CALLS];
    d.depth_overflow = counters[JMT_CNT_DEPTH_OVERFLOW];
    d.unmatched_returns = counters[JMT_CNT_UNMATCHED_RETURNS];
    d.dropped_frames = counters[JMT_CNT_DROPPED_FRAMES];
    d.thread_state_fail = counters[JMT_CNT_THREAD_STATE_FAIL];
    d.method_table_full = counters[JMT_CNT_METHOD_TABLE_FULL];
    d.names_fail = counters[JMT_CNT_NAMES_FAIL];
    d.arg_fail = counters[JMT_CNT_ARG_FAIL];
    d.threads_traced = counters[JMT_CNT_THREADS_TRACED];
    d.threads_ended = counters[JMT_CNT_THREADS_ENDED];

    std::vector<jmt_method_stats> per_cpu(static_cast<size_t>(ncpu));
    int stats_fd = bpf_map__fd(skel_->maps.stats);
    int names_fd = bpf_map__fd(skel_->maps.names);
    __u32 last = skel_->bss->last_method_id;
    if (last >= JMT_MAX_METHODS)
        last = JMT_MAX_METHODS - 1;
    jmt_names n;
    for (__u32 id = 1; id <= last; id++) {
        if (bpf_map_lookup_elem(stats_fd, &id, per_cpu.data()))
            continue;
        MethodStats total;
        for (const auto &s : per_cpu)
            total += to_method_stats(s);
        if (total.calls == 0)
            continue;
        MethodRow row;
        row.stats = total;
        if (bpf_map_lookup_elem(names_fd, &id, &n) == 0) {
            row.klass = bytes_or_memory(config_.programs.pid, n.class_addr, n.class_len, n.klass, JMT_CLASS_BUF,
                                        n.read_ok, d.truncated_names);
            row.method = bytes_or_memory(config_.programs.pid, n.method_addr, n.method_len, n.method,
                                         JMT_METHOD_BUF, n.read_ok, d.truncated_names);
            row.signature = bytes_or_memory(config_.programs.pid, n.sig_addr, n.sig_len, n.sig, JMT_SIG_BUF,
                                            n.read_ok, d.truncated_names);
        } else {
            row.klass = "[unknown method #" + std::to_string(id) + "]";
        }
        snap.methods.push_back(std::move(row));
    }
    return snap;
}

}  // namespace jmt
