// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jmethodtime: per-method call counts, inclusive/exclusive elapsed and on-CPU
 * time from HotSpot's method__entry/method__return USDT probes, aggregated in
 * the kernel. Nothing is sent to userspace per event.
 *
 * This file holds the tunables and the two probes' programs; the parts they
 * use are in headers named for their jobs, included after the tunables:
 * helpers.bpf.h (shared helpers), counters.bpf.h (per-CPU record), args.bpf.h (probe arguments),
 * filters.bpf.h (--package, --class, --method), methods.bpf.h (method table,
 * names), threads.bpf.h (thread state, on-CPU clock, sched programs),
 * totals.bpf.h (per-method, per-path, per-thread totals), paths.bpf.h (call
 * path ids), vthreads.bpf.h (virtual threads' unmounts and mounts); callstack.h and glob.h are the pure parts the unit tests run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "jmethodtime.h"
#include "callstack.h"
#include "glob.h"
#include "gaps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Tunables, set by the loader between open and load. The scalars every
 * event reads come first, together (64 bytes: one or two cache lines); the
 * filters' tables, read at a method's first sight, after them. */
/* The traced JVMs: target_tgids[i], i < n_targets (at least one). */
const volatile __u32 n_targets = 1;
/* 1 when the probes are attached for every process that maps libjvm (several
 * JVMs of one libjvm, all with the probes on, all traced): the probe programs
 * then keep only the targets' events. */
const volatile __u32 filter_tgids = 0;
/* --per-thread: 1 when traced threads' names are kept (thread_names) and
 * frames dropped on the cold path go to per-thread rows too; the return
 * probe's program is then handle_return_t, which adds every closed frame to
 * its thread's row (row_stats). */
const volatile __u32 per_thread = 0;
/* Call paths (--folded, --tree, --flamegraph, --pprof): 1 when each traced
 * frame carries its path id and closing it adds to path_stats. */
const volatile __u32 call_paths = 0;
/* --foreign: 1 when untraced methods' events inside a traced frame time the
 * frame's untraced callees (callstack.h), at the cost of a thread-state
 * lookup on every untraced event. */
const volatile __u32 foreign = 0;
/* Id limits: method ids < max_method_ids, path ids < max_path_ids (the
 * chunks the loader may create for stats and path_stats, at most
 * JMT_MAX_METHODS and JMT_MAX_PATHS). */
const volatile __u32 max_method_ids = JMT_MAX_METHODS;
const volatile __u32 max_path_ids = JMT_MAX_PATHS;
/* --per-thread: row ids < max_row_ids (at most JMT_MAX_THREAD_ROWS). */
const volatile __u32 max_row_ids = JMT_MAX_THREAD_ROWS;
/* Index masks of the per-CPU caches: slots - 1 as the loader sized them
 * (a power of two from JMT_MIN_CACHE_SLOTS up to the maps' declared slots). */
const volatile __u32 method_cache_mask = JMT_METHOD_CACHE_SLOTS - 1;
const volatile __u32 path_cache_mask = JMT_PATH_CACHE_SLOTS - 1;
/* When fast_args is set, USDT argument i (1..6) is read straight from the
 * pt_regs register numbered arg_reg[i] (enum jmt_reg); otherwise through
 * libbpf's generic bpf_usdt_arg(). */
const volatile __u32 fast_args = 0;
const volatile __u8 arg_reg[7] = {};
/*
 * Tests only: ns every probe event spins before its work (JMT_TEST_TRAP_NS), so
 * that one host stands in for hosts whose traps cost more (page-table
 * isolation: 5 us and up). Only the tool's programs spin, the calibration's
 * instance too, as a slower trap would. 0 in use: the verifier removes the spin.
 */
const volatile __u64 test_trap_ns = 0;
/* The traced JVMs (see n_targets). */
const volatile __u32 target_tgids[JMT_MAX_TARGETS] = {};
const volatile __u32 n_prefixes = 0;
const volatile struct {
	__u32 len;
	char s[JMT_PREFIX_LEN];
} prefixes[JMT_MAX_PREFIXES] = {};
/* --class and --method globs (JVM form, see glob.h): a method is traced when
 * its class has one of the prefixes, its class name matches one of the class
 * globs and its name one of the method globs; an empty list keeps everything. */
const volatile __u32 n_class_globs = 0;
const volatile __u32 n_method_globs = 0;
/* globs[JMT_GLOB_CLASS][i], i < n_class_globs, and globs[JMT_GLOB_METHOD][i],
 * i < n_method_globs: len bytes of s, len < JMT_GLOB_LEN. */
const volatile struct {
	__u32 len;
	char s[JMT_GLOB_LEN];
} globs[JMT_GLOB_KINDS][JMT_MAX_GLOBS] = {};

/* Highest method id handed out so far (ids start at 1). */
__u32 last_method_id = 0;
/* Highest path id handed out so far (ids from JMT_PATH_TRUNCATED + 1 up). */
__u32 last_path_id = JMT_PATH_TRUNCATED;
/* --per-thread: highest row id handed out so far (ids start at 1). */
__u32 last_row_id = 0;

/* Whether tgid is one of the traced JVMs. */
static __always_inline int is_target(__u32 tgid)
{
	for (__u32 i = 0; i < JMT_MAX_TARGETS; i++) {
		if (i >= n_targets)
			break;
		if (target_tgids[i] == tgid)
			return 1;
	}
	return 0;
}

/* The probe event's JVM for the method key (0 with one JVM), or -1 for an
 * event of a process that is not traced (filter_tgids). */
static __always_inline long event_jvm(void)
{
	__u32 tgid;

	if (n_targets <= 1 && !filter_tgids)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (filter_tgids && !is_target(tgid))
		return -1;
	return n_targets > 1 ? tgid : 0;
}

#include "helpers.bpf.h"
#include "counters.bpf.h"
#include "args.bpf.h"
#include "filters.bpf.h"
#include "methods.bpf.h"
#include "threads.bpf.h"
#include "totals.bpf.h"
#include "paths.bpf.h"
#include "vthreads.bpf.h"

/* --foreign: an untraced method's entry (or return) inside a traced frame
 * opens (or closes) the frame's foreign segment when it is the first (last)
 * untraced call open above it; the clock is read only then. */
static __always_inline void foreign_event(struct jmt_cpu *cpu, const int is_entry)
{
	struct jmt_thread *t = thread_state(0);
	struct jmt_clock now;

	if (!t)
		return;
	if (is_entry) {
		if (jmt_foreign_enter(t)) {
			thread_clock(t, cpu, &now);
			jmt_foreign_open(t, &now);
		}
	} else if (jmt_foreign_leave(t)) {
		thread_clock(t, cpu, &now);
		jmt_foreign_close(t, &now);
	}
}

/* callstack.h's hooks: closed frames go to the maps (no sink). */
static __always_inline void jmt_account(struct jmt_sink *sink, struct jmt_thread *t,
					const struct jmt_closed *c, const int with_threads)
{
	account(t, c, with_threads);
}

static __always_inline void jmt_dropped(struct jmt_sink *sink, struct jmt_thread *t,
					const struct jmt_closed *c)
{
	account(t, c, per_thread); /* rodata: pruned at load when off */
	count(JMT_CNT_DROPPED_FRAMES);
}

static long spin_until(__u64 index, void *deadline_ns)
{
	return bpf_ktime_get_ns() >= *(__u64 *)deadline_ns;
}

static __always_inline void test_trap(void)
{
	__u64 deadline_ns;

	if (!test_trap_ns)
		return;
	deadline_ns = bpf_ktime_get_ns() + test_trap_ns;
	/* Each iteration reads the clock: 1 << 20 of them outlast any test_trap_ns used. */
	bpf_loop(1 << 20, spin_until, &deadline_ns, 0);
}

/* callstack.h's hook: the return address of the probe's function, whose
 * frame pointer is bp (0 when unreadable). */
static __always_inline __u64 jmt_read_call_site(struct jmt_sink *sink, __u64 bp)
{
	__u64 call_site = 0;

	if (bpf_probe_read_user(&call_site, sizeof(call_site), (void *)(bp + 8)))
		return 0;
	return call_site;
}

/* Both probes' first steps: counts the event and finds its method's verdict.
 * 1 when the method is traced (*fp and *info set); 0 when the event ends here
 * (unreadable, first sight deferred, or untraced: --foreign's part done). */
static __always_inline int traced_event(struct pt_regs *ctx, struct jmt_cpu *cpu, long jvm, const int is_entry,
					__u32 *fp, struct jmt_method_info *info)
{
	struct jmt_method_key k;

	cpu->slice_events += 1;
	bump(cpu, is_entry ? JMT_CNT_ENTRIES : JMT_CNT_RETURNS);
	if (read_key(ctx, &k)) {
		bump(cpu, JMT_CNT_ARG_FAIL);
		return 0;
	}
	k.jvm = jvm;
	k.pad = 0;
	*fp = jmt_fingerprint(&k);
	/* The verdict first: a rejected method's event needs nothing else
	 * (but its callers' foreign time under --foreign). */
	if (method_info(&k, *fp, info))
		return 0;
	if (!info->traced) {
		if (foreign)
			foreign_event(cpu, is_entry);
		return 0;
	}
	return 1;
}

/* The entry probe's body (cpu->running counts it). */
static __always_inline void on_entry(struct pt_regs *ctx, struct jmt_cpu *cpu, long jvm)
{
	struct jmt_method_info info;
	struct jmt_thread *t;
	struct jmt_clock now;
	__u64 bp, sp, call_site;
	__u32 fp, path;

	if (!traced_event(ctx, cpu, jvm, 1, &fp, &info))
		return;
	t = thread_state(1);
	if (!t)
		return;
	/* The probe's function keeps a frame pointer: bp + 16 is its caller's sp
	 * (x86), or that sp less the function's constant frame size (arm64, whose
	 * frame record is at the bottom of the frame): the Java frame's, the same
	 * for every event of one compiled frame. */
	bp = JMT_CTX_FP(ctx);
	sp = bp + 16;
	call_site = jmt_call_site(t, 0, info.id, sp, bp);
	if (jmt_top_is_stale(t, info.id, sp, call_site)) {
		struct jmt_drop_ctx dc = { .t = t, .id = info.id, .sp = sp, .call_site = call_site,
					   .on_entry = 1, .foreign = foreign };

		jmt_loop(JMT_MAX_DEPTH, jmt_drop_one, &dc);
	}
	/* Before the clock: the lookup's time is the caller's, like the trap's. */
	path = call_paths ? path_of(jmt_parent_path(t), info.id) : 0;
	t->traced_total += 1;
	thread_clock(t, cpu, &now);
	bump(cpu, JMT_CNT_TRACED_CALLS);
	if (jmt_push(t, info.id, fp, &now, sp, call_site, path, foreign))
		bump(cpu, JMT_CNT_DEPTH_OVERFLOW);
}


/* The return probe's body (cpu->running counts it); with_threads is a
 * constant: the program without per-thread rows (handle_return) is compiled
 * exactly as if they did not exist. */
static __always_inline void on_return(struct pt_regs *ctx, struct jmt_cpu *cpu, long jvm, const int with_threads)
{
	struct jmt_method_info info;
	struct jmt_thread *t;
	struct jmt_clock now;
	__u32 fp;

	if (!traced_event(ctx, cpu, jvm, 0, &fp, &info))
		return;
	t = thread_state(0);
	if (!t || t->depth == 0) {
		bump(cpu, JMT_CNT_UNMATCHED_RETURNS);
		return;
	}
	t->traced_total += 1;
	thread_clock(t, cpu, &now);

	if (jmt_return(t, info.id, fp, &now, 0, foreign, with_threads))
		bump(cpu, JMT_CNT_UNMATCHED_RETURNS);
}

/* A probe program: the event's body (entry or return, with_threads: constants)
 * counted in this CPU's running programs. */
static __always_inline int probe(struct pt_regs *ctx, const int entry, const int with_threads)
{
	struct jmt_cpu *cpu = this_cpu();
	long jvm = event_jvm();

	test_trap();
	if (!cpu || jvm < 0)
		return 0;
	cpu->running += 1;
	if (entry)
		on_entry(ctx, cpu, jvm);
	else
		on_return(ctx, cpu, jvm, with_threads);
	cpu->running -= 1;
	return 0;
}

SEC("usdt")
int handle_entry(struct pt_regs *ctx)
{
	return probe(ctx, 1, 0);
}

/* hotspot:class__unloaded(name, name length, loader, shared): rare, so its
 * arguments take libbpf's generic reader. */
SEC("usdt")
int handle_class_unloaded(struct pt_regs *ctx)
{
	long name = 0, len = 0;

	if (event_jvm() < 0)
		return 0;
	if (bpf_usdt_arg(ctx, 0, &name) || bpf_usdt_arg(ctx, 1, &len)) {
		count(JMT_CNT_ARG_FAIL);
		return 0;
	}
	forget_class(jmt_pack_name(name, len));
	return 0;
}

/* The loader keeps one of the two: handle_return, or handle_return_t for --per-thread. */
SEC("usdt")
int handle_return(struct pt_regs *ctx)
{
	return probe(ctx, 0, 0);
}

SEC("usdt")
int handle_return_t(struct pt_regs *ctx)
{
	return probe(ctx, 0, 1);
}
