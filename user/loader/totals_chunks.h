// Chunked totals (bpf/totals.bpf.h): stats, path_stats and row_stats are arrays
// of maps whose entries are arrays of JMT_TOTALS_CHUNK ids (per-CPU ones but
// for row_stats, whose rows only their own thread writes). They are
// created here, ahead of the ids the programs hand out, so the kernel memory
// of the totals follows the methods and paths traced, not the id limits.
#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "jmethodtime.h"

struct bpf_map;
struct jmethodtime_bpf;

namespace jmt {

class TotalsChunks {
public:
    // chunks: a loaded ARRAY_OF_MAPS of JMT_TOTALS_CHUNK-id arrays of
    // value_size-byte totals (jmt_method_stats, or a path's jmt_path_stats),
    // per-CPU ones unless per_cpu is false; ids are < max_ids.
    TotalsChunks(const bpf_map *chunks, uint32_t max_ids, uint32_t value_size, bool per_cpu = true);
    ~TotalsChunks();
    TotalsChunks(const TotalsChunks &) = delete;
    TotalsChunks &operator=(const TotalsChunks &) = delete;

    // Creates the chunks of every id up to last_id + max(JMT_TOTALS_CHUNK,
    // last_id / 2), below max_ids, so ids are ready before they are handed
    // out; throws jmt::Error (kernel memory, limits). Each chunk waits for an
    // RCU grace period (the kernel's rule for maps of maps): milliseconds, up
    // to 100s of ms on a loaded host; totals_overflow holds ids meanwhile.
    void cover(uint32_t last_id);
    // The per-CPU array that holds id's totals at key slot(id); -1 when its
    // chunk was not created. Safe while cover runs on another thread.
    int fd_of(uint32_t id) const;
    static uint32_t slot(uint32_t id) { return id & (JMT_TOTALS_CHUNK - 1); }
    bool per_cpu() const { return per_cpu_; }

private:
    int outer_fd_;
    uint32_t max_ids_;
    uint32_t value_size_;
    bool per_cpu_;
    bool frozen_;  // tests only (test_chunks_frozen): no chunk after the first cover
    mutable std::mutex mutex_;
    std::vector<int> fds_;  // chunk i holds ids i * JMT_TOTALS_CHUNK and up
};

// A loaded skeleton's chunks: its method totals, with call paths its path
// totals and with --per-thread its thread rows' (else null), covering the ids
// handed out so far plus the headroom. Every loaded instance needs them:
// without, its totals wait in totals_overflow.
struct SkeletonTotals {
    std::unique_ptr<TotalsChunks> methods, paths, rows;
};
SkeletonTotals cover_totals(jmethodtime_bpf *skel);

// Keeps chunks ahead of the ids the programs hand out: every poll_ms it reads
// the programs' last ids (the skeleton's mmapped .bss) on a thread of its own
// that blocks every signal. A chunk that could not be made is said once on
// stderr; the programs count the frames it misses (totals_not_ready).
class TotalsGrower {
public:
    struct Watch {
        TotalsChunks *chunks;
        const volatile uint32_t *last_id;
    };
    explicit TotalsGrower(std::vector<Watch> watched, unsigned poll_ms = 2);
    ~TotalsGrower();
    TotalsGrower(const TotalsGrower &) = delete;
    TotalsGrower &operator=(const TotalsGrower &) = delete;

private:
    void run();

    std::vector<Watch> watched_;
    unsigned poll_ms_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// Kernel memory (bytes) of this process's BPF maps and programs, as the kernel
// counts it (the memlock of each map and program fd, each object once).
uint64_t bpf_memory_bytes();

}  // namespace jmt
