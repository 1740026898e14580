// The model userspace builds from the kernel maps: one row per traced method.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jmethodtime.h"
#include "model/latency.h"
#include "model/slow_calls.h"
#include "model/source.h"

namespace jmt {

// Totals of one method; all times in ns. Inclusive times count only the
// outermost frame of the method on its thread (recursion is not double
// counted); exclusive times count every frame.
struct MethodStats {
    // The fields of the kernel's struct jmt_method_stats (JMT_METHOD_STATS, jmethodtime.h).
#define JMT_STATS_FIELD(name) uint64_t name = 0;
    JMT_METHOD_STATS(JMT_STATS_FIELD, JMT_STATS_FIELD, JMT_STATS_FIELD)
#undef JMT_STATS_FIELD
    Latency latency;  // the returned calls' own times (a method's and a row's; empty for a call path)

    MethodStats &operator+=(const MethodStats &o);
    MethodStats &operator-=(const MethodStats &o);  // o must be an earlier total of the same rows
};

// Blocked time (ns): elapsed time neither on a CPU nor waiting in a run queue for
// one (sleeping, I/O, locks, parking); on-CPU + run-queue + blocked = elapsed.
// The probes' cost is on-CPU time, so taking it out of elapsed and on-CPU time
// leaves run-queue and blocked time as they were.
uint64_t blocked_incl_ns(const MethodStats &s);
uint64_t blocked_excl_ns(const MethodStats &s);

// [lo, hi] (ns) of each corrected time: the time corrected with the high end
// of the per-event cost range, and with its low end (cost/correction.h).
struct TimeBounds {
    uint64_t wall_incl_ns[2] = {0, 0};
    uint64_t wall_excl_ns[2] = {0, 0};
    uint64_t cpu_incl_ns[2] = {0, 0};
    uint64_t cpu_excl_ns[2] = {0, 0};
    uint64_t wall_foreign_ns[2] = {0, 0};
    uint64_t cpu_foreign_ns[2] = {0, 0};
    // The inclusive elapsed time's [lo, hi] is wider than the cost taken out of
    // it: the bounds then say less of the time than the correction does.
    bool wider_than_correction = false;
};

struct MethodRow;
// --per-thread: the row's thread, kernel (its tid) or virtual (its id with the top bit set); 0: all threads.
uint64_t row_thread(const MethodRow &r);

struct MethodRow {
    std::string klass;             // JVM form: org/postgresql/jdbc/PgResultSet
    std::string method;            // getString
    std::string signature;         // (I)Ljava/lang/String;
    bool probe_dominated = false;  // corrected times: see probe_dominated (cost/correction.h)
    uint32_t tid = 0;              // --per-thread: the thread's id (0: all threads, or a virtual thread's row)
    uint64_t vthread = 0;          // --per-thread: a virtual thread's id (java.lang.Thread's tid) for its calls
                                   // open across an unmount; 0 in other rows
    int pid = 0;                   // several JVMs with --per-jvm: the row's JVM (0: all JVMs)
    std::string thread;            // --per-thread: the thread's name
    MethodStats stats;
    TimeBounds bounds;  // corrected times only (Profile::corrected)
};

// "org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;": the row's method in JVM form.
std::string qualified_name(const MethodRow &r);

// Counters the tracer keeps for what it could not measure exactly.
struct Diagnostics {
    // Every counter of JMT_DIAGNOSTICS (jmethodtime.h): the kernel's and userspace's.
#define JMT_DIAG_FIELD(NAME, name) uint64_t name = 0;
#define JMT_DIAG_USER_FIELD(name) uint64_t name = 0;
    JMT_DIAGNOSTICS(JMT_DIAG_FIELD, JMT_DIAG_USER_FIELD)
#undef JMT_DIAG_FIELD
#undef JMT_DIAG_USER_FIELD
};

// Time one probe event adds to every frame open on its thread (ns): the trap
// into the kernel and the program's run (cost/calibrate.h, cost/cost_range.h). Whole ns, so
// corrections stay additive: a frame's correction is exactly its exclusive
// correction plus its callees' inclusive ones.
struct ProbeCost {
    uint64_t traced_event_ns = 0;    // an event of a traced method
    uint64_t rejected_event_ns = 0;  // an event of a method the package filter rejects
};

// What the probes cost the traced JVM over a report's window. Every Java
// call traps once the probes are attached, whatever the filter: filtered-out
// events cost nearly as much as traced ones.
struct Overhead {
    uint64_t events = 0;         // probe events (entries and returns, traced or filtered out)
    uint64_t traced_events = 0;  // of them, events of traced methods
    uint64_t jvm_cpu_ns = 0;     // the JVM's CPU time (every thread, user and system); 0: unknown
    bool jvm_cpu_early = false;  // the JVM was gone at the end: jvm_cpu_ns ends at the last reading
                                 // (up to one reading period earlier), so the share is a little high
    // ns the JVM's threads, traced or not, waited runnable for a CPU (the kernel's runq_ns); nullopt: unknown.
    std::optional<uint64_t> jvm_runq_ns;

    // Worked out once the trace's probe cost is decided (cost/overhead.h's
    // settle_overhead), and read by every output that states them:
    uint64_t trap_ns = 0;              // the events' cost to the JVM at trap_cost
    std::optional<double> trap_share;  // of jvm_cpu_ns; nullopt: unknown
    std::optional<double> runq_share;  // jvm_runq_ns of the runnable time; nullopt: unknown
    bool saturated = false;            // runq_share >= kSaturatedRunqShare
};

// Totals at one moment, from which windows' Overhead are taken: the programs'
// event counters since attach and a reading of the JVM's CPU time.
struct OverheadTotals {
    uint64_t events = 0;                  // every entry and return
    uint64_t traced_events = 0;           // of them, the traced methods' (a traced call's entry and return)
    std::optional<uint64_t> jvm_cpu_ns;   // process_cpu_ns; nullopt: not read
    std::optional<uint64_t> jvm_runq_ns;  // the kernel's runq_ns counter; nullopt: not read
};

// Totals from the programs' counters (enum jmt_counter), without a CPU reading.
OverheadTotals event_totals(uint64_t entries, uint64_t returns, uint64_t traced_calls);

enum class CostSource {
    Calibrated,  // the calibration: too few gaps to measure a trap in the JVM
    Gaps,        // the gaps' edge plus the refill after a trap (cost/cost_range.h)
    Paid,        // what the JVM paid per event: its CPU per I/O call traced against untraced
    Windows,     // what the JVM paid per event: windows after the trace with one probe detached
};

// The gaps between consecutive probe events of one thread (bpf/gaps.h).
struct GapSummary {
    uint64_t samples = 0;  // gaps counted (the overflow bucket left out)
    uint64_t edge_ns = 0;  // their low edge: one event's cost to the JVM, with no Java code between
    uint64_t median_ns = 0;
};

enum class CostBasis {
    Gaps,         // the range starts at the JVM's own lower edge of the gaps
    Calibration,  // too few gaps: the range starts below the calibration
};

enum class CostTop {
    JvmCpu,         // the JVM's whole CPU time over the window per probe event: no event costs more on average
    TrapAndRefill,  // above that average: one event's trap and the most refill after it (cost/cost_range.h)
    Unmeasured,     // the JVM's CPU time unknown: a multiple of the low end (cost/cost_range.h)
};

// Work a JVM did over a window, probes on or off: the CPU time of its threads
// (its JIT compilers' left out: a switch's recompiles are not the traps' cost)
// and the I/O calls that CPU time served (read and write system calls, which a
// server makes per request, traced or not).
struct JvmWork {
    uint64_t cpu_ns = 0;       // the threads' CPU time (schedstat), ns
    uint64_t io_calls = 0;     // read and write system calls (/proc/PID/io syscr + syscw)
    uint64_t duration_ns = 0;  // the window's wall time; 0: not read
};

// What one probe event cost the JVM in its own code, measured after the trace
// in windows with both method probes, the return probe alone and the entry
// probe alone attached (cost/probe_windows.h): trap, refill wherever it
// landed, and programs. per_event_ns 0: not measured (why, when tried).
struct ProbeWindowsCost {
    uint64_t entry_ns = 0, return_ns = 0;
    uint64_t per_event_ns = 0;  // their average over the both-probe windows' events
    uint64_t windows = 0;       // windows measured, of the three kinds
    uint64_t duration_ns = 0;   // the measurement's wall time
    // The gaps' edge over the both-probe windows and over the trace (0: too few
    // gaps); when both are known, the figures above hold the trace's edge and
    // the windows' cost above theirs (a host slower in the trace than after it).
    uint64_t gaps_edge_ns = 0, trace_gaps_edge_ns = 0;
    // What timing the programs (kernel.bpf_stats) added to an event beyond their
    // run time, taken out of the figures: the timed windows' gaps' edge over the
    // untimed ones' (0: not measured).
    uint64_t programs_timing_ns = 0;
    bool before_trace = false;  // --cost-before: the windows ran before the trace, not after it
    std::string why;
};

// ns of CPU time per I/O call over the window (0 without I/O calls).
double cpu_per_io_call(const JvmWork &work);

// The per-event costs a trace's times may have paid: every corrected time
// lies between the times corrected with hi (its low end) and with lo; likely
// is the cost taken out (or, with --raw, the traps' price).
struct CostRange {
    ProbeCost lo, hi, likely;
    CostBasis basis = CostBasis::Calibration;
    CostTop top = CostTop::Unmeasured;
    uint64_t jvm_ns_per_event = 0;  // the JVM's CPU time per probe event over the window; 0: unknown
    // What one event cost the JVM, from its CPU per I/O call traced against
    // untraced (cost/evidence.h), averaged over traced and filtered-out events;
    // 0: not measured (paid_why says why).
    uint64_t paid_ns_per_event = 0;
    std::string paid_why;
    CostSource likely_from = CostSource::Calibrated;  // Paid, Windows, Gaps or Calibrated
    bool paid_capped = false;  // lowered so that the widest row keeps a share of the untraced CPU (cost/evidence.h)
};

// How the traced JVMs' method probes were had (jvm/probe_access.h).
struct ProbesInfo {
    // "at_start": -XX:+DTraceMethodProbes from the JVM's start, every compiled
    // method calls them; "switched": on at run time for the filter's classes
    // only; "mixed": both (several JVMs); empty: not said (older reports).
    std::string access;
    uint32_t classes = 0;       // switched: classes retransformed
    uint32_t unmodifiable = 0;  // classes the filter takes that cannot be (hidden classes)
    double settle_s = 0;        // waited for compiles to settle before the switch
    bool settled = true;        // false: the wait's limit came first
    // The JVM's hot methods (compiled when the agent last deoptimized them) when the flag
    // went on, and how many had compiled again; cold: most had not, so the trace trapped
    // about as widely as the flag at start would (cold_cause: which deoptimization).
    uint32_t hot_methods = 0;
    uint32_t hot_back = 0;
    bool cold = false;
    std::string cold_cause;
    // After the end: the methods the end deoptimized (compiled during the trace, with probe
    // calls) and how many compiled again before jmethodtime ended; end_cold: most had not (no
    // traffic), a cold spot the next trace pays for.
    uint32_t end_methods = 0;
    uint32_t end_back = 0;
    bool end_cold = false;
    // The methods compiled during the trace the end left with their probe calls, for the JVM's
    // agent to take out once traffic is back (a quiet JVM keeps them, and the next trace stays narrow).
    uint32_t end_deferred = 0;
};

struct Profile {
    int pid = 0;
    uint64_t duration_ns = 0;               // wall time of the trace
    std::vector<std::string> packages;      // JVM-form prefixes, empty = all
    std::vector<std::string> class_globs;   // --class, JVM form; empty = all
    std::vector<std::string> method_globs;  // --method; empty = all
    std::vector<MethodRow> methods;         // every traced method with calls > 0
    uint64_t slower_than_ns = 0;            // --slower-than (0: off)
    std::vector<SlowCall> slow_calls;  // its calls in the window, the slowest first (diag.slow_calls_dropped: the rest)
    Diagnostics diag;
    ProbeCost probe_cost;       // cost taken out (zero with --raw): cost/correction.h
    Overhead overhead;          // what the probes cost the JVM (see Overhead)
    ProbeCost calibrated_cost;  // the calibration's estimate for the trace's time
    ProbeCost latency_cost;   // what the kernel took out of each call's histogram time (start-up calibration; 0: --raw)
    size_t cost_samples = 0;  // calibration samples behind it (1: start-up only)
    CostSource cost_source = CostSource::Calibrated;  // how probe_cost was decided
    std::vector<uint64_t> gap_hist;                   // the window's gap histogram (JMT_GAP_BUCKETS counts)
    GapSummary gaps;                                  // its summary
    JvmWork untraced_work;                            // the JVM's work before its probes went on (duration 0: none)
    JvmWork traced_work;                              // its work over this window
    ProbeWindowsCost probe_windows;                   // the final report's: after (or before) the trace
    CostRange cost_range;                             // probe_cost lies in it; every corrected time has bounds from it
    bool corrected = false;                           // methods' times have the probe cost taken out
    std::string jdk_version;                          // the target JDK's JAVA_VERSION; empty when unknown
    // JDK 21+: the traced JVM has virtual threads; their traced frames follow
    // them across unmounts unless virtual_threads_not_followed says why not.
    bool virtual_threads = false;
    std::string virtual_threads_not_followed;
    bool per_thread = false;            // --per-thread: rows split by thread, even when there are none
    std::vector<int> jvm_pids;          // several JVMs (--match): their pids; empty with one
    bool per_jvm = false;               // --per-jvm with several JVMs: rows carry their JVM's pid
    bool foreign = false;               // --foreign: stats carry the time inside untraced callees
    bool latency = false;               // rows carry latency histograms (traced without --no-latency)
    uint32_t interval = 0;              // -i: 1, 2, ... for the report of that interval; 0: whole trace
    uint64_t end_unix_ns = 0;           // -i: wall-clock end of the interval (ns since the epoch)
    std::vector<ReportSource> sources;  // the traced JVM and its host; a merge's every source (model/merge.h)
    // Kernel memory (bytes) of the tool's BPF maps and programs, the calibration's
    // included, as the kernel counted it at the end of the window; 0: unknown (a merge).
    uint64_t kernel_memory_bytes = 0;
    uint32_t method_ids = 0;  // method ids the kernel handed out (model of kernel_memory_bytes)
    // Names of the first methods --package rejected, and --class/--method (why_empty.h).
    std::vector<std::string> rejected_by_package, rejected_by_globs;
    // Other tracers on the same probes ("pid 12 (jmethodtime)"), traced with --shared-probes.
    std::vector<std::string> shared_probes;
    ProbesInfo probes;
};

// Foreign: wall_foreign_ns; Runq*: runq_*_ns; Blocked*: blocked_*_ns.
enum class SortKey { Calls, Incl, Excl, CpuIncl, CpuExcl, Foreign, RunqIncl, RunqExcl, BlockedIncl, BlockedExcl };

// Whether rows are split by thread (--per-thread): some row carries a tid.
bool per_thread_rows(const std::vector<MethodRow> &rows);
// Whether rows are split by JVM (several JVMs, --per-jvm): some row carries a pid.
bool per_jvm_rows(const std::vector<MethodRow> &rows);
// Whether the reports of profile show threads: profile.per_thread or per_thread_rows.
bool per_thread_profile(const struct Profile &profile);

// Rows sorted descending by key (ties: by class, method, signature, tid ascending).
std::vector<MethodRow> sorted_rows(const std::vector<MethodRow> &rows, SortKey key);

// Rows with at least min_calls calls, in their order.
std::vector<MethodRow> rows_with_min_calls(const std::vector<MethodRow> &rows, uint64_t min_calls);

// The calls completed between two snapshots: now less before, matched by
// (class, method, signature, tid); rows without new calls are left out.
std::vector<MethodRow> rows_since(const std::vector<MethodRow> &now, const std::vector<MethodRow> &before);

// Merges rows with equal (class, method, signature, tid), summing their stats.
std::vector<MethodRow> merge_rows(const std::vector<MethodRow> &rows);

// Rows of several JVMs: one row per JVM (per_jvm), or their sum (pid 0).
std::vector<MethodRow> jvm_rows(std::vector<MethodRow> rows, bool per_jvm);

}  // namespace jmt
