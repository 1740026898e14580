#include "kernel/programs.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jmethodtime.h"
#include "jmethodtime.skel.h"
#include "kernel/preemption.h"
#include "util/error.h"

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

}  // namespace

std::string errno_text(int err)
{
    return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

void SkeletonDeleter::operator()(jmethodtime_bpf *skel) const
{
    jmethodtime_bpf__destroy(skel);
}

void LinkDeleter::operator()(bpf_link *link) const
{
    bpf_link__destroy(link);
}

uint32_t percpu_entries(uint64_t value_size, int ncpu, uint32_t limit)
{
    if (ncpu <= 0 || value_size == 0)
        return limit;
    const uint64_t fit = JMT_PERCPU_BUDGET / (value_size * static_cast<uint64_t>(ncpu));
    return static_cast<uint32_t>(std::max<uint64_t>(2, std::min<uint64_t>(limit, fit)));
}

uint64_t test_trap_ns()
{
    const char *value = getenv("JMT_TEST_TRAP_NS");
    if (!value || !*value)
        return 0;
    char *end = nullptr;
    errno = 0;
    const unsigned long long ns = strtoull(value, &end, 10);
    if (errno || *end || ns > kMaxTestTrapNs)
        throw Error(std::string("JMT_TEST_TRAP_NS='") + value + "' is not a whole number of ns from 0 to " +
                    std::to_string(kMaxTestTrapNs) + " (a test setting: unset it)");
    return ns;
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
    auto set_globs = [ro](int kind, const std::vector<std::string> &globs, const char *what) {
        if (globs.size() > JMT_MAX_GLOBS)
            throw Error(std::string("at most ") + std::to_string(JMT_MAX_GLOBS) + " " + what + " globs");
        for (size_t i = 0; i < globs.size(); i++) {
            const std::string &g = globs[i];
            if (g.size() >= JMT_GLOB_LEN)
                throw Error(std::string(what) + " glob '" + g + "' is longer than " +
                            std::to_string(JMT_GLOB_LEN - 1) + " bytes");
            const_cast<__u32 &>(ro->globs[kind][i].len) = static_cast<__u32>(g.size());
            for (size_t j = 0; j < g.size(); j++)
                const_cast<char &>(ro->globs[kind][i].s[j]) = g[j];
        }
    };
    set_globs(JMT_GLOB_CLASS, config.class_globs, "--class");
    set_globs(JMT_GLOB_METHOD, config.method_globs, "--method");
    ro->n_class_globs = static_cast<__u32>(config.class_globs.size());
    ro->n_method_globs = static_cast<__u32>(config.method_globs.size());
    ro->per_thread = config.per_thread ? 1 : 0;
    ro->test_trap_ns = test_trap_ns();
    bpf_program__set_autoload(skel->progs.handle_return, !config.per_thread);
    bpf_program__set_autoload(skel->progs.handle_return_t, config.per_thread);
    // Per-CPU totals sized to the host: see JMT_PERCPU_BUDGET.
    const int ncpu = libbpf_num_possible_cpus();
    const uint32_t methods = percpu_entries(sizeof(jmt_method_stats), ncpu, JMT_MAX_METHODS);
    // Path ids 2..paths-1 name call paths (0: none, 1: [truncated]).
    const uint32_t paths = percpu_entries(sizeof(jmt_method_stats), ncpu,
                                          config.max_paths ? std::min<uint32_t>(config.max_paths + 2, JMT_MAX_PATHS)
                                                           : JMT_MAX_PATHS);
    bpf_map__set_max_entries(skel->maps.stats, methods);
    ro->max_method_ids = methods;
    ro->max_path_ids = paths;
    if (config.call_paths)
        bpf_map__set_max_entries(skel->maps.path_stats, paths);
    ro->call_paths = config.call_paths ? 1 : 0;
    ro->foreign = config.foreign ? 1 : 0;
    if (!config.call_paths) {
        bpf_map__set_max_entries(skel->maps.path_ids, 1);
        bpf_map__set_max_entries(skel->maps.path_stats, 1);
        bpf_map__set_max_entries(skel->maps.path_cache, 1);
    }
    if (!config.per_thread) {
        // Unused: keep their bucket arrays (MBs) from being allocated.
        bpf_map__set_max_entries(skel->maps.thread_stats, 1);
        bpf_map__set_max_entries(skel->maps.thread_names, 1);
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

bpf_program *return_program(jmethodtime_bpf *skel)
{
    return bpf_program__autoload(skel->progs.handle_return_t) ? skel->progs.handle_return_t
                                                               : skel->progs.handle_return;
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

std::vector<LinkPtr> attach_entry_return(bpf_program *entry, bpf_program *ret, int pid, const std::string &binary,
                                         const char *provider)
{
    std::vector<LinkPtr> links;
    links.push_back(attach_usdt(entry, pid, binary, provider, "method__entry"));
    links.push_back(attach_usdt(ret, pid, binary, provider, "method__return"));
    return links;
}

}  // namespace jmt
