/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ABI shared by jmethodtime.bpf.c and the userspace loader.
 * Plain fixed-width types only; includes nothing from vmlinux.h.
 */
#ifndef JMETHODTIME_H
#define JMETHODTIME_H

#ifdef __BPF__
/* __u32/__u64 come from vmlinux.h in the BPF build. */
#else
#include <linux/types.h>
#endif

/* Compile-time checks in the headers shared by C (BPF) and C++. */
#ifdef __cplusplus
#define JMT_STATIC_ASSERT static_assert
#else
#define JMT_STATIC_ASSERT _Static_assert
#endif
#define JMT_POWER_OF_TWO(n) ((n) > 0 && ((n) & ((n)-1)) == 0)
/* A function shared by the programs and userspace (its unit tests). */
#ifdef __BPF__
#define JMT_SHARED_FN static __always_inline
#else
#define JMT_SHARED_FN static inline
#endif

/* Frames stored per thread; deeper traced frames are counted, not stored. */
#define JMT_MAX_DEPTH 256
/* Distinct traced methods (ids 1..JMT_MAX_METHODS-1; id 0 is never used). */
#define JMT_MAX_METHODS 65536
/* Kernel memory (bytes) one per-CPU totals array (stats, path_stats) may
 * take: on hosts with many CPUs the loader lowers the method and path id
 * limits below JMT_MAX_METHODS / JMT_MAX_PATHS to stay within it. */
#define JMT_PERCPU_BUDGET (128ULL << 20)
/* Totals (stats, path_stats) are per-CPU arrays of JMT_TOTALS_CHUNK ids each,
 * created by userspace ahead of the ids handed out (loader/totals_chunks.h):
 * their memory follows the methods and paths traced, not the limits. */
#define JMT_TOTALS_CHUNK_SHIFT 6
#define JMT_TOTALS_CHUNK (1u << JMT_TOTALS_CHUNK_SHIFT)
/* Ids whose totals may wait in totals_overflow for their chunk; a path id's
 * key there carries JMT_OVERFLOW_PATH, a thread row's JMT_OVERFLOW_ROW. A
 * probe program that preempted another on its CPU adds there too, under the
 * key with JMT_OVERFLOW_NESTED. */
#define JMT_TOTALS_OVERFLOW 16384
/* Preallocated entries of totals_spill, for the totals_overflow entries the
 * kernel could not allocate (at most; fewer on hosts with many CPUs). */
#define JMT_TOTALS_SPILL 128
#define JMT_OVERFLOW_PATH (1u << 31)
#define JMT_OVERFLOW_NESTED (1u << 30)
/* Entries of the method table (traced and rejected methods); allocated as
 * methods are first seen, plus 16 bytes of bucket per entry up front. */
#define JMT_MAX_METHOD_KEYS 262144
/* Slots of the per-CPU direct-mapped cache in front of the method table, at
 * most; the loader takes fewer on hosts with many CPUs (JMT_CACHE_BUDGET). */
#define JMT_METHOD_CACHE_SLOTS 4096
/* Kernel memory (bytes) each per-CPU cache (method_cache, path_cache) may take
 * over all CPUs: on 2 CPUs 4096 slots; on 96 and 192 CPUs 1024 and 512. */
#define JMT_CACHE_BUDGET (8ULL << 20)
#define JMT_MIN_CACHE_SLOTS 256
/* Names of the first methods each filter stage rejected, kept for the report
 * that says why nothing was traced: slots [0, N) --package (first methods),
 * [N, 2N) --class or --method (first method of each class). */
#define JMT_REJECTED_EXAMPLES 8
/* The groups of rejected-method examples: rejected_taken[group], and slots
 * group * JMT_REJECTED_EXAMPLES and up of rejected_examples. */
enum jmt_reject_group { JMT_REJECTED_BY_PACKAGE, JMT_REJECTED_BY_GLOBS, JMT_REJECT_GROUPS };
/* Classes remembered to count classes_rejected_by_globs (once each). */
#define JMT_MAX_REJECTED_CLASSES 16384
/* Package prefixes given by --package, each at most JMT_PREFIX_LEN bytes. */
#define JMT_MAX_PREFIXES 16
#define JMT_PREFIX_LEN 256
/* Globs given by --class and by --method (each kind at most JMT_MAX_GLOBS,
 * each at most JMT_GLOB_LEN - 1 bytes); '*' matches any run, '?' one byte. */
#define JMT_MAX_GLOBS 8
#define JMT_GLOB_LEN 128
/* Steps the kernel spends on one glob against one name before it gives up
 * (counted, and the method is not traced): 32 steps per byte of the longest
 * class name, far above practical patterns, below pathological ones (glob.h). */
#define JMT_GLOB_STEPS (1U << 15)
/* Kinds of globs: index of globs[] in the programs' rodata. */
enum jmt_glob_kind { JMT_GLOB_CLASS, JMT_GLOB_METHOD, JMT_GLOB_KINDS };
/* Bytes of each name kept by the kernel (bytes); longer names are
 * completed by userspace from /proc/PID/mem while the JVM lives. */
#define JMT_CLASS_BUF 1024
#define JMT_METHOD_BUF 512
#define JMT_SIG_BUF 1024

/* JVMs one trace follows (--match REGEX matching several). */
#define JMT_MAX_TARGETS 16

/* Method identity as the probes give it: each word is the address of an
 * interned Symbol body with its length (bytes) in bits 48..63; with several
 * JVMs, jvm is the process id (the same address holds other names in another
 * JVM), 0 otherwise. */
struct jmt_method_key {
	__u64 klass;
	__u64 method;
	__u64 sig;
	__u32 jvm;
	__u32 pad; /* 0: hashed with the rest */
};

struct jmt_method_info {
	__u32 id;     /* index into the stats array; 0 when not traced */
	__u32 traced; /* 1 when the filters (package, class and method globs) keep the method */
};

/* Names of one traced method, read once, length-exact (not NUL-terminated). */
struct jmt_names {
	__u64 class_addr, method_addr, sig_addr; /* target addresses (for long names) */
	__u32 class_len, method_len, sig_len;	 /* full lengths (bytes) */
	__u32 read_ok;				 /* 1 when all three reads succeeded */
	__u32 jvm;				 /* the method key's jvm: its process, 0 with one JVM */
	__u32 pad;
	char klass[JMT_CLASS_BUF];
	char method[JMT_METHOD_BUF];
	char sig[JMT_SIG_BUF];
};

/* Per-method totals, per CPU; all times in ns. Inclusive times count only
 * the outermost active frame of the method on its thread (no double
 * counting under recursion); exclusive times count every frame.
 *
 * The fields, written once: JMT_METHOD_STATS(CALLS, VALUE, FOREIGN) names
 * each field of struct jmt_method_stats, in order, through the macro of its
 * kind: CALLS(calls), one per closed frame; VALUE(name), a value a closed
 * frame adds (struct jmt_closed, frames.h, has the same field); FOREIGN(name),
 * likewise, under --foreign only. Expanded by the record itself, the closed
 * frame, the kernel's adds and userspace's MethodStats (JMT_NO_FIELD: skip a kind). */
#define JMT_METHOD_STATS(CALLS, VALUE, FOREIGN)                                                   \
	CALLS(calls)                                                                              \
	VALUE(wall_incl_ns)                                                                       \
	VALUE(wall_excl_ns)                                                                       \
	VALUE(cpu_incl_ns)                                                                        \
	VALUE(cpu_excl_ns)                                                                        \
	VALUE(runq_incl_ns) /* waiting runnable for a CPU; blocked = wall - cpu - runq */         \
	VALUE(runq_excl_ns)                                                                       \
	VALUE(unreturned)  /* calls closed without a return probe (see JMT_CNT_DROPPED_FRAMES) */ \
	VALUE(events_incl) /* probe events inside the outermost frames (each costs one trap) */   \
	VALUE(events_excl) /* probe events inside frames, less those inside traced callees */     \
	VALUE(traced_incl) /* of events_incl, events of traced methods */                         \
	VALUE(traced_excl) /* of events_excl, events of traced methods */                         \
	/* Virtual threads: blocks of the frame's carrier while its virtual thread   \
	 * could not unmount (pinned), inclusive: how many, how long (ns), and how   \
	 * many of them because a monitor was held (JDK 21 to 23's synchronized). */            \
	VALUE(pinned)                                                                             \
	VALUE(pinned_ns)                                                                          \
	VALUE(pinned_monitor)                                                                     \
	/* --foreign (0 otherwise): of the exclusive values, the part spent inside      \
	 * untraced callees (time in traced methods they call back excluded). */         \
	FOREIGN(wall_foreign_ns)                                                                  \
	FOREIGN(cpu_foreign_ns)                                                                   \
	FOREIGN(events_foreign)                                                                   \
	FOREIGN(traced_foreign)

#define JMT_NO_FIELD(name)
#define JMT_U64_FIELD(name) __u64 name;

/* Latency histogram of a method's calls: each returned call's own elapsed
 * time (ns, the probes' cost taken out at the start-up calibration's rate),
 * log-linear. Bucket 0 holds [0, 64); bucket i in 1..JMT_LAT_BUCKETS-2 holds
 * [(16 + s) << (o - 4), (17 + s) << (o - 4)) with o = 6 + (i - 1) / 16 and
 * s = (i - 1) % 16 (16 buckets per power of two: each at most 1/16 of its low
 * edge wide); the last holds 2^38 ns (275 s) and over. */
#define JMT_LAT_SUB_BITS 4
#define JMT_LAT_MIN_SHIFT 6
#define JMT_LAT_MAX_SHIFT 38
#define JMT_LAT_BUCKETS (2 + ((JMT_LAT_MAX_SHIFT - JMT_LAT_MIN_SHIFT) << JMT_LAT_SUB_BITS))

struct jmt_latency {
	__u64 min_plus_1_ns; /* the least call's time + 1; 0: no call yet */
	__u64 max_ns;
	__u32 buckets[JMT_LAT_BUCKETS];
};

/* The bucket of a call of ns (see struct jmt_latency). */
JMT_SHARED_FN __u32 jmt_lat_bucket(__u64 ns)
{
	__u64 v = ns;
	__u32 msb = 0;

	if (ns < (1ULL << JMT_LAT_MIN_SHIFT))
		return 0;
	if (ns >= (1ULL << JMT_LAT_MAX_SHIFT))
		return JMT_LAT_BUCKETS - 1;
	if (v >> 32) {
		v >>= 32;
		msb += 32;
	}
	if (v >> 16) {
		v >>= 16;
		msb += 16;
	}
	if (v >> 8) {
		v >>= 8;
		msb += 8;
	}
	if (v >> 4) {
		v >>= 4;
		msb += 4;
	}
	if (v >> 2) {
		v >>= 2;
		msb += 2;
	}
	if (v >> 1)
		msb += 1;
	return 1 + ((msb - JMT_LAT_MIN_SHIFT) << JMT_LAT_SUB_BITS) +
		(__u32)((ns >> (msb - JMT_LAT_SUB_BITS)) & ((1u << JMT_LAT_SUB_BITS) - 1));
}

/* A method's totals, then its latency histogram (methods and --per-thread
 * rows; a call path's totals stop before it: JMT_PATH_STATS_SIZE). */
struct jmt_method_stats {
	JMT_METHOD_STATS(JMT_U64_FIELD, JMT_U64_FIELD, JMT_U64_FIELD)
	struct jmt_latency latency;
};

/* --slower-than: one call of a traced method over the threshold, sent
 * through the slow_calls ring buffer at its return. */
#define JMT_SLOW_PATH 32
#define JMT_SLOW_RING_BYTES (1u << 20)
struct jmt_slow_call {
	__u64 end_ns;	  /* CLOCK_MONOTONIC at the return probe's program */
	__u64 wall_ns;	  /* the call's elapsed time, as measured */
	__u64 latency_ns; /* the same, less its probe events at the start-up cost (its histogram's time) */
	__u64 cpu_ns;
	__u64 runq_ns;
	__u64 vthread; /* the virtual thread it ran on when it was open across an unmount, else 0 */
	__u32 tid;
	__u32 id;		   /* method id */
	__u32 depth;		   /* traced frames open below it (its callers) */
	__u32 path_len;		   /* of them in path: the outermost JMT_SLOW_PATH */
	__u32 path[JMT_SLOW_PATH]; /* method ids, outermost first */
	char comm[16];		   /* the thread's name at the return */
};

/* A call path's totals: struct jmt_method_stats without its histogram. */
struct jmt_path_stats {
	JMT_METHOD_STATS(JMT_U64_FIELD, JMT_U64_FIELD, JMT_U64_FIELD)
};

/* --per-thread: a (thread, method) row's id, 1..JMT_MAX_THREAD_ROWS-1, handed out
 * at its first closed frame; its totals are chunked like the methods' (key of
 * totals_overflow: row id | JMT_OVERFLOW_ROW). */
#define JMT_MAX_THREAD_ROWS 131072
#define JMT_OVERFLOW_ROW (1u << 29)
/* Slots of each thread's direct-mapped cache of its row ids, by method id. */
#define JMT_ROW_SLOTS 64
/* --per-thread: names (comm) of traced threads, recorded when their state is created. */
#define JMT_MAX_THREAD_NAMES 65536
#define JMT_COMM_LEN 16

/* Call paths (--folded, --tree, --flamegraph, --pprof): path ids 2..JMT_MAX_PATHS-1
 * name a (parent path, method) pair; 0 is "no parent" (a thread's outermost
 * traced frame); JMT_PATH_TRUNCATED is the one node that counts the frames
 * entered after the path table filled, and every frame above them. */
#define JMT_MAX_PATHS 65536
#define JMT_PATH_TRUNCATED 1
/* Slots of the per-CPU direct-mapped cache in front of the path table. */
#define JMT_PATH_CACHE_SLOTS 4096

struct jmt_path_key {
	__u32 parent; /* parent path id, 0 at the outermost traced frame */
	__u32 id;     /* method id */
};

/* A thread's clocks at one probe event (clock.h). */
struct jmt_clock {
	__u64 wall_ns;
	__u64 cpu_ns;
	__u64 events;  /* probe events of the thread so far, this one included */
	__u64 traced;  /* of those, events of traced methods */
	__u64 runq_ns; /* ns the thread waited runnable for a CPU (preempted, or woken and not yet run) */
};

/* Virtual threads (JDK 21+): traced frames of unmounted virtual threads,
 * parked in the kernel until their next mount (vthread_frames.h). */
#define JMT_MAX_PARKED_FRAMES 65536
#define JMT_MAX_PARKED_VTHREADS 16384

/* A parked frame: the idx-th (from the bottom) of virtual thread vtid of JVM tgid. */
struct jmt_parked_key {
	__u64 vtid; /* java.lang.Thread's tid */
	__u32 tgid;
	__u32 idx;
};

/* An unmounted virtual thread's parked frames: frames idx 0..n-1 stored, beyond
 * more only counted (beyond JMT_MAX_DEPTH); foreign_start: the top frame's
 * open foreign segment (--foreign), parked like a frame's clocks. */
struct jmt_parked {
	__u32 n;
	__u32 beyond;
	struct jmt_clock foreign_start;
};

/* Where a JVM keeps what the hooks read (bytes), from its VMStructs once it has
 * initialised them; set by userspace per traced JVM, all 0 until then. */
struct jmt_vt_layout {
	__u64 vthread_offset;	 /* JavaThread::_vthread: OopHandle, an oop* to the mounted java.lang.Thread */
	__u64 cont_entry_offset; /* JavaThread::_cont_entry: ContinuationEntry* on the carrier's stack */
	__u64 tid_offset;	 /* java.lang.Thread's tid field (a long) in its object */
	__u64 stack_base_offset; /* Thread::_stack_base: the highest address of the carrier's stack */
	__u64 stack_size_offset; /* Thread::_stack_size (bytes) */
	/* Generational ZGC: the lowest of the 4 remapped bits of a coloured
	 * pointer (ZPointerRemappedShift); the address is the pointer shifted right
	 * past its one set remapped bit. 0: references are plain addresses. */
	__u64 zpointer_remapped_shift;
};

struct jmt_thread_key {
	__u32 tid;     /* kernel thread id (init pid namespace); 0 in a virtual thread's row */
	__u32 id;      /* method id */
	__u64 vthread; /* a virtual thread's id (java.lang.Thread's tid), 0 in a kernel thread's row */
};

/*
 * The diagnostic counters, written once, in the order of the JSON report:
 * JMT_DIAGNOSTICS(K, U) calls K(NAME, name) for each counter the kernel keeps
 * (enum jmt_counter: JMT_CNT_NAME, one u64 each in the per-CPU record below)
 * and U(name) for each one userspace adds. Expanded by the enum, userspace's
 * Diagnostics, its copy of the kernel's counters, and the reports (what a
 * count means, in words, is userspace's: user/report/diagnostic_texts.h).
 */
#define JMT_DIAGNOSTICS(K, U)                                                                                                          \
	/* method__entry events seen */                                                                                                \
	K(ENTRIES, entries)                                                                                                            \
	/* method__return events seen */                                                                                               \
	K(RETURNS, returns)                                                                                                            \
	/* traced frames pushed */                                                                                                     \
	K(TRACED_CALLS, traced_calls)                                                                                                  \
	/* traced frames beyond JMT_MAX_DEPTH (calls counted, time charged to the deepest stored frame) */                             \
	K(DEPTH_OVERFLOW, depth_overflow)                                                                                              \
	/* returns of traced methods with no open frame (entered before attach) */                                                     \
	K(UNMATCHED_RETURNS, unmatched_returns)                                                                                        \
	/* frames whose return never fired, closed at the next matching return */                                                      \
	K(DROPPED_FRAMES, dropped_frames)                                                                                              \
	/* per-thread state could not be allocated: event ignored */                                                                   \
	K(THREAD_STATE_FAIL, thread_state_fail)                                                                                        \
	/* method table or id space full: method not traced */                                                                         \
	K(METHOD_TABLE_FULL, method_table_full)                                                                                        \
	/* names of a traced method could not be stored or read */                                                                     \
	K(NAMES_FAIL, names_fail)                                                                                                      \
	/* probe arguments could not be read */                                                                                        \
	K(ARG_FAIL, arg_fail)                                                                                                          \
	/* userspace: names longer than the kernel buffer (or unreadable), not completed from the JVM's memory */                      \
	U(truncated_names)                                                                                                             \
	/* per-thread states created */                                                                                                \
	K(THREADS_TRACED, threads_traced)                                                                                              \
	/* per-thread states freed when their thread exited */                                                                         \
	K(THREADS_ENDED, threads_ended)                                                                                                \
	/* --class/--method globs given up after JMT_GLOB_STEPS steps: method not traced */                                            \
	K(GLOB_BUDGET_OUT, glob_budget_out)                                                                                            \
	/* --per-thread: closed frames not split by thread (table full); global totals still have them */                              \
	K(THREAD_ROWS_FULL, thread_rows_full)                                                                                          \
	/* call paths not stored (path table full): counted under [truncated] */                                                       \
	K(PATHS_FULL, paths_full)                                                                                                      \
	/* frames whose on-CPU time ran ahead of elapsed time: clamped to it */                                                        \
	K(CPU_CLAMPED, cpu_clamped)                                                                                                    \
	/* switch-ins or switch-outs of traced threads the sched_switch program missed (on-CPU time resynchronised) */                 \
	K(SWITCH_UNSEEN, switch_unseen)                                                                                                \
	/* --foreign: frames with an untraced callee whose return never fired (its time after that counted as foreign, or given up) */ \
	K(FOREIGN_LOST, foreign_lost)                                                                                                  \
	/* ns the target's threads, traced or not, waited runnable for a CPU (sched_switch, sched_wakeup) */                           \
	K(RUNQ_NS, runq_ns)                                                                                                            \
	/* classes the JVM unloaded while traced (hotspot:class__unloaded) */                                                          \
	K(CLASSES_UNLOADED, classes_unloaded)                                                                                          \
	/* method table entries of unloaded classes dropped: their names' memory may be reused */                                      \
	K(METHODS_FORGOTTEN, methods_forgotten)                                                                                        \
	/* methods met for the first time (one per method table entry made) */                                                         \
	K(METHODS_SEEN, methods_seen)                                                                                                  \
	/* of them, left untraced by --package, by --class, by --method (filters run in that order) */                                 \
	K(REJECTED_BY_PACKAGE, rejected_by_package)                                                                                    \
	K(REJECTED_BY_CLASS, rejected_by_class)                                                                                        \
	K(REJECTED_BY_METHOD, rejected_by_method)                                                                                      \
	/* classes with a method that --package let through and --class/--method rejected */                                           \
	K(CLASSES_REJECTED_BY_GLOBS, classes_rejected_by_globs)                                                                        \
	/* first sights of a method deferred: programs preempted inside each other held every scratch level */                         \
	K(SCRATCH_BUSY, scratch_busy)                                                                                                  \
	/* closed frames whose totals chunk did not exist yet and totals_overflow was full: not counted */                             \
	K(TOTALS_NOT_READY, totals_not_ready)                                                                                          \
	/* virtual threads unmounted with traced frames open: their frames parked */                                                   \
	K(VT_UNMOUNTS, vt_unmounts)                                                                                                    \
	/* virtual threads mounted again: their parked frames back on a carrier */                                                     \
	K(VT_MOUNTS, vt_mounts)                                                                                                        \
	/* traced frames of an unmounting virtual thread that could not be parked */                                                   \
	K(VT_FRAMES_LOST, vt_frames_lost)                                                                                              \
	/* unmounts and mounts of virtual threads not followed: the JVM's layout unread or unsupported */                              \
	K(VT_UNFOLLOWED, vt_unfollowed)                                                                                                \
	/* pinned blocks inside traced frames by freeze's reason, and their ns */                                                      \
	K(PINNED_CRITICAL, pinned_critical)                                                                                            \
	K(PINNED_NATIVE, pinned_native)                                                                                                \
	K(PINNED_MONITOR, pinned_monitor)                                                                                              \
	K(PINNED_OTHER, pinned_other)                                                                                                  \
	K(PINNED_NS, pinned_ns)                                                                                                        \
	/* hooks whose continuation entry lay outside the carrier's stack: the layout is not the JVM's */                              \
	K(VT_LAYOUT_MISMATCH, vt_layout_mismatch)                                                                                      \
	/* --slower-than: calls over the threshold not recorded (the ring buffer was full) */                                          \
	K(SLOW_CALLS_LOST, slow_calls_lost)                                                                                            \
	/* compat programs: returns of methods not met since the attach, left without a verdict (entered before it) */                 \
	K(RETURNS_UNJUDGED, returns_unjudged)                                                                                          \
	/* userspace: --slower-than: calls recorded but not kept (over --slow-calls, the slowest kept) */                              \
	U(slow_calls_dropped)

#define JMT_CNT_ENUM(NAME, name) JMT_CNT_##NAME,
#define JMT_CNT_NONE(name)

enum jmt_counter {
	JMT_DIAGNOSTICS(JMT_CNT_ENUM, JMT_CNT_NONE) JMT_CNT_NR,
};

/* Histogram of the gaps between consecutive probe events of a thread (gaps.h):
 * 32 buckets per power of two up to 2^JMT_GAP_TOP_LOG2 ns, then one overflow bucket. */
#define JMT_GAP_SUB_BITS 5
#define JMT_GAP_TOP_LOG2 17
#define JMT_GAP_BUCKETS (((JMT_GAP_TOP_LOG2 - JMT_GAP_SUB_BITS) << JMT_GAP_SUB_BITS) + (1 << JMT_GAP_SUB_BITS) + 1)

/* Per-CPU scratch buffers (names, glob state) of a method's first sight, one
 * per level of programs preempted inside each other on one CPU (a kernel
 * with preempt=full, lazy or RT can preempt a probe program). */
#define JMT_SCRATCH_LEVELS 3

/* Per-CPU record: one lookup per probe event serves every field. */
struct jmt_cpu {
	/* Probe events of the target thread running on this CPU since it
	 * switched in; added to its events_total at switch-out. */
	__u64 slice_events;
	/* Scratch levels in use on this CPU: a preempting program finishes
	 * before the preempted one goes on, so it is a stack. */
	__u32 scratch_depth;
	/* Probe programs running on this CPU, preempted ones included: 1 for a
	 * program that preempted none, which alone adds to the totals' chunks. */
	__u32 running;
	__u64 counters[JMT_CNT_NR];
	__u64 gap_hist[JMT_GAP_BUCKETS]; /* gaps (gaps.h) of the threads that ran on this CPU */
};

/* Registers by number, for USDT arguments read straight from pt_regs. One
 * numbering per architecture; the programs are built for one of them and
 * read the numbers of that one. 0 is no register on both. */
/* x86-64 */
enum jmt_reg {
	JMT_REG_NONE = 0,
	JMT_REG_AX,
	JMT_REG_BX,
	JMT_REG_CX,
	JMT_REG_DX,
	JMT_REG_SI,
	JMT_REG_DI,
	JMT_REG_BP,
	JMT_REG_SP,
	JMT_REG_R8,
	JMT_REG_R9,
	JMT_REG_R10,
	JMT_REG_R11,
	JMT_REG_R12,
	JMT_REG_R13,
	JMT_REG_R14,
	JMT_REG_R15,
};
/* arm64: x0 to x30 are 1 to 31 (user_pt_regs.regs[n]), sp is 32. */
#define JMT_REG_ARM64_X(n) (1 + (n))
#define JMT_REG_ARM64_SP 32

/* Sizes that index masks assume: (n - 1) masks a power of two. */
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_MAX_DEPTH), "JMT_IDX masks a depth with JMT_MAX_DEPTH - 1");
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_METHOD_CACHE_SLOTS), "method_info masks the fingerprint");
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_PATH_CACHE_SLOTS), "path_of masks its hash");
JMT_STATIC_ASSERT(JMT_PATH_CACHE_SLOTS <= (1u << 12), "path_of's index is the top 12 bits of a 32-bit hash");
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_CLASS_BUF), "class_kept masks indices into the class buffer");
JMT_STATIC_ASSERT(JMT_MAX_METHODS <= (1u << 31), "method ids are u32 and 0 is never one");
JMT_STATIC_ASSERT(sizeof(struct jmt_method_key) == 32, "the method key has no hidden padding (it is hashed)");
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_MIN_CACHE_SLOTS) && JMT_MIN_CACHE_SLOTS <= JMT_PATH_CACHE_SLOTS,
		  "the loader's cache masks are powers of two within the cache maps");
JMT_STATIC_ASSERT(JMT_MAX_METHODS < JMT_OVERFLOW_ROW && JMT_MAX_PATHS < JMT_OVERFLOW_ROW &&
			  JMT_MAX_THREAD_ROWS < JMT_OVERFLOW_ROW,
		  "totals_overflow keys: an id, JMT_OVERFLOW_ROW, JMT_OVERFLOW_NESTED and JMT_OVERFLOW_PATH apart");
JMT_STATIC_ASSERT(JMT_MAX_METHODS % JMT_TOTALS_CHUNK == 0 && JMT_MAX_PATHS % JMT_TOTALS_CHUNK == 0 &&
			  JMT_MAX_THREAD_ROWS % JMT_TOTALS_CHUNK == 0,
		  "id >> JMT_TOTALS_CHUNK_SHIFT indexes the chunk arrays");
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_ROW_SLOTS), "account_thread masks the method id");
JMT_STATIC_ASSERT(sizeof(struct jmt_path_stats) % 8 == 0 && sizeof(struct jmt_method_stats) % 8 == 0,
		  "per-CPU values are read in 8-byte slots");

#endif /* JMETHODTIME_H */
