#include "loader/tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "util/error.h"
#include "jmethodtime.h"
#include "jmethodtime.skel.h"
#include "jvm/jvm.h"
#include "loader/percpu.h"

namespace jmt {

namespace {

// A name as the kernel stored it, completed from the target's memory when the
// kernel buffer was too short or the kernel's read failed.
std::string bytes_or_memory(int pid, uint64_t addr, uint32_t full_len, const char *buf, uint32_t buf_len, bool read_ok,
                            uint64_t &truncated)
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
#define JMT_COPY(name) m.name = s.name;
    JMT_METHOD_STATS(JMT_COPY, JMT_COPY, JMT_COPY)
#undef JMT_COPY
    return m;
}

// Every (thread, method) -> row id entry of row_ids, in batches (one syscall
// per kBatch rows); falls back to key-by-key iteration where batches are refused.
std::vector<std::pair<jmt_thread_key, __u32>> read_row_ids(int fd)
{
    std::vector<std::pair<jmt_thread_key, __u32>> out;
    constexpr __u32 kBatch = 4096;
    std::vector<jmt_thread_key> keys(kBatch);
    std::vector<__u32> rows(kBatch);
    jmt_thread_key in_batch{}, out_batch{};  // the kernel's position token (at most a key's size)
    bool first = true;
    for (;;) {
        __u32 count = kBatch;
        int err = bpf_map_lookup_batch(fd, first ? nullptr : &in_batch, &out_batch, keys.data(), rows.data(), &count,
                                       nullptr);
        const int e = err ? errno : 0;
        if (err && e != ENOENT) {
            if (!first || (e != EINVAL && e != ENOTSUP && e != EOPNOTSUPP))
                break;  // a concurrent change of a bucket: what was read stays
            // No batch operations: key by key.
            jmt_thread_key key{}, next{};
            __u32 row = 0;
            bool have = false;
            while (bpf_map_get_next_key(fd, have ? &key : nullptr, &next) == 0) {
                key = next;
                have = true;
                if (bpf_map_lookup_elem(fd, &key, &row) == 0)
                    out.emplace_back(key, row);
            }
            return out;
        }
        for (__u32 i = 0; i < count && i < kBatch; i++)
            out.emplace_back(keys[i], rows[i]);
        if (err)  // ENOENT: the last batch
            break;
        in_batch = out_batch;
        first = false;
    }
    return out;
}

// The thread's current name (/proc: JVM threads rename themselves), or the
// comm the kernel recorded when the thread first ran a traced method (the
// thread has exited), or "".
std::string thread_name(int pid, uint32_t tid, int names_fd)
{
    std::ifstream comm("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
    std::string name;
    if (comm && std::getline(comm, name))
        return name;
    char buf[JMT_COMM_LEN] = {};
    if (bpf_map_lookup_elem(names_fd, &tid, buf) == 0)
        return std::string(buf, strnlen(buf, sizeof(buf)));
    return "";
}

}  // namespace

const char *const kUnsplitThread = "[not split: thread table full]";

namespace {

// Reads an id's chunked jmt_method_stats, summed over the CPUs (chunks of
// per-CPU arrays; row_stats' have one entry). An id's totals are its chunk's
// plus those that waited in totals_overflow (key: id | overflow_bit) before
// the chunk existed.
class ChunkedTotals {
public:
    ChunkedTotals(const TotalsChunks *chunks, int overflow_fd, uint32_t overflow_bit)
        : chunks_(chunks), overflow_fd_(overflow_fd), overflow_bit_(overflow_bit)
    {}
    // False when id has no entry.
    bool read(__u32 id, MethodStats &out)
    {
        out = MethodStats{};
        bool found = false;
        const int fd = chunks_ ? chunks_->fd_of(id) : -1;
        if (fd >= 0 && !chunks_->per_cpu()) {
            jmt_method_stats one{};
            const __u32 slot = TotalsChunks::slot(id);
            if (bpf_map_lookup_elem(fd, &slot, &one) == 0) {
                out += to_method_stats(one);
                found = true;
            }
        } else if (fd >= 0 && read_percpu(fd, TotalsChunks::slot(id), per_cpu_)) {
            add(out);
            found = true;
        }
        // Those that waited for the chunk, and those of programs that preempted another on their CPU.
        for (__u32 key : {id | overflow_bit_, id | overflow_bit_ | JMT_OVERFLOW_NESTED}) {
            if (read_percpu(overflow_fd_, key, per_cpu_)) {
                add(out);
                found = true;
            }
        }
        return found;
    }

private:
    void add(MethodStats &out) const
    {
        for (const auto &s : per_cpu_)
            out += to_method_stats(s);
    }

    const TotalsChunks *chunks_;
    int overflow_fd_;
    uint32_t overflow_bit_;
    std::vector<jmt_method_stats> per_cpu_;
};

}  // namespace

Tracer::Tracer(const TracerConfig &config) : config_(config)
{
    const std::vector<VthreadTarget> vthread_targets_ = vthread_targets(config);
    HooksByLibjvm hooks = find_hooks(vthread_targets_);
    ProgramConfig programs = config.programs;
    programs.vthread_hooks = any_hooks(hooks);
    skel_ = load_programs(programs);
    SkeletonTotals totals = cover_totals(skel_.get());
    method_totals_ = std::move(totals.methods);
    path_totals_ = std::move(totals.paths);
    row_totals_ = std::move(totals.rows);
    const IdCounters ids = program_globals(skel_.get()).ids;
    std::vector<TotalsGrower::Watch> watched{{method_totals_.get(), ids.methods}};
    if (path_totals_)
        watched.push_back({path_totals_.get(), ids.paths});
    if (row_totals_)
        watched.push_back({row_totals_.get(), ids.rows});
    grower_ = std::make_unique<TotalsGrower>(std::move(watched));
    std::vector<TracedLibjvm> where = config.libjvms;
    if (where.empty())
        where.push_back({config.libjvm, {config.programs.pid}, false});
    bool unload_warned = false;
    for (const TracedLibjvm &lib : where) {
        for (int pid : lib.whole ? std::vector<int>{-1} : lib.pids) {
            for (LinkPtr &link :
                 attach_entry_return(skel_->progs.handle_entry, return_program(skel_.get()), pid, lib.path, "hotspot"))
                links_.push_back(std::move(link));
            // Class unloading: the method table forgets the class's keys before its names' memory is
            // reused. A libjvm without the probe (none known) would leave churned names unchecked: said once.
            try {
                links_.push_back(
                    attach_usdt(skel_->progs.handle_class_unloaded, pid, lib.path, "hotspot", "class__unloaded"));
            } catch (const Error &e) {
                if (!unload_warned)
                    std::cerr << "jmethodtime: warning: " << e.what()
                              << "; names of methods of classes that unload may be misattributed" << std::endl;
                unload_warned = true;
            }
        }
    }
    if (programs.vthread_hooks)
        vthread_hooks_ = std::make_unique<VthreadHooks>(
            skel_.get(), vthread_targets_, std::move(hooks),
            std::any_of(where.begin(), where.end(), [](const TracedLibjvm &l) { return l.whole; }));
    const std::pair<bpf_program *, const char *> scheduler[] = {{skel_->progs.handle_switch, "sched_switch"},
                                                                {skel_->progs.handle_wakeup, "sched_wakeup"},
                                                                {skel_->progs.handle_exit, "sched_process_exit"}};
    for (const auto &[prog, tracepoint] : scheduler) {
        bpf_link *link = bpf_program__attach(prog);
        if (!link) {
            int err = errno;
            throw Error(std::string("cannot attach to the ") + tracepoint + " BTF tracepoint: " + errno_text(err), err);
        }
        links_.emplace_back(link);
    }
    for (const std::string &w : take_libbpf_warnings())
        std::cerr << "jmethodtime: libbpf: " << w << (w.empty() || w.back() != '\n' ? "\n" : "") << std::flush;
}

Tracer::~Tracer() = default;

Tracer::CpuTotals Tracer::cpu_totals() const
{
    CpuTotals sum;
    std::vector<jmt_cpu> per_cpu;
    if (read_percpu(bpf_map__fd(skel_->maps.cpu_state), 0, per_cpu))
        for (const jmt_cpu &cpu : per_cpu) {
            for (int c = 0; c < JMT_CNT_NR; c++)
                sum.counters[c] += cpu.counters[c];
            for (int b = 0; b < JMT_GAP_BUCKETS; b++)
                sum.gap_hist[b] += cpu.gap_hist[b];
        }
    return sum;
}

namespace {

// The programs' counters (enum jmt_counter) as Diagnostics (truncated_names is counted in userspace).
Diagnostics diagnostics_of(const std::array<uint64_t, JMT_CNT_NR> &counters)
{
    Diagnostics d;
#define JMT_KERNEL_COUNTER(NAME, name) d.name = counters[JMT_CNT_##NAME];
    JMT_DIAGNOSTICS(JMT_KERNEL_COUNTER, JMT_CNT_NONE)
#undef JMT_KERNEL_COUNTER
    return d;
}

}  // namespace

Tracer::Progress Tracer::progress() const
{
    const std::array<uint64_t, JMT_CNT_NR> c = cpu_totals().counters;
    Progress p;
    p.events = event_totals(c[JMT_CNT_ENTRIES], c[JMT_CNT_RETURNS], c[JMT_CNT_TRACED_CALLS]);
    p.methods = *program_globals(skel_.get()).ids.methods;
    p.diag = diagnostics_of(c);
    return p;
}

Snapshot Tracer::snapshot() const
{
    Snapshot snap;
    CpuTotals cpu = cpu_totals();
    snap.diag = diagnostics_of(cpu.counters);
    Diagnostics &d = snap.diag;
    snap.gap_hist = std::move(cpu.gap_hist);
    snap.kernel_memory_bytes = bpf_memory_bytes();
    snap.method_ids = *program_globals(skel_.get()).ids.methods;
    rejected_examples(snap);
    if (vthread_hooks_)
        snap.virtual_threads_not_followed = vthread_hooks_->not_followed();

    // All-thread totals per method id, read before the per-thread rows: a
    // frame closing meanwhile is then at most in the rows, never only in the totals.
    ChunkedTotals totals_of(method_totals_.get(), bpf_map__fd(skel_->maps.totals_overflow), 0);
    const __u32 last = *program_globals(skel_.get()).ids.methods;
    std::vector<std::pair<uint32_t, MethodStats>> totals;
    for (__u32 id = 1; id <= last; id++) {
        MethodStats total;
        if (!totals_of.read(id, total))
            continue;
        if (total.calls != 0)
            totals.emplace_back(id, total);
    }
    if (config_.programs.per_thread) {
        add_thread_rows(snap, totals);
    } else {
        for (const auto &[id, total] : totals) {
            MethodRow row;
            row.stats = total;
            set_names(row, id, d.truncated_names);
            snap.methods.push_back(std::move(row));
        }
    }
    // A method of a class that unloaded and loaded again (or of one name in
    // several loaders) has had several ids: one row per name.
    snap.methods = merge_rows(snap.methods);
    return snap;
}

CallTree Tracer::call_tree() const
{
    CallTree tree;
    if (!config_.programs.call_paths)
        return tree;
    // Path ids are handed out parent first, so sorting by id puts parents before children.
    std::vector<std::pair<__u32, jmt_path_key>> paths;
    const int ids_fd = bpf_map__fd(skel_->maps.path_ids);
    jmt_path_key key{}, next{};
    bool have = false;
    while (bpf_map_get_next_key(ids_fd, have ? &key : nullptr, &next) == 0) {
        key = next;
        have = true;
        __u32 path = 0;
        if (bpf_map_lookup_elem(ids_fd, &key, &path) == 0)
            paths.emplace_back(path, key);
    }
    paths.emplace_back(JMT_PATH_TRUNCATED, jmt_path_key{0, 0});
    std::sort(paths.begin(), paths.end(), [](const auto &a, const auto &b) { return a.first < b.first; });

    ChunkedTotals totals_of(path_totals_.get(), bpf_map__fd(skel_->maps.totals_overflow), JMT_OVERFLOW_PATH);
    uint64_t truncated_names = 0;
    for (const auto &[path, k] : paths) {
        PathNode node;
        if (!totals_of.read(path, node.stats))
            continue;
        node.id = path;
        node.parent = k.parent;
        node.truncated = path == JMT_PATH_TRUNCATED;
        if (node.truncated) {
            if (node.stats.calls == 0)
                continue;
            tree.truncated_calls = node.stats.calls;
        } else {
            MethodRow names;
            set_names(names, k.id, truncated_names);
            node.klass = std::move(names.klass);
            node.method = std::move(names.method);
            node.signature = std::move(names.signature);
        }
        tree.nodes.push_back(std::move(node));
    }
    return tree;
}

void Tracer::rejected_examples(Snapshot &snap) const
{
    const int fd = bpf_map__fd(skel_->maps.rejected_examples);
    const volatile uint32_t *rejected_taken = program_globals(skel_.get()).rejected_taken;
    for (uint32_t group = 0; group < JMT_REJECT_GROUPS; group++) {
        std::vector<std::string> &out =
            group == JMT_REJECTED_BY_PACKAGE ? snap.rejected_by_package : snap.rejected_by_globs;
        const uint32_t taken = rejected_taken[group];
        for (uint32_t i = 0; i < taken; i++) {
            const __u32 slot = group * JMT_REJECTED_EXAMPLES + i;
            jmt_names n;
            if (bpf_map_lookup_elem(fd, &slot, &n) != 0 || n.class_len == 0)
                continue;  // taken, not yet written
            std::string name(n.klass, std::min<uint32_t>(n.class_len, JMT_CLASS_BUF));
            if (n.read_ok)
                name += "." + std::string(n.method, std::min<uint32_t>(n.method_len, JMT_METHOD_BUF));
            if (std::find(out.begin(), out.end(), name) == out.end())
                out.push_back(std::move(name));
        }
    }
}

const Tracer::MethodNames *Tracer::method_names(uint32_t id) const
{
    auto it = names_.find(id);
    if (it != names_.end())
        return &it->second;
    jmt_names n;
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.names), &id, &n) != 0)
        return nullptr;  // not cached: the kernel may store it later
    const int pid = n.jvm ? static_cast<int>(n.jvm) : config_.programs.pid;
    MethodNames m;
    m.pid = static_cast<int>(n.jvm);
    m.klass = bytes_or_memory(pid, n.class_addr, n.class_len, n.klass, JMT_CLASS_BUF, n.read_ok, m.truncated);
    m.method = bytes_or_memory(pid, n.method_addr, n.method_len, n.method, JMT_METHOD_BUF, n.read_ok, m.truncated);
    m.signature = bytes_or_memory(pid, n.sig_addr, n.sig_len, n.sig, JMT_SIG_BUF, n.read_ok, m.truncated);
    return &names_.emplace(id, std::move(m)).first->second;
}

void Tracer::set_names(MethodRow &row, uint32_t id, uint64_t &truncated) const
{
    if (const MethodNames *m = method_names(id)) {
        row.klass = m->klass;
        row.method = m->method;
        row.signature = m->signature;
        row.pid = m->pid;
        truncated += m->truncated;
    } else {
        row.klass = "[unknown method #" + std::to_string(id) + "]";
    }
}

void Tracer::add_thread_rows(Snapshot &snap, const std::vector<std::pair<uint32_t, MethodStats>> &totals) const
{
    const std::vector<std::pair<jmt_thread_key, __u32>> rows = read_row_ids(bpf_map__fd(skel_->maps.row_ids));
    ChunkedTotals row_totals(row_totals_.get(), bpf_map__fd(skel_->maps.totals_overflow), JMT_OVERFLOW_ROW);
    std::unordered_map<uint32_t, std::string> thread_names;
    std::unordered_map<uint32_t, MethodStats> split;  // per method id: the sum of its thread rows
    std::unordered_map<uint32_t, bool> counted;       // method ids whose truncated names were counted
    // Names a row of method id; a method's truncated names count once, not once per thread.
    auto name_row = [&](MethodRow &row, uint32_t id) {
        uint64_t truncated = 0;
        set_names(row, id, truncated);
        if (!counted[id])
            snap.diag.truncated_names += truncated;
        counted[id] = true;
    };
    const int names_fd = bpf_map__fd(skel_->maps.thread_names);
    for (const auto &[key, row_id] : rows) {
        MethodRow row;
        if (!row_totals.read(row_id, row.stats) || row.stats.calls == 0)
            continue;
        split[key.id] += row.stats;
        name_row(row, key.id);
        row.tid = key.tid;
        row.vthread = key.vthread;
        auto name = thread_names.find(key.tid);
        if (!key.vthread && name == thread_names.end())
            name =
                thread_names.emplace(key.tid, thread_name(row.pid ? row.pid : config_.programs.pid, key.tid, names_fd))
                    .first;
        row.thread = key.vthread ? "virtual thread " + std::to_string(key.vthread) : name->second;
        snap.methods.push_back(std::move(row));
    }
    // Frames closed while the per-thread table was full are only in the totals:
    // one row per method keeps the sum over the rows equal to the totals.
    if (snap.diag.thread_rows_full == 0)
        return;
    for (const auto &[id, total] : totals) {
        MethodStats rest = total;
        rest -= split[id];  // saturating: the rows were read after the totals
        if (rest.calls == 0)
            continue;
        MethodRow row;
        row.stats = rest;
        name_row(row, id);
        row.tid = 0;
        row.thread = kUnsplitThread;
        snap.methods.push_back(std::move(row));
    }
}

}  // namespace jmt
