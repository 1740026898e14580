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

#if !JMT_HAS_BPF_LOOP
/* compat.bpf.h: a closed frame's record in a map, not on the stack (208 bytes
 * of 5.10's 512 for a program and the calls below it), one per nesting level
 * of the CPU's probe programs (cpu->running; deeper, a frame stays open,
 * counted in totals_not_ready): slot level, jmt_return's record;
 * JMT_COMPAT_LEVELS + level, a dropped frame's, for compat_account_dropped. */
#define JMT_COMPAT_LEVELS 4
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * JMT_COMPAT_LEVELS);
	__type(key, __u32);
	__type(value, struct jmt_closed);
} compat_closed SEC(".maps");

/* This CPU's record at base (0: a return's, JMT_COMPAT_LEVELS: a drop's) for
 * the running program's level, zeroed; 0, counted, when there is none. */
static __always_inline struct jmt_closed *compat_closed_record(struct jmt_cpu *cpu, __u32 base)
{
	__u32 level = cpu->running, key = base + level;
	struct jmt_closed *rec = level < JMT_COMPAT_LEVELS ? bpf_map_lookup_elem(&compat_closed, &key) : 0;

	if (!rec) {
		bump(cpu, JMT_CNT_TOTALS_NOT_READY);
		return 0;
	}
	__builtin_memset(rec, 0, sizeof(*rec));
	return rec;
}

static __always_inline struct jmt_cpu *jmt_sink_cpu(struct jmt_sink *sink);
#define JMT_CLOSED_RECORD(sink, name, kind) \
	struct jmt_closed *name = compat_closed_record(jmt_sink_cpu(sink), (kind) ? JMT_COMPAT_LEVELS : 0)
#endif

#include "callstack.h"

/* The event's CPU record; at a virtual thread's unmount or mount, the key of
 * its parked frames (idx set per frame; 0 at a probe event, which parks
 * nothing: two words to set up per event). */
struct jmt_sink {
	struct jmt_cpu *cpu;
	struct jmt_parked_key *key;
};

static __always_inline struct jmt_cpu *jmt_sink_cpu(struct jmt_sink *sink)
{
	return sink->cpu;
}

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

#if !JMT_HAS_BPF_LOOP
/* A dropped frame's totals on the running thread, from its record in
 * compat_closed (JMT_COMPAT_LEVELS + level): a global function, verified once,
 * not once per step of the drop loops (whose bodies, with --per-thread and call
 * paths or --foreign inline, took 5.10's verifier past a million instructions). */
__noinline int compat_account_dropped(__u64 level)
{
	__u32 key = JMT_COMPAT_LEVELS + (level & (JMT_COMPAT_LEVELS - 1));
	struct jmt_thread *t = jmt_current_task_get(&threads, 0);
	struct jmt_closed *c = bpf_map_lookup_elem(&compat_closed, &key);

	if (!t || !c)
		return 0;
	account(t, c, per_thread);
	return 0;
}
#endif

static __always_inline void jmt_dropped(struct jmt_sink *sink, struct jmt_thread *t, const struct jmt_closed *c)
{
#if JMT_HAS_BPF_LOOP
	account(t, c, per_thread); /* rodata: pruned at load when off */
#else
	/* c is the running level's drop record (JMT_CLOSED_RECORD). */
	compat_account_dropped(sink->cpu->running);
#endif
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
