#include "loader/totals_chunks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>

#include "jmethodtime.skel.h"
#include "loader/programs.h"
#include "util/error.h"
#include "util/quiet_thread.h"

namespace jmt {

namespace {

// The kernel's ENOTSUPP (not in userspace's errno.h): a map without batch operations.
constexpr int kNoBatchErrno = 524;

}  // namespace

TotalsChunks::TotalsChunks(const bpf_map *chunks, uint32_t max_ids, uint32_t value_size, bool per_cpu)
    : outer_fd_(bpf_map__fd(chunks)), max_ids_(max_ids), value_size_(value_size), per_cpu_(per_cpu),
      frozen_(test_chunks_frozen())
{}

SkeletonTotals cover_totals(jmethodtime_bpf *skel)
{
    SkeletonTotals totals;
    const ProgramGlobals globals = program_globals(skel);
    const IdCounters &ids = globals.ids;
    totals.methods = std::make_unique<TotalsChunks>(skel->maps.stats, ids.max_methods, sizeof(jmt_method_stats));
    totals.methods->cover(*ids.methods);
    if (globals.call_paths) {
        totals.paths = std::make_unique<TotalsChunks>(skel->maps.path_stats, ids.max_paths, sizeof(jmt_path_stats));
        totals.paths->cover(*ids.paths);
    }
    if (globals.per_thread) {
        totals.rows =
            std::make_unique<TotalsChunks>(skel->maps.row_stats, ids.max_rows, sizeof(jmt_method_stats), false);
        totals.rows->cover(*ids.rows);
    }
    return totals;
}

TotalsChunks::~TotalsChunks()
{
    for (int fd : fds_)
        close(fd);
}

void TotalsChunks::cover(uint32_t last_id)
{
    if (max_ids_ == 0)
        return;
    // Ahead by half the ids so far (a chunk at least): few chunks to add in a burst.
    const uint64_t ahead = std::max<uint64_t>(JMT_TOTALS_CHUNK, last_id / 2);
    const uint64_t top = std::min<uint64_t>(uint64_t{last_id} + ahead, max_ids_ - 1);
    const size_t needed = static_cast<size_t>(top >> JMT_TOTALS_CHUNK_SHIFT) + 1;
    std::lock_guard<std::mutex> lock(mutex_);
    if (fds_.size() >= needed || (frozen_ && !fds_.empty()))
        return;
    // All the new chunks in one update: the kernel waits one grace period per update.
    std::vector<__u32> keys;
    std::vector<int> fresh;
    for (size_t index = fds_.size(); index < needed; index++) {
        const bpf_map_type type = per_cpu_ ? BPF_MAP_TYPE_PERCPU_ARRAY : BPF_MAP_TYPE_ARRAY;
        const int fd = bpf_map_create(type, "jmt_totals", sizeof(__u32), value_size_, JMT_TOTALS_CHUNK, nullptr);
        if (fd < 0) {
            const int err = errno;
            for (int f : fresh)
                close(f);
            throw Error("cannot create kernel memory for the totals of ids from " +
                            std::to_string(index * JMT_TOTALS_CHUNK) + ": " + errno_text(err),
                        err);
        }
        keys.push_back(static_cast<__u32>(index));
        fresh.push_back(fd);
    }
    __u32 count = static_cast<__u32>(keys.size());
    int rc = bpf_map_update_batch(outer_fd_, keys.data(), fresh.data(), &count, nullptr);
    if (rc && errno == kNoBatchErrno) {
        // 5.10's maps of maps have no batch update (the kernel's ENOTSUPP): one update a chunk.
        rc = 0;
        for (size_t i = 0; i < keys.size() && rc == 0; i++)
            rc = bpf_map_update_elem(outer_fd_, &keys[i], &fresh[i], BPF_ANY);
    }
    if (rc) {
        const int err = errno;
        for (int f : fresh)
            close(f);
        throw Error("cannot hand the kernel programs the totals of ids from " +
                        std::to_string(fds_.size() * JMT_TOTALS_CHUNK) + ": " + errno_text(err),
                    err);
    }
    fds_.insert(fds_.end(), fresh.begin(), fresh.end());
}

int TotalsChunks::fd_of(uint32_t id) const
{
    const size_t index = id >> JMT_TOTALS_CHUNK_SHIFT;
    std::lock_guard<std::mutex> lock(mutex_);
    return index < fds_.size() ? fds_[index] : -1;
}

TotalsGrower::TotalsGrower(std::vector<Watch> watched, unsigned poll_ms)
    : watched_(std::move(watched)), poll_ms_(poll_ms)
{
    thread_ = start_quiet_thread([this] { run(); });
}

TotalsGrower::~TotalsGrower()
{
    stop_ = true;
    if (thread_.joinable())
        thread_.join();
}

void TotalsGrower::run()
{
    bool said = false;
    while (!stop_) {
        for (const Watch &w : watched_) {
            try {
                w.chunks->cover(*w.last_id);
            } catch (const Error &e) {
                if (!said)
                    std::cerr << "jmethodtime: warning: " << e.what()
                              << "; calls of methods past it are not counted (see the diagnostics)" << std::endl;
                said = true;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms_));
    }
}

uint64_t bpf_memory_bytes()
{
    uint64_t total = 0;
    std::set<std::string> seen;  // "map_id:N" / "prog_id:N": an object behind several fds counts once
    DIR *dir = opendir("/proc/self/fdinfo");
    if (!dir)
        return 0;
    while (dirent *entry = readdir(dir)) {
        if (entry->d_name[0] == '.')
            continue;
        std::ifstream info(std::string("/proc/self/fdinfo/") + entry->d_name);
        std::string line, id;
        uint64_t memlock = 0;
        bool has_memlock = false;
        while (std::getline(info, line)) {
            if (line.rfind("map_id:", 0) == 0 || line.rfind("prog_id:", 0) == 0)
                id = line;
            if (line.rfind("memlock:", 0) == 0) {
                memlock = std::strtoull(line.c_str() + 8, nullptr, 10);
                has_memlock = true;
            }
        }
        if (has_memlock && !id.empty() && seen.insert(id).second)
            total += memlock;
    }
    closedir(dir);
    return total;
}

}  // namespace jmt
