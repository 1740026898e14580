#include "loader/snapshot_reader.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <ctime>
#include <thread>
#include <type_traits>

#include "jvm/jvm.h"
#include "loader/map_reader.h"

namespace jmt {

const char *const kUnsplitThread = "[not split: thread table full]";

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

template <typename KernelStats>
MethodStats to_method_stats(const KernelStats &s)
{
    MethodStats m;
#define JMT_COPY(name) m.name = s.name;
    JMT_METHOD_STATS(JMT_COPY, JMT_COPY, JMT_COPY)
#undef JMT_COPY
    if constexpr (std::is_same_v<KernelStats, jmt_method_stats>)
        m.latency.add_kernel(s.latency);
    return m;
}

// Reads an id's chunked totals (ChunkStats: jmt_method_stats, or a call
// path's jmt_path_stats), summed over the CPUs (chunks of per-CPU arrays;
// row_stats' have one entry). An id's totals are its chunk's plus those that
// waited in totals_overflow (key: id | overflow_bit) before the chunk existed, and in
// totals_spill where the kernel could not allocate their overflow entry.
template <typename ChunkStats>
class ChunkedTotals {
public:
    ChunkedTotals(const TotalsChunks *chunks, const ProgramMaps &maps, uint32_t overflow_bit)
        : chunks_(chunks), overflows_{maps.totals_overflow, maps.totals_spill}, overflow_bit_(overflow_bit)
    {}
    // False when id has no entry.
    bool read(__u32 id, MethodStats &out)
    {
        out = MethodStats{};
        bool found = false;
        const MapReader<__u32, ChunkStats> chunk(chunks_ ? chunks_->fd_of(id) : -1);
        const __u32 slot = TotalsChunks::slot(id);
        if (chunks_ && !chunks_->per_cpu()) {
            ChunkStats one{};
            if (chunk.lookup(slot, one)) {
                out += to_method_stats(one);
                found = true;
            }
        } else if (chunk.lookup_per_cpu(slot, chunk_per_cpu_)) {
            add(chunk_per_cpu_, out);
            found = true;
        }
        // Those that waited for the chunk, and those of programs that preempted another on their CPU.
        for (const MapReader<__u32, jmt_method_stats> &overflow : overflows_)
            for (__u32 key : {id | overflow_bit_, id | overflow_bit_ | JMT_OVERFLOW_NESTED}) {
                if (overflow.lookup_per_cpu(key, overflow_per_cpu_)) {
                    add(overflow_per_cpu_, out);
                    found = true;
                }
            }
        return found;
    }

private:
    template <typename V>
    static void add(const std::vector<V> &per_cpu, MethodStats &out)
    {
        for (const auto &s : per_cpu)
            out += to_method_stats(s);
    }

    const TotalsChunks *chunks_;
    std::array<MapReader<__u32, jmt_method_stats>, 2> overflows_;
    uint32_t overflow_bit_;
    std::vector<ChunkStats> chunk_per_cpu_;
    std::vector<jmt_method_stats> overflow_per_cpu_;
};

}  // namespace

SnapshotReader::CpuTotals SnapshotReader::cpu_totals() const
{
    CpuTotals sum;
    std::vector<jmt_cpu> per_cpu;
    if (src_.maps.cpu_state.lookup_per_cpu(0, per_cpu))
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

TraceProgress SnapshotReader::progress() const
{
    CpuTotals cpu = cpu_totals();
    const std::array<uint64_t, JMT_CNT_NR> &c = cpu.counters;
    TraceProgress p;
    p.gap_hist = std::move(cpu.gap_hist);
    p.events = event_totals(c[JMT_CNT_ENTRIES], c[JMT_CNT_RETURNS], c[JMT_CNT_TRACED_CALLS]);
    p.methods = *src_.globals.ids.methods;
    p.diag = diagnostics_of(c);
    return p;
}

Snapshot SnapshotReader::snapshot() const
{
    Snapshot snap;
    CpuTotals cpu = cpu_totals();
    snap.diag = diagnostics_of(cpu.counters);
    Diagnostics &d = snap.diag;
    snap.gap_hist = std::move(cpu.gap_hist);
    snap.kernel_memory_bytes = bpf_memory_bytes();
    snap.method_ids = *src_.globals.ids.methods;
    rejected_examples(snap);

    // All-thread totals per method id, read before the per-thread rows: a
    // frame closing meanwhile is then at most in the rows, never only in the totals.
    ChunkedTotals<jmt_method_stats> totals_of(src_.methods, src_.maps, 0);
    const __u32 last = *src_.globals.ids.methods;
    std::vector<std::pair<uint32_t, MethodStats>> totals;
    for (__u32 id = 1; id <= last; id++) {
        MethodStats total;
        if (!totals_of.read(id, total))
            continue;
        if (total.calls != 0)
            totals.emplace_back(id, total);
        if (pause_ms_)
            std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_));
    }
    if (src_.globals.per_thread) {
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

CallTree SnapshotReader::call_tree() const
{
    CallTree tree;
    if (!src_.globals.call_paths)
        return tree;
    // Path ids are handed out parent first, so sorting by id puts parents before children.
    std::vector<std::pair<__u32, jmt_path_key>> paths;
    for (const auto &[key, path] : src_.maps.path_ids.entries())
        paths.emplace_back(path, key);
    paths.emplace_back(JMT_PATH_TRUNCATED, jmt_path_key{0, 0});
    std::sort(paths.begin(), paths.end(), [](const auto &a, const auto &b) { return a.first < b.first; });

    ChunkedTotals<jmt_path_stats> totals_of(src_.paths, src_.maps, JMT_OVERFLOW_PATH);
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

SlowCall SnapshotReader::slow_call(const jmt_slow_call &raw) const
{
    SlowCall call;
    MethodRow names;
    uint64_t truncated = 0;
    set_names(names, raw.id, truncated);
    call.klass = names.klass;
    call.method = names.method;
    call.signature = names.signature;
    call.pid = names.pid;
    call.tid = raw.tid;
    call.vthread = raw.vthread;
    call.thread = std::string(raw.comm, strnlen(raw.comm, sizeof raw.comm));
    const uint32_t kept = std::min<uint32_t>(raw.path_len, JMT_SLOW_PATH);
    for (uint32_t i = 0; i < kept; i++) {
        MethodRow caller;
        set_names(caller, raw.path[i], truncated);
        call.path.push_back(qualified_name(caller));
    }
    call.path.push_back(qualified_name(names));
    call.path_cut = raw.depth > kept ? raw.depth - kept : 0;
    // CLOCK_MONOTONIC to the epoch, as now.
    timespec mono{}, real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    const auto ns = [](const timespec &t) { return uint64_t(t.tv_sec) * 1'000'000'000u + uint64_t(t.tv_nsec); };
    call.start_unix_ns = ns(real) - (ns(mono) - raw.end_ns) - raw.wall_ns;
    // The probes' cost is on-CPU time: out of elapsed and on-CPU time alike (cost/correction.h).
    const uint64_t probes = raw.wall_ns - std::min(raw.latency_ns, raw.wall_ns);
    call.wall_ns = raw.latency_ns;
    call.cpu_ns = std::min<uint64_t>(raw.cpu_ns > probes ? raw.cpu_ns - probes : 0, call.wall_ns);
    call.runq_ns = std::min<uint64_t>(raw.runq_ns, call.wall_ns - call.cpu_ns);
    call.blocked_ns = call.wall_ns - call.cpu_ns - call.runq_ns;
    return call;
}

void SnapshotReader::rejected_examples(Snapshot &snap) const
{
    const volatile uint32_t *rejected_taken = src_.globals.rejected_taken;
    for (uint32_t group = 0; group < JMT_REJECT_GROUPS; group++) {
        std::vector<std::string> &out =
            group == JMT_REJECTED_BY_PACKAGE ? snap.rejected_by_package : snap.rejected_by_globs;
        const uint32_t taken = rejected_taken[group];
        for (uint32_t i = 0; i < taken; i++) {
            const __u32 slot = group * JMT_REJECTED_EXAMPLES + i;
            jmt_names n;
            if (!src_.maps.rejected_examples.lookup(slot, n) || n.class_len == 0)
                continue;  // taken, not yet written
            std::string name(n.klass, std::min<uint32_t>(n.class_len, JMT_CLASS_BUF));
            if (n.read_ok)
                name += "." + std::string(n.method, std::min<uint32_t>(n.method_len, JMT_METHOD_BUF));
            if (std::find(out.begin(), out.end(), name) == out.end())
                out.push_back(std::move(name));
        }
    }
}

const SnapshotReader::MethodNames *SnapshotReader::method_names(uint32_t id) const
{
    auto it = names_.find(id);
    if (it != names_.end())
        return &it->second;
    jmt_names n;
    if (!src_.maps.names.lookup(id, n))
        return nullptr;  // not cached: the kernel may store it later
    const int pid = n.jvm ? static_cast<int>(n.jvm) : src_.pid;
    MethodNames m;
    m.pid = static_cast<int>(n.jvm);
    m.klass = bytes_or_memory(pid, n.class_addr, n.class_len, n.klass, JMT_CLASS_BUF, n.read_ok, m.truncated);
    m.method = bytes_or_memory(pid, n.method_addr, n.method_len, n.method, JMT_METHOD_BUF, n.read_ok, m.truncated);
    m.signature = bytes_or_memory(pid, n.sig_addr, n.sig_len, n.sig, JMT_SIG_BUF, n.read_ok, m.truncated);
    return &names_.emplace(id, std::move(m)).first->second;
}

void SnapshotReader::set_names(MethodRow &row, uint32_t id, uint64_t &truncated) const
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

void SnapshotReader::add_thread_rows(Snapshot &snap, const std::vector<std::pair<uint32_t, MethodStats>> &totals) const
{
    const std::vector<std::pair<jmt_thread_key, __u32>> rows = src_.maps.row_ids.entries();
    ChunkedTotals<jmt_method_stats> row_totals(src_.rows, src_.maps, JMT_OVERFLOW_ROW);
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
            name = thread_names.emplace(key.tid, thread_name(row.pid ? row.pid : src_.pid, key.tid)).first;
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

std::string SnapshotReader::thread_name(int pid, uint32_t tid) const
{
    std::ifstream comm("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
    std::string name;
    if (comm && std::getline(comm, name))
        return name;
    std::array<char, JMT_COMM_LEN> buf{};
    if (src_.maps.thread_names.lookup(tid, buf))
        return std::string(buf.data(), strnlen(buf.data(), buf.size()));
    return "";
}

}  // namespace jmt
