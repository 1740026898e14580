/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Totals of closed frames: per method (stats), per call path (path_stats)
 * and, under --per-thread, per (thread, method) row (row_stats).
 */
#ifndef JMT_TOTALS_BPF_H
#define JMT_TOTALS_BPF_H

#include "globals.bpf.h"
#include "helpers.bpf.h"
#include "counters.bpf.h"
#include "frames.h"

/* One chunk of totals: ids chunk * JMT_TOTALS_CHUNK and up, per CPU, values
 * struct jmt_method_stats (sizes, not types: clang leaves a type reached only
 * through the outer map's pointer a forward declaration of unknown size). */
struct jmt_totals_chunk {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_TOTALS_CHUNK);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct jmt_method_stats));
};

/* Method totals by id, chunk by chunk: userspace creates each chunk before
 * the method ids in it are handed out (loader/totals_chunks.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, JMT_MAX_METHODS / JMT_TOTALS_CHUNK);
	__type(key, __u32);
	__array(values, struct jmt_totals_chunk);
} stats SEC(".maps");

/* One chunk of call paths' totals: values struct jmt_path_stats (no histogram). */
struct jmt_path_chunk {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_TOTALS_CHUNK);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct jmt_path_stats));
};

/* --per-thread: (thread, method) -> row id, handed out at the row's first
 * closed frame (row_of_slow); userspace reads it to name the rows. The loader
 * shrinks it (and row_stats, thread_names) to one entry when per_thread is off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_THREAD_ROWS);
	__type(key, struct jmt_thread_key);
	__type(value, __u32);
} row_ids SEC(".maps");

/* One chunk of thread rows: one entry for all CPUs, as only the row's own
 * thread writes it (see account_thread). */
struct jmt_row_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JMT_TOTALS_CHUNK);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct jmt_method_stats));
};

/* --per-thread rows' totals by row id, chunk by chunk like stats. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, JMT_MAX_THREAD_ROWS / JMT_TOTALS_CHUNK);
	__type(key, __u32);
	__array(values, struct jmt_row_chunk);
} row_stats SEC(".maps");

/* Call paths: per-path totals of the path's last frame (inclusive = the
 * frame's own time, recursion included); ids from path_ids (paths.bpf.h).
 * The loader shrinks it to one entry when call_paths is off. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, JMT_MAX_PATHS / JMT_TOTALS_CHUNK);
	__type(key, __u32);
	__array(values, struct jmt_path_chunk);
} path_stats SEC(".maps");

/* Totals of ids whose chunk userspace has not created yet (a burst of new
 * methods or paths outran it: adding a chunk waits for an RCU grace period).
 * Key: the method id, or the path id | JMT_OVERFLOW_PATH. Userspace adds them
 * to the chunk's totals, so the sums stay exact. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_TOTALS_OVERFLOW);
	__type(key, __u32);
	__type(value, struct jmt_method_stats);
} totals_overflow SEC(".maps");

/* totals_overflow's entries that the kernel could not allocate: without
 * preallocation a per-CPU hash draws each new entry from a per-CPU cache of a
 * few, refilled asynchronously, so a burst of first sights on one CPU can find
 * it empty (an app server's first request: 27 lost calls in one trace). These
 * are preallocated. Same keys; userspace adds both tables to the chunks'. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, JMT_TOTALS_SPILL);
	__type(key, __u32);
	__type(value, struct jmt_method_stats);
} totals_spill SEC(".maps");

static const struct jmt_method_stats zero_totals = {};

/* This CPU's entry of totals_overflow under key, else of totals_spill; 0, and
 * counted, when neither can hold it. A key already in the spill stays there:
 * its later frames do not retry the overflow's allocation. */
static __always_inline struct jmt_method_stats *overflow_at(__u32 key)
{
	struct jmt_method_stats *s = bpf_map_lookup_elem(&totals_overflow, &key);

	if (s)
		return s;
	s = bpf_map_lookup_elem(&totals_spill, &key);
	if (s)
		return s;
	bpf_map_update_elem(&totals_overflow, &key, &zero_totals, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&totals_overflow, &key);
	if (s)
		return s;
	bpf_map_update_elem(&totals_spill, &key, &zero_totals, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&totals_spill, &key);
	if (!s)
		count(JMT_CNT_TOTALS_NOT_READY);
	return s;
}

/* This CPU's totals of id in chunked totals (stats or path_stats), or in
 * totals_overflow or totals_spill under overflow_key while the id's chunk
 * does not exist; 0, and counted, when neither can hold it. */
static __always_inline struct jmt_method_stats *totals_at(void *chunks, __u32 id, __u32 overflow_key)
{
	__u32 chunk = id >> JMT_TOTALS_CHUNK_SHIFT;
	__u32 slot = id & (JMT_TOTALS_CHUNK - 1);
	void *totals = bpf_map_lookup_elem(chunks, &chunk);

	if (totals)
		return bpf_map_lookup_elem(totals, &slot);
	return overflow_at(overflow_key);
}

/* A returned call's own elapsed time (ns) less its probe events' cost at the
 * start-up rate (lat_*_event_ns), at least 0. */
static __always_inline __u64 call_latency_ns(const struct jmt_closed *c)
{
	__u64 cost =
		c->frame_traced * lat_traced_event_ns + (c->frame_events - c->frame_traced) * lat_rejected_event_ns;

	return c->frame_wall_ns > cost ? c->frame_wall_ns - cost : 0;
}

/* Counts returned call c in its method's (or row's) histogram, unless it has
 * no time of its own (dropped, or beyond JMT_MAX_DEPTH); atomic: the bucket's
 * add, for totals that nested programs share (min and max stay plain there: a
 * race may lose one extreme, never a count). Its time and bucket are worked
 * out here, after the totals' lookups: none is live across a call (5.10: the
 * compat return program, method_info_slow and method_record within 512 bytes
 * of stack together). */
static __always_inline void add_latency(struct jmt_latency *l, const struct jmt_closed *c, int atomic)
{
	__u64 ns, b;

	if (!latency_on || c->frame_events == 0)
		return;
	ns = call_latency_ns(c);
	b = jmt_lat_bucket(ns);
	/* The check on the register the access uses (clang may check a copy; 5.10 keeps no bounds
	 * of a narrower one). */
	asm volatile("" : "+r"(b));
	if (b >= JMT_LAT_BUCKETS)
		return;
	if (atomic)
		__sync_fetch_and_add(&l->buckets[b], 1);
	else
		l->buckets[b]++;
	if (ns > l->max_ns)
		l->max_ns = ns;
	if (ns + 1 < l->min_plus_1_ns || l->min_plus_1_ns == 0)
		l->min_plus_1_ns = ns + 1;
}

/* --slower-than: the calls recorded (loader: one page when off). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, JMT_SLOW_RING_BYTES);
} slow_calls SEC(".maps");

/* Records returned call c of thread t (its frame closed: t's stored frames
 * are its callers), ns its histogram time. */
static __always_inline void send_slow_call(struct jmt_thread *t, const struct jmt_closed *c, __u64 ns)
{
	struct jmt_slow_call *r = bpf_ringbuf_reserve(&slow_calls, sizeof(*r), 0);
	__u32 depth = t->depth, n = 0;

	if (!r) {
		count(JMT_CNT_SLOW_CALLS_LOST);
		return;
	}
	r->end_ns = bpf_ktime_get_ns();
	r->wall_ns = c->frame_wall_ns;
	r->latency_ns = ns;
	r->cpu_ns = c->frame_cpu_ns;
	r->runq_ns = c->frame_runq_ns;
	r->vthread = c->vthread;
	r->tid = t->tid;
	r->id = c->id;
	r->depth = depth;
	for (__u32 i = 0; i < JMT_SLOW_PATH; i++) {
		if (i >= depth || i >= JMT_MAX_DEPTH)
			break;
		r->path[i] = t->frames[JMT_IDX(i)].id;
		n++;
	}
	r->path_len = n;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, 0);
}

/* How a closed frame adds into totals: a method's or row's (its histogram
 * too), or a call path's, whose inclusive values are the frame's own (a
 * path's frames are never double counted, recursion included). */
enum jmt_totals_kind { JMT_TOTALS_METHOD, JMT_TOTALS_PATH };

/* A path's inclusive values, each from the closed frame's own. */
#define JMT_PATH_INCL(X)               \
	X(wall_incl_ns, frame_wall_ns) \
	X(cpu_incl_ns, frame_cpu_ns)   \
	X(runq_incl_ns, frame_runq_ns) \
	X(events_incl, frame_events)   \
	X(traced_incl, frame_traced)

/* Plain adds of a closed frame into totals of kind (a constant; exact when
 * only one program at a time writes them: see account and account_thread).
 * A path's are made from the method's adds, moved by the frame's own values
 * less the method's (no copy of c: 5.10's 512 bytes of stack). */
static __always_inline void add_closed(struct jmt_method_stats *s, const struct jmt_closed *c,
				       const enum jmt_totals_kind kind)
{
	jmt_add_closed(s, c);
	if (foreign)
		jmt_add_foreign(s, c);
	if (kind == JMT_TOTALS_PATH) {
#define JMT_TO_OWN(incl, own) s->incl += c->own - c->incl;
		JMT_PATH_INCL(JMT_TO_OWN)
#undef JMT_TO_OWN
	} else {
		add_latency(&s->latency, c, 0);
	}
}

/* The row id of (thread tid, method id), handed out at first sight; 0 when
 * the rows are all handed out (or the table is full). */
static __noinline __u32 row_of_slow(__u32 tid, __u32 id, __u64 vthread)
{
	struct jmt_thread_key key = {.tid = tid, .id = id, .vthread = vthread};
	__u32 *found, row;

	found = bpf_map_lookup_elem(&row_ids, &key);
	if (found)
		return *found;
	row = next_id(&last_row_id, max_row_ids, JMT_ID_ROW);
	if (!row || bpf_map_update_elem(&row_ids, &key, &row, BPF_NOEXIST))
		return 0;
	return row;
}

/*
 * --per-thread: adds a closed frame to the (thread t, method) row, its id from
 * the thread's own cache (no lookup by key once seen). Only the thread of a
 * row writes it, one program at a time (drop_one's bpf_loop runs inside the
 * thread's own program), so plain adds into its one entry (or, while its
 * chunk is not made, this CPU's entry of totals_overflow) are exact whatever
 * the CPU and the preemption model. When no row can be had the frame stays in
 * the global totals only, and thread_rows_full counts it.
 */
static __always_inline void account_thread(struct jmt_thread *t, const struct jmt_closed *c)
{
	struct jmt_row_slot *slot = &t->rows[c->id & (JMT_ROW_SLOTS - 1)];
	struct jmt_method_stats *s;
	__u32 row = slot->row;

	if (c->vthread) {
		/* A virtual thread's call (open across an unmount): its row is
		 * shared by its carriers, one at a time. */
		row = row_of_slow(0, c->id, c->vthread);
		if (row == 0) {
			count(JMT_CNT_THREAD_ROWS_FULL);
			return;
		}
	} else if (slot->id != c->id || row == 0) {
		row = row_of_slow(t->tid, c->id, 0);
		if (row == 0) {
			count(JMT_CNT_THREAD_ROWS_FULL);
			return;
		}
		slot->id = c->id;
		slot->row = row;
	}
	s = totals_at(&row_stats, row, row | JMT_OVERFLOW_ROW);
	if (!s) {
		count(JMT_CNT_THREAD_ROWS_FULL);
		return;
	}
	add_closed(s, c, JMT_TOTALS_METHOD);
}

/*
 * Adds a closed frame to this CPU's totals of id. A probe program that
 * preempted none on this CPU (cpu->running == 1) owns the chunks' entries and
 * adds plainly: a program that preempts it runs to its end before it goes on,
 * and adds elsewhere, atomically (to the entry of totals_overflow under
 * JMT_OVERFLOW_NESTED, which several nested programs may share). So the sums
 * stay exact whatever the kernel's preemption model, at the cost of plain adds.
 */
static __always_inline void add_totals(void *chunks, __u32 id, __u32 overflow_key, const struct jmt_closed *c,
				       const enum jmt_totals_kind kind)
{
	struct jmt_cpu *cpu = this_cpu();
	struct jmt_method_stats *s;

	if (cpu && cpu->running <= 1) {
		s = totals_at(chunks, id, overflow_key);
		if (s)
			add_closed(s, c, kind);
		return;
	}
	s = overflow_at(overflow_key | JMT_OVERFLOW_NESTED);
	if (!s)
		return;
#define JMT_ATOMIC_ONE(name) __sync_fetch_and_add(&s->name, 1);
#define JMT_ATOMIC_ADD(name) jmt_atomic_add(&s->name, c->name);
	JMT_METHOD_STATS(JMT_ATOMIC_ONE, JMT_ATOMIC_ADD, JMT_NO_FIELD)
	if (foreign) {
		JMT_METHOD_STATS(JMT_NO_FIELD, JMT_NO_FIELD, JMT_ATOMIC_ADD)
	}
#undef JMT_ATOMIC_ONE
#undef JMT_ATOMIC_ADD
	if (kind == JMT_TOTALS_PATH) {
#define JMT_ATOMIC_TO_OWN(incl, own) jmt_atomic_add(&s->incl, c->own - c->incl);
		JMT_PATH_INCL(JMT_ATOMIC_TO_OWN)
#undef JMT_ATOMIC_TO_OWN
	} else {
		add_latency(&s->latency, c, 1);
	}
}

/* Adds a closed frame to its call path's totals (JMT_TOTALS_PATH). */
static __always_inline void account_path(const struct jmt_closed *c)
{
	if (c->path)
		add_totals(&path_stats, c->path, c->path | JMT_OVERFLOW_PATH, c, JMT_TOTALS_PATH);
}

/* Adds a closed frame to its method's totals, to its call path's when paths
 * are on, and, when with_threads (a constant, or the per_thread rodata on
 * cold paths), to its thread's row. The row first: userspace reads the totals
 * before the rows, so a frame closing meanwhile is never in the totals
 * without being in its row. */
static __always_inline void account(struct jmt_thread *t, const struct jmt_closed *c, int with_threads)
{
	__u64 ns;

	if (c->cpu_clamped)
		count(JMT_CNT_CPU_CLAMPED);
	if (foreign && c->foreign_lost)
		count(JMT_CNT_FOREIGN_LOST);
	if (with_threads)
		account_thread(t, c);
	if (call_paths)
		account_path(c);
	add_totals(&stats, c->id, c->id, c, JMT_TOTALS_METHOD);
	/* --slower-than: a returned call over the threshold (its histogram's time) goes to the ring
	 * buffer. That time is at most the frame's elapsed time: a call under the threshold by it
	 * pays one compare. */
	if (!slower_than_ns || c->frame_events == 0 || c->frame_wall_ns < slower_than_ns)
		return;
	ns = call_latency_ns(c);
	if (ns >= slower_than_ns)
		send_slow_call(t, c, ns);
}

#endif /* JMT_TOTALS_BPF_H */
