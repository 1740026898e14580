/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * frames.h's hooks in the programs: the thread's clocks, call paths, call
 * sites read from user memory, closed frames into the totals' maps, counters
 * into this CPU's record. (The parked frames' hooks are vthreads.bpf.h's.)
 */
#ifndef JMT_SINK_BPF_H
#define JMT_SINK_BPF_H

#include "globals.bpf.h"
#include "counters.bpf.h"
#include "threads.bpf.h"
#include "totals.bpf.h"
#include "paths.bpf.h"
#include "callstack.h"

/* The event's CPU record; at a virtual thread's unmount or mount, the key of
 * its parked frames (idx set per frame; 0 at a probe event, which parks
 * nothing: two words to set up per event). */
struct jmt_sink {
	struct jmt_cpu *cpu;
	struct jmt_parked_key *key;
};

static __always_inline void jmt_event_clock(struct jmt_sink *sink, struct jmt_thread *t, struct jmt_clock *now)
{
	thread_clock(t, sink->cpu, now);
}

static __always_inline void jmt_hook_clock(struct jmt_sink *sink, struct jmt_thread *t, struct jmt_clock *now)
{
	thread_clock_now(t, sink->cpu, now);
}

static __always_inline __u32 jmt_entry_path(struct jmt_sink *sink, const struct jmt_thread *t, __u32 id)
{
	return call_paths ? path_of(jmt_parent_path(t), id) : 0;
}

static __always_inline __u64 jmt_read_call_site(struct jmt_sink *sink, __u64 bp)
{
	__u64 call_site = 0;

	if (bpf_probe_read_user(&call_site, sizeof(call_site), (void *)(bp + 8)))
		return 0;
	return call_site;
}

static __always_inline void jmt_account(struct jmt_sink *sink, struct jmt_thread *t, const struct jmt_closed *c,
					const int with_threads)
{
	account(t, c, with_threads);
}

static __always_inline void jmt_dropped(struct jmt_sink *sink, struct jmt_thread *t, const struct jmt_closed *c)
{
	account(t, c, per_thread); /* rodata: pruned at load when off */
	bump(sink->cpu, JMT_CNT_DROPPED_FRAMES);
}

static __always_inline void jmt_count(struct jmt_sink *sink, __u32 c, __u64 n)
{
	bump_by(sink->cpu, (enum jmt_counter)c, n);
}

#if !JMT_HAS_BPF_LOOP
/* compat.bpf.h's search of jmt_find: its loop on the running thread's state
 * (the one its caller holds), 0 when it has none. (compat_vt_split: vthreads.bpf.h.) */
__noinline int compat_find(__u64 id)
{
	struct jmt_thread *t = jmt_current_task_get(&threads, 0);
	struct jmt_find_ctx fc = {.id = id};

	if (!t)
		return 0;
	fc.t = t;
	for (__u32 i = 0; i < JMT_MAX_DEPTH; i++)
		if (jmt_find_one(i, &fc))
			break;
	return fc.match;
}

#endif

#endif /* JMT_SINK_BPF_H */
