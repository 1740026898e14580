/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread stack of traced frames and the inclusive/exclusive arithmetic.
 * Pure functions over plain memory: included by jmethodtime.bpf.c and by the
 * unit tests, so the kernel's arithmetic is the one that is tested.
 *
 * Invariants:
 * - t->depth counts open traced frames; frames[0..min(depth, MAX)-1] are
 *   stored, frames beyond JMT_MAX_DEPTH are only counted.
 * - child_*_ns of a frame is the sum of the inclusive times of the traced
 *   frames closed directly above it (and of dropped frames' children), so
 *   exclusive = inclusive - child never double-subtracts nested callees.
 * - All times are ns; cpu_* are on-CPU ns of the frame's thread, runq_* the ns
 *   it waited runnable for a CPU; elapsed - on-CPU - run-queue is blocked time.
 * - events count the probe events (traced or rejected) of the frame's thread,
 *   traced those of traced methods among them: a frame's counts cover every
 *   event after its entry, its return included, so each one stands for about
 *   one trap's time inside the frame (userspace subtracts the calibrated cost).
 * - foreign (--foreign, a constant after inlining): a frame's foreign_* is the
 *   part of its exclusive time spent inside untraced callees. A segment opens
 *   at the entry of the frame's first open untraced callee and closes at the
 *   return that leaves none open (foreign_depth counts them); a traced callee
 *   entered meanwhile pauses it (its time is its own), its return resumes it.
 *   Only the top stored frame has an open segment: its start is the thread's
 *   foreign_start. foreign_* <= the frame's exclusive values.
 */
#ifndef JMT_CALLSTACK_H
#define JMT_CALLSTACK_H

#include "jmethodtime.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

struct jmt_frame {
	__u32 id;             /* method id */
	__u32 fp;             /* fingerprint of the method key (return matching) */
	__u64 wall_start_ns;
	__u64 cpu_start_ns;
	__u64 runq_start_ns;
	__u64 events_start;
	__u64 traced_start;
	__u64 child_wall_ns;
	__u64 child_cpu_ns;
	__u64 child_runq_ns;
	__u64 child_events;
	__u64 child_traced;
	__u64 seen_mask;      /* bit (id % 64) of every frame from 0 to here: 64 bits, id & 63 */
	__u64 sp;             /* the entry probe caller's stack pointer (the Java frame's); 0 once parked (jmt_vt_park) */
	__u64 call_site;      /* return address of the probe's function, 0 when not read */
	__u32 recursive;      /* 1 when the same method is open below this frame */
	__u32 path;           /* call path id (0 when paths are off) */
	__u32 foreign_depth;  /* --foreign: untraced calls open directly above this frame */
	__u32 foreign_pad;
	__u64 vthread;        /* the virtual thread that parked it (jmt_vt_park), 0 before a park */
	__u64 pinned_ns;      /* ns its carrier was blocked while its virtual thread was pinned (jmt_pinned_add) */
	__u32 pinned;         /* such blocks */
	__u32 pinned_monitor; /* of those, pinned because a monitor was held */
	__u64 foreign_wall_ns; /* --foreign: closed segments' elapsed, on-CPU ns, events */
	__u64 foreign_cpu_ns;
	__u64 foreign_events;
	__u64 foreign_traced;
};

/* A call site seen for (method id, stack pointer, parent method id): the
 * guess used instead of reading user memory again (~190 ns per read). */
#define JMT_SITE_SLOTS 64
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_SITE_SLOTS) && JMT_SITE_SLOTS <= 64,
		  "jmt_site_slot masks the top 6 bits of a 32-bit hash");
struct jmt_site {
	__u64 sp;
	__u32 id;
	__u32 parent;         /* id of the traced frame below, 0 at depth 0 */
	__u64 call_site;
};

/* --per-thread: the row id of (this thread, method id), 0 in an empty slot. */
struct jmt_row_slot {
	__u32 id;
	__u32 row;
};

struct jmt_thread {
	__u64 cpu_total_ns;   /* on-CPU ns up to the last switch-out */
	__u64 switch_in_ns;   /* ktime (ns) of the last switch-in */
	__u64 runq_total_ns;  /* run-queue wait (ns) up to the last switch-in */
	__u64 events_total;   /* probe events up to the last switch-out */
	__u64 traced_total;   /* events of traced methods, counted as they happen */
	__u32 depth;          /* open traced frames, may exceed JMT_MAX_DEPTH */
	__u32 initialized;
	__u32 on_cpu;         /* 1 from a switch-in (or a probe) to the next switch-out */
	__u32 tid;            /* kernel thread id (init pid namespace) */
	__u64 gap_prev_ns;        /* ktime (ns) of the last clocked event (gaps.h), 0 before one */
	__u64 gap_prev_events;    /* its events count (struct jmt_clock.events) */
	__u64 gap_prev_switch_ns; /* switch_in_ns then: another value means a switch came between */
	struct jmt_clock foreign_start; /* --foreign: start of the top frame's open segment */
	/* A freeze or thaw of a virtual thread under way (from the hook's entry to
	 * its return): the virtual thread's id (0: none) and its continuation
	 * entry's address on this carrier's stack. */
	__u64 vt_pending_tid;
	__u64 vt_pending_entry;
	/* A freeze of this carrier's virtual thread that failed with traced frames
	 * open: its reason (freeze's result, 0: none), until the carrier's next
	 * freeze or thaw; pin_block_ns: ktime (ns) of the blocking switch-out
	 * since, 0 while not blocked; pin_counted: the block was counted. */
	__u32 pin_reason;
	__u32 pin_counted;
	__u64 pin_block_ns;
	struct jmt_frame frames[JMT_MAX_DEPTH];
	struct jmt_site sites[JMT_SITE_SLOTS]; /* direct-mapped, zeroed at creation */
	struct jmt_row_slot rows[JMT_ROW_SLOTS]; /* --per-thread: by method id & (JMT_ROW_SLOTS - 1), zeroed at creation */
};

/* What closing one frame contributes to its method's totals: the VALUE and
 * FOREIGN fields of JMT_METHOD_STATS (jmethodtime.h), added by jmt_add_closed.
 * Inclusive values are 0 for a recursive frame; every value is 0 for a dropped
 * one but unreturned (1); traced_* are of events_*, events of traced methods;
 * the --foreign ones are of the exclusive values, those inside untraced callees. */
struct jmt_closed {
	__u32 id;
	__u32 path;           /* the frame's call path id */
	__u64 vthread;        /* the frame's virtual thread, when it was open across an unmount */
	__u32 cpu_clamped;    /* 1 when the thread's on-CPU clock ran ahead of elapsed time in this frame */
	__u32 foreign_lost;   /* --foreign: 1 when an untraced callee's return never came (segment cut short) */
	/* The frame's own inclusive values, recursive or not (0 when dropped):
	 * a call path's inclusive totals, since A;A is a path of its own. */
	__u64 frame_wall_ns;
	__u64 frame_cpu_ns;
	__u64 frame_runq_ns;
	__u64 frame_events;
	__u64 frame_traced;
	JMT_METHOD_STATS(JMT_NO_FIELD, JMT_U64_FIELD, JMT_U64_FIELD)
};

/* A stored frame's slot: depth d masked into the ring. In the programs the
 * mask is kept where clang could prove it redundant: clang drops a mask that
 * an earlier range check makes a no-op, and that check may be on another
 * register than the one the index comes from, so the verifier sees an
 * unbounded index ("unbounded memory access": the arm64 build, on 6.12 and
 * 6.1 kernels). The empty asm hides the value's range from clang only. */
#ifdef __bpf__
static __always_inline __u32 jmt_idx(__u32 d)
{
	asm volatile("" : "+r"(d));
	return d & (JMT_MAX_DEPTH - 1);
}
#define JMT_IDX(d) jmt_idx(d)
#else
#define JMT_IDX(d) ((d) & (JMT_MAX_DEPTH - 1))
#endif

static __always_inline __u32 jmt_fingerprint(const struct jmt_method_key *k)
{
	__u64 h = k->klass * 0x9E3779B97F4A7C15ULL;

	h ^= k->method * 0xC2B2AE3D27D4EB4FULL;
	h ^= k->sig * 0x165667B19E3779F9ULL;
	h ^= (__u64)k->jvm * 0x27D4EB2F165667C5ULL;
	return (__u32)(h >> 32) ^ (__u32)h;
}

static __always_inline __u64 jmt_sat_sub(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static __always_inline __u64 jmt_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

/* The top stored frame, 0 when none is stored (depth 0 or beyond JMT_MAX_DEPTH). */
static __always_inline struct jmt_frame *jmt_top(struct jmt_thread *t)
{
	__u32 d = t->depth;

	if (d == 0 || d > JMT_MAX_DEPTH)
		return 0;
	return &t->frames[JMT_IDX(d - 1)];
}

/* Adds the segment from start to now to frame f's foreign values. */
static __always_inline void jmt_foreign_add(struct jmt_frame *f, const struct jmt_clock *start,
					    const struct jmt_clock *now)
{
	f->foreign_wall_ns += jmt_sat_sub(now->wall_ns, start->wall_ns);
	f->foreign_cpu_ns += jmt_sat_sub(now->cpu_ns, start->cpu_ns);
	f->foreign_events += jmt_sat_sub(now->events, start->events);
	f->foreign_traced += jmt_sat_sub(now->traced, start->traced);
}

/* An untraced method's entry: 1 when it opens the top frame's segment (the
 * caller then reads the clock and calls jmt_foreign_open). */
static __always_inline int jmt_foreign_enter(struct jmt_thread *t)
{
	struct jmt_frame *f = jmt_top(t);

	if (!f)
		return 0;
	return f->foreign_depth++ == 0;
}

static __always_inline void jmt_foreign_open(struct jmt_thread *t, const struct jmt_clock *now)
{
	t->foreign_start = *now;
}

/* An untraced method's return: 1 when it closes the top frame's segment (the
 * caller then reads the clock and calls jmt_foreign_close). A return with no
 * untraced call open above the top frame (entered before it) changes nothing. */
static __always_inline int jmt_foreign_leave(struct jmt_thread *t)
{
	struct jmt_frame *f = jmt_top(t);

	if (!f || f->foreign_depth == 0)
		return 0;
	return --f->foreign_depth == 0;
}

static __always_inline void jmt_foreign_close(struct jmt_thread *t, const struct jmt_clock *now)
{
	struct jmt_frame *f = jmt_top(t);

	if (f)
		jmt_foreign_add(f, &t->foreign_start, now);
}

/* Call path id of the top stored frame (the parent of an entry), 0 when none. */
static __always_inline __u32 jmt_parent_path(const struct jmt_thread *t)
{
	__u32 d = t->depth;

	if (d == 0 || d > JMT_MAX_DEPTH)
		return 0;
	return t->frames[JMT_IDX(d - 1)].path;
}

/* Pushes a frame on call path path. Returns 0 when stored, 1 when beyond
 * JMT_MAX_DEPTH. foreign: a constant, 1 under --foreign (pauses the caller's
 * open segment when the frame is stored). */
static __always_inline int jmt_push(struct jmt_thread *t, __u32 id, __u32 fp,
				    const struct jmt_clock *now, __u64 sp, __u64 call_site,
				    __u32 path, const int foreign)
{
	__u32 d = t->depth;
	__u64 bit = 1ULL << (id & 63);
	__u64 below = 0;
	__u32 recursive = 0;
	struct jmt_frame *f;

	if (d >= JMT_MAX_DEPTH) {
		t->depth = d + 1;
		return 1;
	}
	if (d > 0)
		below = t->frames[JMT_IDX(d - 1)].seen_mask;
	if (below & bit) {
		for (__u32 i = 0; i < JMT_MAX_DEPTH; i++) {
			if (i >= d)
				break;
			if (t->frames[JMT_IDX(i)].id == id) {
				recursive = 1;
				break;
			}
		}
	}
	if (foreign && d > 0) {
		struct jmt_frame *caller = &t->frames[JMT_IDX(d - 1)];

		if (caller->foreign_depth)
			jmt_foreign_add(caller, &t->foreign_start, now);
	}
	f = &t->frames[JMT_IDX(d)];
	if (foreign) {
		f->foreign_depth = 0;
		f->foreign_wall_ns = 0;
		f->foreign_cpu_ns = 0;
		f->foreign_events = 0;
		f->foreign_traced = 0;
	}
	f->id = id;
	f->fp = fp;
	f->wall_start_ns = now->wall_ns;
	f->cpu_start_ns = now->cpu_ns;
	f->runq_start_ns = now->runq_ns;
	f->events_start = now->events;
	f->traced_start = now->traced;
	f->child_wall_ns = 0;
	f->child_cpu_ns = 0;
	f->child_runq_ns = 0;
	f->child_events = 0;
	f->child_traced = 0;
	f->seen_mask = below | bit;
	f->sp = sp;
	f->call_site = call_site;
	f->recursive = recursive;
	f->path = path;
	f->vthread = 0;
	f->pinned_ns = 0;
	f->pinned = 0;
	f->pinned_monitor = 0;
	t->depth = d + 1;
	return 0;
}

/*
 * Whether the top stored frame is dead when method id enters with stack
 * pointer sp from call_site: same sp, same method, same call site means a
 * C1-inlined call whose exceptional exit fired no return, entered again from
 * the same place of the same compiled frame. Inlined recursion enters from
 * another call site, so it is not mistaken for this. (A higher sp alone
 * proves nothing: on-stack replacement moves a live frame.)
 * The call site is read only when sp equals the top frame's sp (an inlined
 * callee), so 0 means "not read" and never matches.
 */
static __always_inline int jmt_top_is_stale(const struct jmt_thread *t, __u32 id, __u64 sp,
					    __u64 call_site)
{
	__u32 d = t->depth;
	const struct jmt_frame *f;

	if (d == 0 || d > JMT_MAX_DEPTH)
		return 0;
	f = &t->frames[JMT_IDX(d - 1)];
	return sp == f->sp && f->id == id && call_site && call_site == f->call_site;
}

/* Whether an entry at sp needs its call site read (see jmt_top_is_stale). */
static __always_inline int jmt_needs_call_site(const struct jmt_thread *t, __u64 sp)
{
	__u32 d = t->depth;

	if (d == 0)
		return 1;
	if (d > JMT_MAX_DEPTH)
		return 0;
	return t->frames[JMT_IDX(d - 1)].sp == sp;
}

/* Method id of the top stored frame (the parent of an entry), 0 when none. */
static __always_inline __u32 jmt_parent_id(const struct jmt_thread *t)
{
	__u32 d = t->depth;

	if (d == 0 || d > JMT_MAX_DEPTH)
		return 0;
	return t->frames[JMT_IDX(d - 1)].id;
}

/* Whether the top frame is method id at sp: a stale frame or inlined
 * recursion, which only a freshly read call site tells apart. */
static __always_inline int jmt_top_is_ambiguous(const struct jmt_thread *t, __u32 id, __u64 sp)
{
	__u32 d = t->depth;
	const struct jmt_frame *f;

	if (d == 0 || d > JMT_MAX_DEPTH)
		return 0;
	f = &t->frames[JMT_IDX(d - 1)];
	return f->sp == sp && f->id == id;
}

/*
 * The cache slot for an entry of id at sp under parent. A hit's call site is
 * one this method really had at this sp under this parent, maybe from another
 * call site of the same caller: as a frame's recorded call site it can only
 * make jmt_top_is_stale miss (the next matching return resynchronises), never
 * match a live frame, because a live frame re-entered at its own sp is inlined
 * recursion, whose call site lies inside the method's own inlined body.
 */
static __always_inline struct jmt_site *jmt_site_slot(struct jmt_thread *t, __u32 id, __u32 parent,
						      __u64 sp)
{
	__u32 h = id * 0x9E3779B1u ^ parent * 0x85EBCA77u ^ (__u32)(sp >> 3) * 0xC2B2AE3Du;

	return &t->sites[(h >> 26) & (JMT_SITE_SLOTS - 1)];
}

static __always_inline int jmt_site_matches(const struct jmt_site *s, __u32 id, __u32 parent, __u64 sp)
{
	return s->sp == sp && s->id == id && s->parent == parent;
}

struct jmt_sink;
/* Hook the including file defines: the return address of the entry probe's
 * function, whose frame pointer is bp, read from user memory (0 when it
 * cannot be read). */
static __always_inline __u64 jmt_read_call_site(struct jmt_sink *sink, __u64 bp);

/* The call site of an entry of method id at sp (frame pointer bp) as
 * jmt_top_is_stale needs it: 0 when not needed (sp is not the top frame's),
 * the cached one when the cache holds this (id, parent, sp) and the top frame
 * is not ambiguous, else read (jmt_read_call_site) and cached. */
static __always_inline __u64 jmt_call_site(struct jmt_thread *t, struct jmt_sink *sink, __u32 id, __u64 sp, __u64 bp)
{
	__u32 parent;
	struct jmt_site *site;

	if (!jmt_needs_call_site(t, sp))
		return 0;
	parent = jmt_parent_id(t);
	site = jmt_site_slot(t, id, parent, sp);
	if (!jmt_top_is_ambiguous(t, id, sp) && jmt_site_matches(site, id, parent, sp))
		return site->call_site;
	site->sp = sp;
	site->id = id;
	site->parent = parent;
	site->call_site = jmt_read_call_site(sink, bp);
	return site->call_site;
}

/* Closes the top stored frame (depth must be 1..JMT_MAX_DEPTH); foreign as in jmt_push
 * (closes the frame's open segment, resumes its caller's). */
static __always_inline void jmt_close_top(struct jmt_thread *t, const struct jmt_clock *now,
					  struct jmt_closed *out, const int foreign)
{
	__u32 d = t->depth;
	struct jmt_frame *f = &t->frames[JMT_IDX(d - 1)];
	__u64 wall = jmt_sat_sub(now->wall_ns, f->wall_start_ns);
	__u64 cpu = jmt_sat_sub(now->cpu_ns, f->cpu_start_ns);
	__u64 runq = jmt_sat_sub(now->runq_ns, f->runq_start_ns);
	__u64 events = jmt_sat_sub(now->events, f->events_start);
	__u64 traced = jmt_sat_sub(now->traced, f->traced_start);
	__u64 wall_excl, cpu_excl, runq_excl;

	/* A thread is on a CPU only while time passes: on-CPU time above elapsed
	 * time is a clock error (seen under heavy load), clamped and counted. */
	out->cpu_clamped = cpu > wall;
	if (cpu > wall)
		cpu = wall;
	wall_excl = jmt_sat_sub(wall, f->child_wall_ns);
	cpu_excl = jmt_sat_sub(cpu, f->child_cpu_ns);
	if (cpu_excl > wall_excl) {
		out->cpu_clamped = 1;
		cpu_excl = wall_excl;
	}
	/* Off a CPU, a thread waits runnable or blocked: run-queue wait is at
	 * most the time it was off a CPU (elapsed less on-CPU), so blocked time,
	 * the rest, is never negative. */
	runq = jmt_min(runq, wall - cpu);
	runq_excl = jmt_min(jmt_sat_sub(runq, f->child_runq_ns), wall_excl - cpu_excl);

	out->id = f->id;
	out->unreturned = 0;
	out->path = f->path;
	out->vthread = f->vthread;
	out->frame_wall_ns = wall;
	out->frame_cpu_ns = cpu;
	out->frame_runq_ns = runq;
	out->frame_events = events;
	out->frame_traced = traced;
	out->wall_incl_ns = f->recursive ? 0 : wall;
	out->cpu_incl_ns = f->recursive ? 0 : cpu;
	out->wall_excl_ns = wall_excl;
	out->cpu_excl_ns = cpu_excl;
	out->runq_incl_ns = f->recursive ? 0 : runq;
	out->runq_excl_ns = runq_excl;
	out->events_incl = f->recursive ? 0 : events;
	out->events_excl = jmt_sat_sub(events, f->child_events);
	out->traced_incl = f->recursive ? 0 : traced;
	out->traced_excl = jmt_sat_sub(traced, f->child_traced);
	out->pinned = f->recursive ? 0 : f->pinned;
	out->pinned_ns = f->recursive ? 0 : f->pinned_ns;
	out->pinned_monitor = f->recursive ? 0 : f->pinned_monitor;
	if (foreign) {
		if (f->foreign_depth) {
			/* An untraced callee's return never came (C1-inlined, exited by exception). */
			jmt_foreign_add(f, &t->foreign_start, now);
			out->foreign_lost = 1;
		}
		out->wall_foreign_ns = jmt_min(f->foreign_wall_ns, wall_excl);
		out->cpu_foreign_ns = jmt_min(jmt_min(f->foreign_cpu_ns, cpu_excl), out->wall_foreign_ns);
		out->events_foreign = jmt_min(f->foreign_events, out->events_excl);
		out->traced_foreign = jmt_min(f->foreign_traced, out->traced_excl);
	}
	if (d >= 2) {
		struct jmt_frame *p = &t->frames[JMT_IDX(d - 2)];

		p->child_wall_ns += wall;
		p->child_cpu_ns += cpu;
		p->child_runq_ns += runq;
		p->child_events += events;
		p->child_traced += traced;
		if (foreign && p->foreign_depth)
			t->foreign_start = *now;
	}
	t->depth = d - 1;
}

/* Drops the top stored frame whose return never fired: the call counts, its
 * own time stays in the caller's exclusive time, its traced callees' time
 * moves to the caller's children, its closed foreign segments to the caller's
 * (foreign as in jmt_push). An open segment of it, or a paused one of the
 * caller, has no clock here to close at: it is given up and flagged. */
static __always_inline void jmt_drop_top(struct jmt_thread *t, struct jmt_closed *out,
					 const int foreign)
{
	__u32 d = t->depth;
	struct jmt_frame *f = &t->frames[JMT_IDX(d - 1)];

	out->id = f->id;
	out->path = f->path;
	out->vthread = f->vthread;
	out->frame_wall_ns = 0;
	out->frame_cpu_ns = 0;
	out->frame_runq_ns = 0;
	out->frame_events = 0;
	out->frame_traced = 0;
#define JMT_ZERO(name) out->name = 0;
	JMT_METHOD_STATS(JMT_NO_FIELD, JMT_ZERO, JMT_NO_FIELD)
#undef JMT_ZERO
	out->unreturned = 1;
	if (d >= 2) {
		struct jmt_frame *p = &t->frames[JMT_IDX(d - 2)];

		p->child_wall_ns += f->child_wall_ns;
		p->child_cpu_ns += f->child_cpu_ns;
		p->child_runq_ns += f->child_runq_ns;
		p->child_events += f->child_events;
		p->child_traced += f->child_traced;
		if (foreign) {
			p->foreign_wall_ns += f->foreign_wall_ns;
			p->foreign_cpu_ns += f->foreign_cpu_ns;
			p->foreign_events += f->foreign_events;
			p->foreign_traced += f->foreign_traced;
			if (f->foreign_depth || p->foreign_depth)
				out->foreign_lost = 1;
			p->foreign_depth = 0;
		}
	}
	t->depth = d - 1;
}

/* Plain adds of closed frame c into totals s (exact when only one program at
 * a time writes them): the call and its values, then, under --foreign only,
 * its foreign values (jmt_add_foreign). */
static __always_inline void jmt_add_closed(struct jmt_method_stats *s, const struct jmt_closed *c)
{
#define JMT_ADD_ONE(name) s->name += 1;
#define JMT_ADD(name) s->name += c->name;
	JMT_METHOD_STATS(JMT_ADD_ONE, JMT_ADD, JMT_NO_FIELD)
#undef JMT_ADD_ONE
#undef JMT_ADD
}

static __always_inline void jmt_add_foreign(struct jmt_method_stats *s, const struct jmt_closed *c)
{
#define JMT_ADD(name) s->name += c->name;
	JMT_METHOD_STATS(JMT_NO_FIELD, JMT_NO_FIELD, JMT_ADD)
#undef JMT_ADD
}

/*
 * The loops over a thread's stack and the return path, run by the BPF programs
 * and by the unit tests alike. A loop steps a callback: through bpf_loop in
 * the BPF programs (the callback is verified once, whatever the stack's depth,
 * so the code after the loop is not verified once per depth), through a plain
 * loop in userspace.
 */
#ifdef __BPF__
#define jmt_loop(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#else
static inline void jmt_loop(__u32 n, long (*fn)(__u32, void *), void *ctx)
{
	for (__u32 i = 0; i < n; i++)
		if (fn(i, ctx))
			break;
}
#endif

/*
 * Hooks the file including callstack.h defines (after including it): where
 * closed frames go, and t, the thread they closed on. sink is that file's own
 * (0 in the BPF programs, whose totals are maps).
 * - jmt_account: a frame closed by its return, or counted beyond
 *   JMT_MAX_DEPTH; with_threads as passed to jmt_return.
 * - jmt_dropped: a frame dropped by jmt_drop_one (its return never fired).
 */
struct jmt_sink;
static __always_inline void jmt_account(struct jmt_sink *sink, struct jmt_thread *t,
					const struct jmt_closed *c, const int with_threads);
static __always_inline void jmt_dropped(struct jmt_sink *sink, struct jmt_thread *t,
					const struct jmt_closed *c);

struct jmt_find_ctx {
	const struct jmt_thread *t;
	__u32 id;
	__u32 match; /* 1-based depth of the topmost frame of id, 0 when none */
};

/* Step i (0 = the top) of the search for the topmost stored frame of method
 * id: 1 when the search ends, with *match its depth (1-based) if found. */
static __always_inline int jmt_find_step(const struct jmt_thread *t, __u32 id, __u32 i, __u32 *match)
{
	__u32 d = t->depth;

	if (d > JMT_MAX_DEPTH)
		d = JMT_MAX_DEPTH;
	if (i >= d)
		return 1;
	if (t->frames[JMT_IDX(d - 1 - i)].id != id)
		return 0;
	*match = d - i;
	return 1;
}

static long jmt_find_one(__u32 i, void *data)
{
	struct jmt_find_ctx *fc = (struct jmt_find_ctx *)data;

	return jmt_find_step(fc->t, fc->id, i, &fc->match);
}

/* Depth (1-based) of the topmost stored frame of method id, 0 when none. */
static __always_inline __u32 jmt_find(const struct jmt_thread *t, __u32 id)
{
	struct jmt_find_ctx fc = { .t = t, .id = id };

	jmt_loop(JMT_MAX_DEPTH, jmt_find_one, &fc);
	return fc.match;
}

struct jmt_drop_ctx {
	struct jmt_thread *t;
	struct jmt_sink *sink;
	__u32 match;     /* on return: 1-based depth of the frame that returned */
	__u32 id;        /* on entry: the entering method ... */
	__u64 sp;        /* ... its stack pointer ... */
	__u64 call_site; /* ... and call site */
	__u32 on_entry;
	int foreign;     /* as in jmt_push */
};

/* Loop step: drops the top frame while it is dead (on entry: see
 * jmt_top_is_stale) or above the frame that returned (on return). */
static long jmt_drop_one(__u32 i, void *data)
{
	struct jmt_drop_ctx *dc = (struct jmt_drop_ctx *)data;
	struct jmt_thread *t = dc->t;
	struct jmt_closed closed = {};

	if (t->depth == 0 || t->depth > JMT_MAX_DEPTH)
		return 1;
	if (dc->on_entry ? !jmt_top_is_stale(t, dc->id, dc->sp, dc->call_site) : t->depth <= dc->match)
		return 1;
	jmt_drop_top(t, &closed, dc->foreign);
	jmt_dropped(dc->sink, t, &closed);
	return 0;
}

/* jmt_return's result when no stored frame of the method is open (it was
 * entered before attach). */
#define JMT_RETURN_UNMATCHED 1

/*
 * The return of traced method id (key fingerprint fp) at now, on a thread
 * with a traced frame open (depth > 0). The common case is the return of the
 * top stored frame. A frame beyond JMT_MAX_DEPTH is only counted: its time
 * stays in the deepest stored frame. Otherwise the topmost stored frame of id
 * is found, the frames above it, whose returns never fired (C1-inlined callees
 * exiting by exception), are dropped, and it is closed. Returns 0 or
 * JMT_RETURN_UNMATCHED. foreign, with_threads: constants (jmt_push, jmt_account).
 */
static __always_inline int jmt_return(struct jmt_thread *t, __u32 id, __u32 fp,
				      const struct jmt_clock *now, struct jmt_sink *sink,
				      const int foreign, const int with_threads)
{
	struct jmt_closed closed = {};
	__u32 d = t->depth, match;

	if (d <= JMT_MAX_DEPTH && t->frames[JMT_IDX(d - 1)].fp == fp) {
		jmt_close_top(t, now, &closed, foreign);
		jmt_account(sink, t, &closed, with_threads);
		return 0;
	}
	if (d > JMT_MAX_DEPTH) {
		t->depth = d - 1;
		closed.id = id;
		jmt_account(sink, t, &closed, with_threads);
		return 0;
	}
	match = jmt_find(t, id);
	if (!match)
		return JMT_RETURN_UNMATCHED;
	struct jmt_drop_ctx dc = { .t = t, .sink = sink, .match = match, .foreign = foreign };

	jmt_loop(JMT_MAX_DEPTH, jmt_drop_one, &dc);
	if (t->depth != match || match == 0)
		return 0;
	jmt_close_top(t, now, &closed, foreign);
	jmt_account(sink, t, &closed, with_threads);
	return 0;
}

/*
 * Virtual threads (JDK 21+). A mounted virtual thread's traced frames sit on
 * top of its carrier's stack. At an unmount (freeze) the top frames that
 * belong to its continuation are parked under its id; at its next mount
 * (thaw), on any carrier, they are pushed back.
 * - A frame belongs to the mounted continuation when its sp lies below the
 *   continuation's entry (HotSpot's ContinuationEntry, in the enterSpecial
 *   frame on the carrier's stack: every frame the continuation entered is
 *   below it, every carrier frame above it), or when it came back from a park
 *   (sp 0: its place on the new stack is not known).
 * - A parked frame holds the on-CPU ns, run-queue ns and events it had used
 *   up instead of their starts: back on a carrier it goes on from there, so it
 *   counts only its own virtual thread's. Elapsed time runs on while it is
 *   parked (wall_start_ns is kept): the time unmounted is off-CPU time that is
 *   not run-queue wait, reported as blocked.
 */

/* Stored frames, counted from the top, that belong to the continuation whose
 * entry is at entry (0 when none is stored). */
struct jmt_vt_split_ctx {
	const struct jmt_thread *t;
	__u64 entry;
	__u32 n;
};

static long jmt_vt_split_one(__u32 i, void *data)
{
	struct jmt_vt_split_ctx *sc = (struct jmt_vt_split_ctx *)data;
	__u32 d = sc->t->depth;
	const struct jmt_frame *f;

	if (d > JMT_MAX_DEPTH)
		d = JMT_MAX_DEPTH;
	if (i >= d)
		return 1;
	f = &sc->t->frames[JMT_IDX(d - 1 - i)];
	if (f->sp != 0 && f->sp >= sc->entry)
		return 1;
	sc->n = i + 1;
	return 0;
}

static __always_inline __u32 jmt_vt_split(const struct jmt_thread *t, __u64 entry)
{
	struct jmt_vt_split_ctx sc = { .t = t, .entry = entry };

	jmt_loop(JMT_MAX_DEPTH, jmt_vt_split_one, &sc);
	return sc.n;
}

/* Frames counted beyond JMT_MAX_DEPTH: all newer than the stored ones, so the
 * continuation's when any stored frame is. */
static __always_inline __u32 jmt_vt_beyond(const struct jmt_thread *t)
{
	return t->depth > JMT_MAX_DEPTH ? t->depth - JMT_MAX_DEPTH : 0;
}

/* The object a reference in an OopStorage slot points to: a generational ZGC
 * pointer (remapped_shift: ZPointerRemappedShift) carries its address above
 * its one set remapped bit (HotSpot's ZPointer::uncolor); 0 when none is set.
 * remapped_shift 0: a plain address (every other collector). */
static __always_inline __u64 jmt_zpointer_address(__u64 ref, __u64 remapped_shift)
{
	if (!remapped_shift)
		return ref;
	switch ((ref >> remapped_shift) & 0xf) {
	case 1:
		return ref >> (remapped_shift + 1);
	case 2:
		return ref >> (remapped_shift + 2);
	case 4:
		return ref >> (remapped_shift + 3);
	case 8:
		return ref >> (remapped_shift + 4);
	}
	return 0;
}

/* freeze's results that leave a virtual thread mounted (pinned), by reason
 * (HotSpot's freeze_result): a critical section, a native frame, a monitor held. */
#define JMT_FREEZE_PINNED_CS 2
#define JMT_FREEZE_PINNED_NATIVE 3
#define JMT_FREEZE_PINNED_MONITOR 4

/* The carrier of t was blocked ns while its virtual thread was pinned: every
 * open stored frame holds the time (inclusive); first: the block's first
 * part after its failed freeze, which counts it (monitor: pinned by a monitor). */
static __always_inline void jmt_pinned_add(struct jmt_thread *t, __u64 ns, __u32 first, __u32 monitor)
{
	for (__u32 i = 0; i < JMT_MAX_DEPTH; i++) {
		struct jmt_frame *f;

		if (i >= t->depth)
			break;
		f = &t->frames[JMT_IDX(i)];
		f->pinned_ns += ns;
		f->pinned += first;
		f->pinned_monitor += first & monitor;
	}
}

/* Frame f of virtual thread vthread leaves its carrier at now: its clocks
 * become what it used up. From then on it is that virtual thread's call
 * (--per-thread rows); a call that ran start to end on one carrier is the
 * carrier's. */
static __always_inline void jmt_vt_park(struct jmt_frame *f, const struct jmt_clock *now, __u64 vthread)
{
	f->vthread = vthread;
	f->cpu_start_ns = jmt_sat_sub(now->cpu_ns, f->cpu_start_ns);
	f->runq_start_ns = jmt_sat_sub(now->runq_ns, f->runq_start_ns);
	f->events_start = jmt_sat_sub(now->events, f->events_start);
	f->traced_start = jmt_sat_sub(now->traced, f->traced_start);
	f->sp = 0;
}

/* A parked frame comes back on a carrier at now: its clocks start where they
 * would have had it run there from the start. */
static __always_inline void jmt_vt_unpark(struct jmt_frame *f, const struct jmt_clock *now)
{
	f->cpu_start_ns = now->cpu_ns - f->cpu_start_ns;
	f->runq_start_ns = now->runq_ns - f->runq_start_ns;
	f->events_start = now->events - f->events_start;
	f->traced_start = now->traced - f->traced_start;
}

/* The open foreign segment's start, parked and back (--foreign), as a frame's. */
static __always_inline void jmt_vt_park_clock(struct jmt_clock *c, const struct jmt_clock *now)
{
	c->cpu_ns = jmt_sat_sub(now->cpu_ns, c->cpu_ns);
	c->runq_ns = jmt_sat_sub(now->runq_ns, c->runq_ns);
	c->events = jmt_sat_sub(now->events, c->events);
	c->traced = jmt_sat_sub(now->traced, c->traced);
}

static __always_inline void jmt_vt_unpark_clock(struct jmt_clock *c, const struct jmt_clock *now)
{
	c->cpu_ns = now->cpu_ns - c->cpu_ns;
	c->runq_ns = now->runq_ns - c->runq_ns;
	c->events = now->events - c->events;
	c->traced = now->traced - c->traced;
}

/* Pushes parked frame p back on t (its clocks already unparked): 0 when
 * stored, 1 when beyond JMT_MAX_DEPTH (then only counted). Its recursion
 * flag and seen bits are kept from its first carrier: the carrier frames
 * below a virtual thread's are the same methods on every carrier. */
static __always_inline int jmt_vt_push(struct jmt_thread *t, const struct jmt_frame *p)
{
	__u32 d = t->depth;

	t->depth = d + 1;
	if (d >= JMT_MAX_DEPTH)
		return 1;
	t->frames[JMT_IDX(d)] = *p;
	return 0;
}

#endif /* JMT_CALLSTACK_H */
