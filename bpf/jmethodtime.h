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

/* Frames stored per thread; deeper traced frames are counted, not stored. */
#define JMT_MAX_DEPTH 256
/* Distinct traced methods (ids 1..JMT_MAX_METHODS-1; id 0 is never used). */
#define JMT_MAX_METHODS 65536
/* Kernel memory (bytes) one per-CPU totals array (stats, path_stats) may
 * take: on hosts with many CPUs the loader lowers the method and path id
 * limits below JMT_MAX_METHODS / JMT_MAX_PATHS to stay within it. */
#define JMT_PERCPU_BUDGET (128ULL << 20)
/* Entries of the method table (traced and rejected methods). */
#define JMT_MAX_METHOD_KEYS 262144
/* Slots of the per-CPU direct-mapped cache in front of the method table. */
#define JMT_METHOD_CACHE_SLOTS 4096
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
#define JMT_GLOB_CLASS 0
#define JMT_GLOB_METHOD 1
/* Bytes of each name kept by the kernel (bytes); longer names are
 * completed by userspace from /proc/PID/mem while the JVM lives. */
#define JMT_CLASS_BUF 1024
#define JMT_METHOD_BUF 512
#define JMT_SIG_BUF 1024

/* Method identity as the probes give it: each word is the address of an
 * interned Symbol body with its length (bytes) in bits 48..63. */
struct jmt_method_key {
	__u64 klass;
	__u64 method;
	__u64 sig;
};

struct jmt_method_info {
	__u32 id;     /* index into the stats array; 0 when not traced */
	__u32 traced; /* 1 when the filters (package, class and method globs) keep the method */
};

/* Names of one traced method, read once, length-exact (not NUL-terminated). */
struct jmt_names {
	__u64 class_addr, method_addr, sig_addr; /* target addresses (for long names) */
	__u32 class_len, method_len, sig_len;    /* full lengths (bytes) */
	__u32 read_ok;                           /* 1 when all three reads succeeded */
	char klass[JMT_CLASS_BUF];
	char method[JMT_METHOD_BUF];
	char sig[JMT_SIG_BUF];
};

/* Per-method totals, per CPU; all times in ns. Inclusive times count only
 * the outermost active frame of the method on its thread (no double
 * counting under recursion); exclusive times count every frame. */
struct jmt_method_stats {
	__u64 calls;
	__u64 wall_incl_ns;
	__u64 wall_excl_ns;
	__u64 cpu_incl_ns;
	__u64 cpu_excl_ns;
	__u64 unreturned; /* calls closed without a return probe (see JMT_CNT_DROPPED_FRAMES) */
	__u64 events_incl; /* probe events inside the outermost frames (each costs one trap) */
	__u64 events_excl; /* probe events inside frames, less those inside traced callees */
	__u64 traced_incl; /* of events_incl, events of traced methods */
	__u64 traced_excl; /* of events_excl, events of traced methods */
	/* --foreign (0 otherwise): of the exclusive values, the part spent inside
	 * untraced callees (time in traced methods they call back excluded). */
	__u64 wall_foreign_ns;
	__u64 cpu_foreign_ns;
	__u64 events_foreign;
	__u64 traced_foreign;
};

/* --per-thread: totals of one method on one thread (value: struct jmt_method_stats). */
#define JMT_MAX_THREAD_ROWS 131072
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

struct jmt_thread_key {
	__u32 tid; /* kernel thread id (init pid namespace) */
	__u32 id;  /* method id */
};

/* Diagnostic counters, one u64 each in the per-CPU record below. */
enum jmt_counter {
	JMT_CNT_ENTRIES = 0,         /* method__entry events seen */
	JMT_CNT_RETURNS,             /* method__return events seen */
	JMT_CNT_TRACED_CALLS,        /* traced frames pushed */
	JMT_CNT_DEPTH_OVERFLOW,      /* traced frames beyond JMT_MAX_DEPTH (calls counted, time charged to the deepest stored frame) */
	JMT_CNT_UNMATCHED_RETURNS,   /* returns of traced methods with no open frame (entered before attach) */
	JMT_CNT_DROPPED_FRAMES,      /* frames whose return never fired, closed at the next matching return */
	JMT_CNT_THREAD_STATE_FAIL,   /* per-thread state could not be allocated: event ignored */
	JMT_CNT_METHOD_TABLE_FULL,   /* method table or id space full: method not traced */
	JMT_CNT_NAMES_FAIL,          /* names of a traced method could not be stored or read */
	JMT_CNT_ARG_FAIL,            /* probe arguments could not be read */
	JMT_CNT_THREADS_TRACED,      /* per-thread states created */
	JMT_CNT_THREADS_ENDED,       /* per-thread states freed when their thread exited */
	JMT_CNT_GLOB_BUDGET_OUT,     /* --class/--method globs given up after JMT_GLOB_STEPS steps: method not traced */
	JMT_CNT_THREAD_ROWS_FULL,    /* --per-thread: closed frames not split by thread (table full); global totals still have them */
	JMT_CNT_PATHS_FULL,          /* call paths not stored (path table full): counted under [truncated] */
	JMT_CNT_CPU_CLAMPED,         /* frames whose on-CPU time ran ahead of elapsed time: clamped to it */
	JMT_CNT_SWITCH_UNSEEN,       /* switch-ins or switch-outs of traced threads the sched_switch program missed (on-CPU time resynchronised) */
	JMT_CNT_FOREIGN_LOST,        /* --foreign: frames with an untraced callee whose return never fired (its time after that counted as foreign, or given up) */
	JMT_CNT_NR,
};

/* Histogram of the gaps between consecutive probe events of a thread (gaps.h):
 * 32 buckets per power of two up to 2^JMT_GAP_TOP_LOG2 ns, then one overflow bucket. */
#define JMT_GAP_SUB_BITS 5
#define JMT_GAP_TOP_LOG2 17
#define JMT_GAP_BUCKETS (((JMT_GAP_TOP_LOG2 - JMT_GAP_SUB_BITS) << JMT_GAP_SUB_BITS) + (1 << JMT_GAP_SUB_BITS) + 1)

/* Per-CPU record: one lookup per probe event serves every field. */
struct jmt_cpu {
	/* Probe events of the target thread running on this CPU since it
	 * switched in; added to its events_total at switch-out. */
	__u64 slice_events;
	__u64 counters[JMT_CNT_NR];
	__u64 gap_hist[JMT_GAP_BUCKETS]; /* gaps (gaps.h) of the threads that ran on this CPU */
};

/* x86-64 registers by number, for USDT arguments read straight from pt_regs. */
enum jmt_reg {
	JMT_REG_NONE = 0,
	JMT_REG_AX, JMT_REG_BX, JMT_REG_CX, JMT_REG_DX, JMT_REG_SI, JMT_REG_DI,
	JMT_REG_BP, JMT_REG_SP, JMT_REG_R8, JMT_REG_R9, JMT_REG_R10, JMT_REG_R11,
	JMT_REG_R12, JMT_REG_R13, JMT_REG_R14, JMT_REG_R15,
};

#endif /* JMETHODTIME_H */
