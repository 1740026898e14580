// The probe programs' lifecycle below the Tracer: open -> set rodata -> load,
// the one attach helper every caller uses, and RAII for skeletons and links.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jmethodtime.h"
#include "loader/map_reader.h"
#include "model/profile.h"

struct jmethodtime_bpf;
struct jmt_vt_layout;
struct bpf_link;
struct bpf_program;

namespace jmt {

struct SkeletonDeleter {
    void operator()(jmethodtime_bpf *skel) const;
};
struct LinkDeleter {
    void operator()(bpf_link *link) const;
};
using SkeletonPtr = std::unique_ptr<jmethodtime_bpf, SkeletonDeleter>;
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

// What the BPF programs are told before load (rodata).
struct ProgramConfig {
    int pid = 0;                                            // threads of this process are traced
    std::vector<int> other_pids;                            // and of these (several JVMs: method keys carry the pid)
    bool filter_by_process = false;                         // probes attached for every process: keep the pids' events
    std::vector<std::string> packages;                      // JVM form; empty = all
    std::vector<std::string> class_globs;                   // --class, JVM form; empty = all
    std::vector<std::string> method_globs;                  // --method; empty = all
    bool per_thread = false;                                // --per-thread: totals per (thread, method) too
    bool call_paths = false;                                // totals per call path too (flame graphs)
    bool foreign = false;                                   // --foreign: time inside untraced callees
    bool latency = true;                                    // a latency histogram per method (and row)
    ProbeCost latency_cost;                                 // ns per event each call's histogram time is less
    uint64_t slower_than_ns = 0;                            // --slower-than: calls recorded from this time (0: off)
    uint32_t max_paths = 0;                                 // call paths kept (0: as many as fit)
    uint32_t max_methods = 0;                               // traced methods (0: as many as fit)
    uint32_t method_keys = 0;                               // method table entries (0: JMT_MAX_METHOD_KEYS)
    uint32_t cache_slots = 0;                               // per-CPU cache slots (0: within JMT_CACHE_BUDGET)
    std::optional<std::array<uint8_t, 7>> arg_regs;         // fast argument registers, if plain
    std::optional<std::array<uint8_t, 2>> unload_arg_regs;  // class__unloaded's, if plain
    bool vthread_hooks = false;                             // the virtual-thread hooks' programs are loaded
    bool verbose = false;                                   // libbpf's log on stderr
};

// Entries of a per-CPU array of value_size-byte values that fit
// JMT_PERCPU_BUDGET on ncpu CPUs, at most limit.
uint32_t percpu_entries(uint64_t value_size, int ncpu, uint32_t limit);

// Slots of a per-CPU cache of value_size-byte slots on ncpu CPUs: the largest
// power of two within JMT_CACHE_BUDGET, from JMT_MIN_CACHE_SLOTS to limit.
uint32_t cache_slots(uint64_t value_size, int ncpu, uint32_t limit);

// Tests only: JMT_TEST_TRAP_NS, ns every probe event of the tool's programs
// spins, so one host stands in for hosts with slower traps (0 when unset);
// throws jmt::Error for a value that is not 0..kMaxTestTrapNs.
constexpr uint64_t kMaxTestTrapNs = 20000;
uint64_t test_trap_ns();
// Tests only: JMT_TEST_THREAD_ROWS, the --per-thread row ids (ids 1..N-1) in
// place of JMT_MAX_THREAD_ROWS, so a test can fill the table (0 when unset);
// throws jmt::Error for a value that is not 2..JMT_MAX_THREAD_ROWS.
uint32_t test_thread_rows();
// Tests only: totals_overflow's entries from JMT_TEST_OVERFLOW_ENTRIES, 0 when unset.
uint32_t test_overflow_entries();
// Tests only: JMT_TEST_FREEZE_CHUNKS=1 keeps the totals' chunks made at load, so that every later
// id's totals wait in totals_overflow (and totals_spill) for the whole trace.
bool test_chunks_frozen();
// Tests only: JMT_TEST_SNAPSHOT_PAUSE_MS, ms a snapshot waits after reading each method's
// totals, so that a test can see whether calls close while they are read (0 when unset).
uint32_t test_snapshot_pause_ms();
// totals_spill's preallocated entries on ncpu CPUs: JMT_TOTALS_SPILL, fewer where they would take
// over 4 MB over all CPUs (at least 16).
uint32_t spill_entries(int ncpu);

// libbpf's warnings (not under -v, which prints every message as it comes)
// since the last call, each a line ending in '\n'; taken, so said once.
std::vector<std::string> take_libbpf_warnings();
// Longest libbpf message kept (bytes; longer ones are cut).
constexpr size_t kLibbpfLineBytes = 512;

// The programs' id counters (.bss, .data), read as they run: the last method,
// call path and --per-thread row ids handed out, each below its limit
// (bpf/helpers.bpf.h's next_id), and the ids' limits the loader set.
struct IdCounters {
    const volatile uint32_t *methods, *paths, *rows;
    uint32_t max_methods, max_paths, max_rows;
};

// Every global of the loaded programs that userspace reads or writes, named
// here only: the rest of user/ goes through this view, never the skeleton's
// .bss, .data or .rodata.
struct ProgramGlobals {
    IdCounters ids;
    // Examples of rejected methods taken per group (enum jmt_reject_group),
    // each at most JMT_REJECTED_EXAMPLES: the programs never count past it.
    const volatile uint32_t *rejected_taken;
    // JMT_MAX_TARGETS virtual-thread layouts, one per traced JVM, written by
    // userspace; a layout is taken once its cont_entry_offset is set.
    jmt_vt_layout *vt_layouts;
    bool call_paths, per_thread;  // what load_programs loaded (rodata)
};
ProgramGlobals program_globals(jmethodtime_bpf *skel);

// Every map of the loaded programs that userspace reads, typed: the rest of
// user/ reads them through this view, never the skeleton's maps.
struct ProgramMaps {
    MapReader<__u32, jmt_names> names;                              // method id -> its names
    MapReader<__u32, jmt_names> rejected_examples;                  // group x JMT_REJECTED_EXAMPLES slots
    MapReader<__u32, std::array<char, JMT_COMM_LEN>> thread_names;  // tid -> comm at its first traced method
    MapReader<jmt_path_key, __u32> path_ids;                        // (parent path, method id) -> path id
    MapReader<jmt_thread_key, __u32> row_ids;                       // --per-thread: (thread, method) -> row id
    MapReader<__u32, jmt_cpu> cpu_state;                            // per-CPU, key 0: counters and gaps
    MapReader<__u32, jmt_method_stats> totals_overflow;             // per-CPU: totals before their chunk
    MapReader<__u32, jmt_method_stats> totals_spill;                // per-CPU: overflow entries not allocated
};
// Throws jmt::Error when a map is not the size its reader expects.
ProgramMaps program_maps(const jmethodtime_bpf *skel);

// Opens and loads the programs (nothing attached); throws jmt::Error.
SkeletonPtr load_programs(const ProgramConfig &config);

// The return probe's program that load_programs loaded: handle_return, or
// handle_return_t with per_thread (the same body plus per-thread rows, so the
// program without them is exactly the one without the option).
bpf_program *return_program(jmethodtime_bpf *skel);

// A loaded program's run time (ns) and run count so far, counted while the
// kernel's run-time statistics are on (bpf_enable_stats); zeros without them.
std::pair<uint64_t, uint64_t> program_run_stats(const bpf_program *prog);

// One probe's links: libbpf's USDT link, or a plain uprobe per site of the probe.
using ProbeLinks = std::vector<LinkPtr>;

// Attaches prog to provider:probe of binary for pid (-1: every process that maps
// binary); throws jmt::Error. reads_registers: prog reads the arguments from
// registers (rodata) and needs no USDT spec, so on a kernel without BPF cookies
// (5.15) it goes to each site as a plain uprobe: libbpf's USDT attach would need
// the site's address in the process, which launch mode (libjvm.so not mapped
// yet) and a whole-file attach (pid -1) do not have.
ProbeLinks attach_usdt(bpf_program *prog, int pid, const std::string &binary, const char *provider, const char *probe,
                       bool reads_registers = false);

// The method__entry and method__return probes of provider in binary for pid
// (-1: every process), return first; throws jmt::Error.
std::vector<LinkPtr> attach_entry_return(bpf_program *entry, bpf_program *ret, int pid, const std::string &binary,
                                         const char *provider, bool reads_registers = false);

// "No such file or directory (errno 2)".
std::string errno_text(int err);

}  // namespace jmt
