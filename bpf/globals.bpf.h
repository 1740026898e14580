/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every program shares: the kernel's types and libbpf's helpers, the
 * tunables the loader sets before load, the ids handed out so far, and which
 * JVM an event belongs to. Every *.bpf.h includes it first.
 */
#ifndef JMT_GLOBALS_BPF_H
#define JMT_GLOBALS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "jmethodtime.h"
#include "compat.bpf.h"

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
/* Latency histograms (struct jmt_latency): 1 when every returned call of a
 * traced method is counted in its method's (and --per-thread row's)
 * histogram, its time less its probe events at these costs (ns per event of
 * a traced method, and of one the filter rejects: the start-up calibration;
 * 0 with --raw). */
const volatile __u32 latency_on = 0;
const volatile __u64 lat_traced_event_ns = 0;
const volatile __u64 lat_rejected_event_ns = 0;
/* --slower-than: calls of traced methods whose histogram time is this many ns
 * or more go to the slow_calls ring buffer (0: off). */
const volatile __u64 slower_than_ns = 0;
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
/* The same for class__unloaded's name (0) and its length (1). */
const volatile __u32 fast_unload_args = 0;
const volatile __u8 unload_arg_reg[2] = {};
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

/* The index of tgid among the traced JVMs (target_tgids), -1 when not one. */
static __always_inline int target_index(__u32 tgid)
{
	for (__u32 i = 0; i < JMT_MAX_TARGETS; i++) {
		if (i >= n_targets)
			break;
		if (target_tgids[i] == tgid)
			return (int)i;
	}
	return -1;
}

static __always_inline int is_target(__u32 tgid)
{
	return target_index(tgid) >= 0;
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

#endif /* JMT_GLOBALS_BPF_H */
