#include "loader/programs.h"

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "jmethodtime.h"
#include "jmethodtime.skel.h"
#include "loader/compat_object.h"
#include "jvm/libjvm_file.h"
#include "loader/kernel_features.h"
#include "util/error.h"
#include "util/procfs.h"

namespace jmt {

namespace {

bool g_verbose = false;
std::mutex g_warnings_mutex;
std::vector<std::string> g_warnings;  // libbpf's warnings not yet taken (take_libbpf_warnings)

// -v: every libbpf message on stderr as it comes; otherwise its warnings are
// kept for the tracer to say once it runs (a failure's one-line error says
// what failed instead), its debug and info messages dropped.
int print_libbpf(enum libbpf_print_level level, const char *format, va_list args)
{
    if (g_verbose)
        return vfprintf(stderr, format, args);
    if (level != LIBBPF_WARN)
        return 0;
    char line[kLibbpfLineBytes];
    vsnprintf(line, sizeof(line), format, args);
    std::lock_guard<std::mutex> lock(g_warnings_mutex);
    g_warnings.emplace_back(line);
    return 0;
}

}  // namespace

std::vector<std::string> take_libbpf_warnings()
{
    std::lock_guard<std::mutex> lock(g_warnings_mutex);
    return std::exchange(g_warnings, {});
}

std::string errno_text(int err) { return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")"; }

void SkeletonDeleter::operator()(jmethodtime_bpf *skel) const { jmethodtime_bpf__destroy(skel); }

void LinkDeleter::operator()(bpf_link *link) const { bpf_link__destroy(link); }

uint32_t percpu_entries(uint64_t value_size, int ncpu, uint32_t limit)
{
    if (ncpu <= 0 || value_size == 0)
        return limit;
    const uint64_t fit = JMT_PERCPU_BUDGET / (value_size * static_cast<uint64_t>(ncpu));
    return static_cast<uint32_t>(std::max<uint64_t>(2, std::min<uint64_t>(limit, fit)));
}

uint32_t cache_slots(uint64_t value_size, int ncpu, uint32_t limit)
{
    if (ncpu <= 0 || value_size == 0)
        return limit;
    uint32_t slots = limit;
    while (slots > JMT_MIN_CACHE_SLOTS && uint64_t{slots} * value_size * static_cast<uint64_t>(ncpu) > JMT_CACHE_BUDGET)
        slots /= 2;
    return slots;
}

uint32_t spill_entries(int ncpu)
{
    constexpr uint64_t kSpillBudget = 4ull << 20;  // bytes
    const uint64_t per_entry = sizeof(jmt_method_stats) * static_cast<uint64_t>(std::max(ncpu, 1));
    return static_cast<uint32_t>(std::clamp<uint64_t>(kSpillBudget / per_entry, 16, JMT_TOTALS_SPILL));
}

namespace {

// Tests only: the whole number in environment variable name (of unit, "" for a
// count), 0 when unset; throws jmt::Error for one outside lo..hi.
uint64_t test_setting(const char *name, const char *unit, uint64_t lo, uint64_t hi)
{
    const char *value = getenv(name);
    if (!value || !*value)
        return 0;
    char *end = nullptr;
    errno = 0;
    const unsigned long long n = strtoull(value, &end, 10);
    if (errno || *end || n < lo || n > hi)
        throw Error(std::string(name) + "='" + value + "' is not a whole number" + unit + " from " +
                    std::to_string(lo) + " to " + std::to_string(hi) + " (a test setting: unset it)");
    return n;
}

}  // namespace

uint64_t test_trap_ns() { return test_setting("JMT_TEST_TRAP_NS", " of ns", 0, kMaxTestTrapNs); }

uint32_t test_thread_rows()
{
    return static_cast<uint32_t>(test_setting("JMT_TEST_THREAD_ROWS", "", 2, JMT_MAX_THREAD_ROWS));
}

uint32_t test_overflow_entries()
{
    return static_cast<uint32_t>(test_setting("JMT_TEST_OVERFLOW_ENTRIES", "", 1, JMT_TOTALS_OVERFLOW));
}

bool test_chunks_frozen() { return test_setting("JMT_TEST_FREEZE_CHUNKS", "", 0, 1) == 1; }

uint32_t test_snapshot_pause_ms()
{
    return static_cast<uint32_t>(test_setting("JMT_TEST_SNAPSHOT_PAUSE_MS", " of ms", 0, 100));
}

namespace {

// The rodata of what to trace: the JVMs, the packages and the globs.
void set_filters(jmethodtime_bpf *skel, const ProgramConfig &config)
{
    auto *ro = skel->rodata;
    if (config.other_pids.size() + 1 > JMT_MAX_TARGETS)
        throw Error("at most " + std::to_string(JMT_MAX_TARGETS) + " JVMs in one trace", E2BIG);
    ro->n_targets = static_cast<__u32>(config.other_pids.size() + 1);
    const_cast<__u32 &>(ro->target_tgids[0]) = static_cast<__u32>(config.pid);
    for (size_t i = 0; i < config.other_pids.size(); i++)
        const_cast<__u32 &>(ro->target_tgids[i + 1]) = static_cast<__u32>(config.other_pids[i]);
    ro->filter_tgids = config.filter_by_process ? 1 : 0;
    ro->n_prefixes = static_cast<__u32>(config.packages.size());
    for (size_t i = 0; i < config.packages.size() && i < JMT_MAX_PREFIXES; i++) {
        const std::string &p = config.packages[i];
        ro->prefixes[i].len = static_cast<__u32>(p.size());
        for (size_t j = 0; j < p.size() && j < JMT_PREFIX_LEN; j++)
            const_cast<char &>(ro->prefixes[i].s[j]) = p[j];
    }
    auto set_globs = [ro](jmt_glob_kind kind, const std::vector<std::string> &globs, const char *what) {
        if (globs.size() > JMT_MAX_GLOBS)
            throw Error(std::string("at most ") + std::to_string(JMT_MAX_GLOBS) + " " + what + " globs");
        for (size_t i = 0; i < globs.size(); i++) {
            const std::string &g = globs[i];
            if (g.size() >= JMT_GLOB_LEN)
                throw Error(std::string(what) + " glob '" + g + "' is longer than " + std::to_string(JMT_GLOB_LEN - 1) +
                            " bytes");
            const_cast<__u32 &>(ro->globs[kind][i].len) = static_cast<__u32>(g.size());
            for (size_t j = 0; j < g.size(); j++)
                const_cast<char &>(ro->globs[kind][i].s[j]) = g[j];
        }
    };
    set_globs(JMT_GLOB_CLASS, config.class_globs, "--class");
    set_globs(JMT_GLOB_METHOD, config.method_globs, "--method");
    ro->n_class_globs = static_cast<__u32>(config.class_globs.size());
    ro->n_method_globs = static_cast<__u32>(config.method_globs.size());
    if (config.class_globs.empty() && config.method_globs.empty())
        bpf_map__set_max_entries(skel->maps.rejected_classes, 1);  // counts classes globs reject
}

// The maps' sizes and the id limits and cache masks that go with them.
void size_maps(jmethodtime_bpf *skel, const ProgramConfig &config)
{
    auto *ro = skel->rodata;
    // Id limits within JMT_PERCPU_BUDGET; the totals' chunks are made as ids are
    // handed out (loader/totals_chunks.h), so only the limits are fixed here.
    const int ncpu = libbpf_num_possible_cpus();
    const uint32_t methods = percpu_entries(
        sizeof(jmt_method_stats), ncpu,
        config.max_methods ? std::min<uint32_t>(config.max_methods + 1, JMT_MAX_METHODS) : JMT_MAX_METHODS);
    // Path ids 2..paths-1 name call paths (0: none, 1: [truncated]).
    const uint32_t paths =
        percpu_entries(sizeof(jmt_path_stats), ncpu,
                       config.max_paths ? std::min<uint32_t>(config.max_paths + 2, JMT_MAX_PATHS) : JMT_MAX_PATHS);
    // Row ids 1..rows-1 name (thread, method) rows under --per-thread (not per CPU).
    uint32_t rows = 1;
    if (config.per_thread) {
        const uint32_t test_rows = test_thread_rows();
        rows = test_rows ? test_rows : JMT_MAX_THREAD_ROWS;
    }
    const auto chunks_for = [](uint32_t ids) { return (ids + JMT_TOTALS_CHUNK - 1) / JMT_TOTALS_CHUNK; };
    bpf_map__set_max_entries(skel->maps.stats, chunks_for(methods));
    bpf_map__set_max_entries(skel->maps.methods, config.method_keys ? config.method_keys : JMT_MAX_METHOD_KEYS);
    bpf_map__set_max_entries(skel->maps.names, methods);
    const uint32_t overflow_ids = std::min<uint32_t>(JMT_TOTALS_OVERFLOW, methods + (config.call_paths ? paths : 0) +
                                                                              (config.per_thread ? rows : 0));
    const uint32_t test_overflow = test_overflow_entries();
    bpf_map__set_max_entries(skel->maps.totals_overflow, test_overflow ? test_overflow : overflow_ids);
    bpf_map__set_max_entries(skel->maps.totals_spill, std::min(spill_entries(ncpu), overflow_ids));
    ro->max_method_ids = methods;
    ro->max_path_ids = paths;
    ro->max_row_ids = rows;
    // Caches within JMT_CACHE_BUDGET: fewer slots on hosts with many CPUs.
    const uint32_t slot_limit = config.cache_slots ? config.cache_slots : JMT_METHOD_CACHE_SLOTS;
    const uint32_t method_slots = cache_slots(bpf_map__value_size(skel->maps.method_cache), ncpu, slot_limit);
    bpf_map__set_max_entries(skel->maps.method_cache, method_slots);
    ro->method_cache_mask = method_slots - 1;
    if (config.call_paths) {
        const uint32_t path_slots = cache_slots(bpf_map__value_size(skel->maps.path_cache), ncpu,
                                                std::min<uint32_t>(slot_limit, JMT_PATH_CACHE_SLOTS));
        bpf_map__set_max_entries(skel->maps.path_stats, chunks_for(paths));
        bpf_map__set_max_entries(skel->maps.path_ids, paths);
        bpf_map__set_max_entries(skel->maps.path_cache, path_slots);
        ro->path_cache_mask = path_slots - 1;
    } else {
        bpf_map__set_max_entries(skel->maps.path_ids, 1);
        bpf_map__set_max_entries(skel->maps.path_stats, 1);
        bpf_map__set_max_entries(skel->maps.path_cache, 1);
        ro->path_cache_mask = 0;
    }
    bpf_map__set_max_entries(skel->maps.row_stats, chunks_for(rows));
    bpf_map__set_max_entries(skel->maps.row_ids, rows);
    if (!config.per_thread)
        bpf_map__set_max_entries(skel->maps.thread_names, 1);  // unused: no bucket array (MBs)
}

// The skeleton opened on the main object, or on the compat object (same programs, maps and
// globals: bpf/compat.bpf.h) on a kernel without bpf_loop. nullptr and errno on failure.
jmethodtime_bpf *open_skeleton(bool compat)
{
    if (!compat)
        return jmethodtime_bpf__open();
    auto *skel = static_cast<jmethodtime_bpf *>(calloc(1, sizeof(jmethodtime_bpf)));
    if (!skel) {
        errno = ENOMEM;
        return nullptr;
    }
    int err = jmethodtime_bpf__create_skeleton(skel);
    if (!err) {
        skel->skeleton->data = compat_object_bytes(&skel->skeleton->data_sz);
        err = bpf_object__open_skeleton(skel->skeleton, nullptr);
    }
    if (err) {
        jmethodtime_bpf__destroy(skel);
        errno = -err;
        return nullptr;
    }
    return skel;
}

}  // namespace

SkeletonPtr load_programs(const ProgramConfig &config)
{
    g_verbose = config.verbose;
    libbpf_set_print(print_libbpf);

    const bool compat = kernel_support().compat;
    SkeletonPtr skel(open_skeleton(compat));
    if (!skel) {
        int err = errno;
        throw Error("cannot open the BPF object: " + errno_text(err), err);
    }
    set_filters(skel.get(), config);
    size_maps(skel.get(), config);
    auto *ro = skel->rodata;
    ro->per_thread = config.per_thread ? 1 : 0;
    ro->call_paths = config.call_paths ? 1 : 0;
    ro->foreign = config.foreign ? 1 : 0;
    ro->latency_on = config.latency ? 1 : 0;
    ro->lat_traced_event_ns = config.latency_cost.traced_event_ns;
    ro->lat_rejected_event_ns = config.latency_cost.rejected_event_ns;
    ro->slower_than_ns = config.slower_than_ns;
    if (!config.slower_than_ns)
        bpf_map__set_max_entries(skel->maps.slow_calls, static_cast<__u32>(sysconf(_SC_PAGESIZE)));
    ro->test_trap_ns = test_trap_ns();
    bpf_program__set_autoload(skel->progs.handle_return, !config.per_thread);
    bpf_program__set_autoload(skel->progs.handle_return_t, config.per_thread);
    for (bpf_program *hook : {skel->progs.handle_freeze, skel->progs.handle_freeze_ret, skel->progs.handle_thaw,
                              skel->progs.handle_thaw_ret})
        bpf_program__set_autoload(hook, config.vthread_hooks);
    if (!config.vthread_hooks) {  // unused: no bucket arrays (MBs)
        bpf_map__set_max_entries(skel->maps.parked_frames, 1);
        bpf_map__set_max_entries(skel->maps.parked_vthreads, 1);
    }
    if (config.arg_regs) {
        ro->fast_args = 1;
        for (size_t i = 0; i < config.arg_regs->size(); i++)
            const_cast<__u8 &>(ro->arg_reg[i]) = (*config.arg_regs)[i];
    }
    if (config.unload_arg_regs) {
        ro->fast_unload_args = 1;
        for (size_t i = 0; i < config.unload_arg_regs->size(); i++)
            const_cast<__u8 &>(ro->unload_arg_reg[i]) = (*config.unload_arg_regs)[i];
    }

    if (jmethodtime_bpf__load(skel.get())) {
        int err = errno;
        if (err == EPERM)  // EACCES is the verifier's refusal
            throw Error("not allowed to load BPF programs: run jmethodtime as root (or with CAP_BPF, "
                        "CAP_PERFMON and CAP_SYS_PTRACE)",
                        err);
        if (err == ENOMEM)
            throw Error("the kernel had no memory for the BPF maps (ENOMEM): free memory, or trace fewer methods "
                        "(--package, --max-paths)",
                        err);
        throw Error("the kernel refused the BPF programs: " + errno_text(err) +
                        " (run with -v for the verifier log, and report it with uname -r)",
                    err);
    }
    return skel;
}

ProgramGlobals program_globals(jmethodtime_bpf *skel)
{
    ProgramGlobals g;
    g.ids = {&skel->bss->last_method_id,   &skel->data->last_path_id,  &skel->bss->last_row_id,
             skel->rodata->max_method_ids, skel->rodata->max_path_ids, skel->rodata->max_row_ids};
    g.rejected_taken = skel->bss->rejected_taken;
    g.vt_layouts = skel->bss->vt_layouts;
    g.call_paths = skel->rodata->call_paths;
    g.per_thread = skel->rodata->per_thread;
    return g;
}

ProgramMaps program_maps(const jmethodtime_bpf *skel)
{
    const auto &m = skel->maps;
    return {map_reader<__u32, jmt_names>(m.names),
            map_reader<__u32, jmt_names>(m.rejected_examples),
            map_reader<__u32, std::array<char, JMT_COMM_LEN>>(m.thread_names),
            map_reader<jmt_path_key, __u32>(m.path_ids),
            map_reader<jmt_thread_key, __u32>(m.row_ids),
            map_reader<__u32, jmt_cpu>(m.cpu_state),
            map_reader<__u32, jmt_method_stats>(m.totals_overflow),
            map_reader<__u32, jmt_method_stats>(m.totals_spill)};
}

bpf_program *return_program(jmethodtime_bpf *skel)
{
    return bpf_program__autoload(skel->progs.handle_return_t) ? skel->progs.handle_return_t : skel->progs.handle_return;
}

std::pair<uint64_t, uint64_t> program_run_stats(const bpf_program *prog)
{
    bpf_prog_info info = {};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
        return {0, 0};
    return {info.run_time_ns, info.run_cnt};
}

namespace {

[[noreturn]] void throw_attach_error(int err, int pid, const std::string &what, const std::string &binary)
{
    if (pid > 0 && !process_start_ticks(pid))  // gone, or only its zombie
        throw Error("pid " + std::to_string(pid) + " exited before its probes were attached: nothing was traced",
                    ESRCH);
    if (err == EINVAL)
        throw Error(what + " failed with EINVAL: another tracer (a bcc tool such as ucalls or trace) "
                           "probably holds this probe with a different semaphore offset; stop it and retry",
                    err);
    if (err == ESRCH || err == ENOENT)
        throw Error(what + " failed: the process exited or " + binary + " is gone (" + errno_text(err) + ")", err);
    throw Error(what + " in " + binary + " failed: " + errno_text(err), err);
}

// A plain uprobe at each site of provider:probe in binary; empty when a site has a
// semaphore or lies outside the file's segments (then libbpf's USDT attach).
ProbeLinks attach_sites(bpf_program *prog, int pid, const std::string &binary, const char *provider, const char *probe,
                        const std::string &what)
{
    const LibjvmInfo info = inspect_libjvm(binary, provider);
    std::vector<uint64_t> offsets;
    for (const UsdtNote &n : info.notes) {
        if (n.name != probe)
            continue;
        if (n.semaphore || !n.file_offset)
            return {};
        offsets.push_back(*n.file_offset);
    }
    if (offsets.empty())
        throw Error(what + ": " + binary + " has no such probe", ENOENT);
    ProbeLinks links;
    for (uint64_t offset : offsets) {
        bpf_link *link = bpf_program__attach_uprobe(prog, false, pid, binary.c_str(), offset);
        if (!link)
            throw_attach_error(errno, pid, what, binary);
        links.emplace_back(link);
    }
    return links;
}

}  // namespace

ProbeLinks attach_usdt(bpf_program *prog, int pid, const std::string &binary, const char *provider, const char *probe,
                       bool reads_registers)
{
    const std::string what = std::string("attaching ") + provider + ":" + probe;
    if (reads_registers && !kernel_support().attach_cookie)
        if (ProbeLinks links = attach_sites(prog, pid, binary, provider, probe, what); !links.empty())
            return links;
    bpf_link *link = bpf_program__attach_usdt(prog, pid, binary.c_str(), provider, probe, nullptr);
    if (!link)
        throw_attach_error(errno, pid, what, binary);
    ProbeLinks links;
    links.emplace_back(link);
    return links;
}

std::vector<LinkPtr> attach_entry_return(bpf_program *entry, bpf_program *ret, int pid, const std::string &binary,
                                         const char *provider, bool reads_registers)
{
    // Returns first: a call that enters between the two attaches then has its return seen
    // (a return without its entry is counted and dropped), instead of leaving a frame that
    // never closes under every later call of its method, which would all read as recursion.
    std::vector<LinkPtr> links;
    for (auto [prog, probe] : {std::pair{ret, "method__return"}, std::pair{entry, "method__entry"}})
        for (LinkPtr &link : attach_usdt(prog, pid, binary, provider, probe, reads_registers))
            links.push_back(std::move(link));
    return links;
}

}  // namespace jmt
