/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probes' logic over a thread's stack (frames.h): an entry (with the drop
 * of a dead top frame), a return (with the drop of the frames whose returns
 * never fired), the inclusive/exclusive arithmetic, and --foreign's segments.
 * Pure functions over plain memory, the world behind frames.h's hooks: the BPF
 * programs are thin adapters around jmt_enter, jmt_leave and
 * jmt_foreign_event, and the unit tests run the same functions.
 *
 * foreign (--foreign, a constant after inlining): a frame's foreign clock is
 * the part of its exclusive time spent inside untraced callees. A segment
 * opens at the entry of the frame's first open untraced callee and closes at
 * the return that leaves none open (foreign_depth counts them); a traced
 * callee entered meanwhile pauses it (its time is its own), its return resumes
 * it. Only the top stored frame has an open segment: its start is the
 * thread's foreign_start. foreign <= the frame's exclusive values.
 */
#ifndef JMT_CALLSTACK_H
#define JMT_CALLSTACK_H

#include "frames.h"

static __always_inline __u32 jmt_fingerprint(const struct jmt_method_key *k)
{
	__u64 h = k->klass * 0x9E3779B97F4A7C15ULL;

	h ^= k->method * 0xC2B2AE3D27D4EB4FULL;
	h ^= k->sig * 0x165667B19E3779F9ULL;
	h ^= (__u64)k->jvm * 0x27D4EB2F165667C5ULL;
	return (__u32)(h >> 32) ^ (__u32)h;
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
		jmt_clock_add_since(&f->foreign, now, &t->foreign_start);
}

/* Pushes a frame on call path path. Returns 0 when stored, 1 when beyond
 * JMT_MAX_DEPTH. foreign: a constant, 1 under --foreign (pauses the caller's
 * open segment when the frame is stored). */
static __always_inline int jmt_push(struct jmt_thread *t, __u32 id, __u32 fp, const struct jmt_clock *now, __u64 sp,
				    __u64 call_site, __u32 path, const int foreign)
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
			jmt_clock_add_since(&caller->foreign, now, &t->foreign_start);
	}
	f = &t->frames[JMT_IDX(d)];
	if (foreign) {
		f->foreign_depth = 0;
		f->foreign = (struct jmt_clock){};
	}
	f->id = id;
	f->fp = fp;
	f->start = *now;
	f->child = (struct jmt_clock){};
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
static __always_inline int jmt_top_is_stale(const struct jmt_thread *t, __u32 id, __u64 sp, __u64 call_site)
{
	const struct jmt_frame *f = jmt_top_const(t);

	return f && sp == f->sp && f->id == id && call_site && call_site == f->call_site;
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

/* Whether the top frame is method id at sp: a stale frame or inlined
 * recursion, which only a freshly read call site tells apart. */
static __always_inline int jmt_top_is_ambiguous(const struct jmt_thread *t, __u32 id, __u64 sp)
{
	const struct jmt_frame *f = jmt_top_const(t);

	return f && f->sp == sp && f->id == id;
}

/*
 * The cache slot for an entry of id at sp under parent. A hit's call site is
 * one this method really had at this sp under this parent, maybe from another
 * call site of the same caller: as a frame's recorded call site it can only
 * make jmt_top_is_stale miss (the next matching return resynchronises), never
 * match a live frame, because a live frame re-entered at its own sp is inlined
 * recursion, whose call site lies inside the method's own inlined body.
 */
static __always_inline struct jmt_site *jmt_site_slot(struct jmt_thread *t, __u32 id, __u32 parent, __u64 sp)
{
	__u32 h = id * 0x9E3779B1u ^ parent * 0x85EBCA77u ^ (__u32)(sp >> 3) * 0xC2B2AE3Du;

	return &t->sites[(h >> 26) & (JMT_SITE_SLOTS - 1)];
}

static __always_inline int jmt_site_matches(const struct jmt_site *s, __u32 id, __u32 parent, __u64 sp)
{
	return s->sp == sp && s->id == id && s->parent == parent;
}

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
static __always_inline void jmt_close_top(struct jmt_thread *t, const struct jmt_clock *now, struct jmt_closed *out,
					  const int foreign)
{
	__u32 d = t->depth;
	struct jmt_frame *f = &t->frames[JMT_IDX(d - 1)];
	struct jmt_clock span; /* the frame's, as closed: on-CPU and run-queue time clamped */
	__u64 wall_excl, cpu_excl, runq_excl;

	jmt_clock_since(&span, now, &f->start);
	/* A thread is on a CPU only while time passes: on-CPU time above elapsed
	 * time is a clock error (seen under heavy load), clamped and counted. */
	out->cpu_clamped = span.cpu_ns > span.wall_ns;
	if (span.cpu_ns > span.wall_ns)
		span.cpu_ns = span.wall_ns;
	wall_excl = jmt_sat_sub(span.wall_ns, f->child.wall_ns);
	cpu_excl = jmt_sat_sub(span.cpu_ns, f->child.cpu_ns);
	if (cpu_excl > wall_excl) {
		out->cpu_clamped = 1;
		cpu_excl = wall_excl;
	}
	/* Off a CPU, a thread waits runnable or blocked: run-queue wait is at
	 * most the time it was off a CPU (elapsed less on-CPU), so blocked time,
	 * the rest, is never negative. */
	span.runq_ns = jmt_min(span.runq_ns, span.wall_ns - span.cpu_ns);
	runq_excl = jmt_min(jmt_sat_sub(span.runq_ns, f->child.runq_ns), wall_excl - cpu_excl);

	out->id = f->id;
	out->unreturned = 0;
	out->path = f->path;
	out->vthread = f->vthread;
	out->frame_wall_ns = span.wall_ns;
	out->frame_cpu_ns = span.cpu_ns;
	out->frame_runq_ns = span.runq_ns;
	out->frame_events = span.events;
	out->frame_traced = span.traced;
	out->wall_incl_ns = f->recursive ? 0 : span.wall_ns;
	out->cpu_incl_ns = f->recursive ? 0 : span.cpu_ns;
	out->wall_excl_ns = wall_excl;
	out->cpu_excl_ns = cpu_excl;
	out->runq_incl_ns = f->recursive ? 0 : span.runq_ns;
	out->runq_excl_ns = runq_excl;
	out->events_incl = f->recursive ? 0 : span.events;
	out->events_excl = jmt_sat_sub(span.events, f->child.events);
	out->traced_incl = f->recursive ? 0 : span.traced;
	out->traced_excl = jmt_sat_sub(span.traced, f->child.traced);
	out->pinned = f->recursive ? 0 : f->pinned;
	out->pinned_ns = f->recursive ? 0 : f->pinned_ns;
	out->pinned_monitor = f->recursive ? 0 : f->pinned_monitor;
	if (foreign) {
		if (f->foreign_depth) {
			/* An untraced callee's return never came (C1-inlined, exited by exception). */
			jmt_clock_add_since(&f->foreign, now, &t->foreign_start);
			out->foreign_lost = 1;
		}
		out->wall_foreign_ns = jmt_min(f->foreign.wall_ns, wall_excl);
		out->cpu_foreign_ns = jmt_min(jmt_min(f->foreign.cpu_ns, cpu_excl), out->wall_foreign_ns);
		out->events_foreign = jmt_min(f->foreign.events, out->events_excl);
		out->traced_foreign = jmt_min(f->foreign.traced, out->traced_excl);
	}
	if (d >= 2) {
		struct jmt_frame *p = &t->frames[JMT_IDX(d - 2)];

		jmt_clock_add(&p->child, &span);
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
static __always_inline void jmt_drop_top(struct jmt_thread *t, struct jmt_closed *out, const int foreign)
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

		jmt_clock_add(&p->child, &f->child);
		if (foreign) {
			jmt_clock_add(&p->foreign, &f->foreign);
			if (f->foreign_depth || p->foreign_depth)
				out->foreign_lost = 1;
			p->foreign_depth = 0;
		}
	}
	t->depth = d - 1;
}

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
	struct jmt_find_ctx fc = {.t = t, .id = id};

	jmt_loop(JMT_MAX_DEPTH, jmt_find_one, &fc);
	return fc.match;
}

/* The record of a frame closed by its return (kind JMT_CLOSED_RETURNED) or
 * dropped (JMT_CLOSED_DROPPED), name a pointer to it: on the stack, zeroed,
 * unless the including file keeps it elsewhere (sink.bpf.h: the compat
 * programs, within 5.10's 512 bytes of stack); 0 when none can be had (the
 * frame then stays open). */
#define JMT_CLOSED_RETURNED 0
#define JMT_CLOSED_DROPPED 1
#ifndef JMT_CLOSED_RECORD
#define JMT_CLOSED_RECORD(sink, name, kind)     \
	struct jmt_closed name##_on_stack = {}; \
	struct jmt_closed *name = &name##_on_stack
#endif

struct jmt_drop_ctx {
	struct jmt_thread *t;
	struct jmt_sink *sink;
	__u32 match;	 /* on return: 1-based depth of the frame that returned */
	__u32 id;	 /* on entry: the entering method ... */
	__u64 sp;	 /* ... its stack pointer ... */
	__u64 call_site; /* ... and call site */
	__u32 on_entry;
	int foreign; /* as in jmt_push */
};

/* Loop step: drops the top frame while it is dead (on entry: see
 * jmt_top_is_stale) or above the frame that returned (on return). */
static long jmt_drop_one(__u32 i, void *data)
{
	struct jmt_drop_ctx *dc = (struct jmt_drop_ctx *)data;
	struct jmt_thread *t = dc->t;

	if (t->depth == 0 || t->depth > JMT_MAX_DEPTH)
		return 1;
	if (dc->on_entry ? !jmt_top_is_stale(t, dc->id, dc->sp, dc->call_site) : t->depth <= dc->match)
		return 1;
	JMT_CLOSED_RECORD(dc->sink, closed, JMT_CLOSED_DROPPED);
	if (!closed)
		return 1;
	jmt_drop_top(t, closed, dc->foreign);
	jmt_dropped(dc->sink, t, closed);
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
static __always_inline int jmt_return(struct jmt_thread *t, __u32 id, __u32 fp, const struct jmt_clock *now,
				      struct jmt_sink *sink, const int foreign, const int with_threads)
{
	JMT_CLOSED_RECORD(sink, closed, JMT_CLOSED_RETURNED);
	__u32 d = t->depth, match;

	if (!closed)
		return 0;
	if (d <= JMT_MAX_DEPTH && t->frames[JMT_IDX(d - 1)].fp == fp) {
		jmt_close_top(t, now, closed, foreign);
		jmt_account(sink, t, closed, with_threads);
		return 0;
	}
	if (d > JMT_MAX_DEPTH) {
		t->depth = d - 1;
		closed->id = id;
		jmt_account(sink, t, closed, with_threads);
		return 0;
	}
	match = jmt_find(t, id);
	if (!match)
		return JMT_RETURN_UNMATCHED;
	struct jmt_drop_ctx dc = {.t = t, .sink = sink, .match = match, .foreign = foreign};

	jmt_loop(JMT_MAX_DEPTH, jmt_drop_one, &dc);
	if (t->depth != match || match == 0)
		return 0;
	jmt_close_top(t, now, closed, foreign);
	jmt_account(sink, t, closed, with_threads);
	return 0;
}

/*
 * The entry of traced method id (key fingerprint fp) on t, from the Java frame
 * at sp whose probe function's frame pointer is bp: a dead top frame (see
 * jmt_top_is_stale) and any dead above it are dropped first, then the frame
 * is pushed at the thread's clock. Returns 0 when stored, 1 when beyond
 * JMT_MAX_DEPTH. foreign: as in jmt_push.
 */
static __always_inline int jmt_enter(struct jmt_thread *t, struct jmt_sink *sink, __u32 id, __u32 fp, __u64 sp,
				     __u64 bp, const int foreign)
{
	struct jmt_clock now;
	__u64 call_site = jmt_call_site(t, sink, id, sp, bp);
	__u32 path;

	if (jmt_top_is_stale(t, id, sp, call_site)) {
		struct jmt_drop_ctx dc = {.t = t,
					  .sink = sink,
					  .id = id,
					  .sp = sp,
					  .call_site = call_site,
					  .on_entry = 1,
					  .foreign = foreign};

		jmt_loop(JMT_MAX_DEPTH, jmt_drop_one, &dc);
	}
	/* Before the clock: the lookup's time is the caller's, like the trap's. */
	path = jmt_entry_path(sink, t, id);
	t->traced_total += 1;
	jmt_event_clock(sink, t, &now);
	return jmt_push(t, id, fp, &now, sp, call_site, path, foreign);
}

/* The return of traced method id (fingerprint fp) on t: JMT_RETURN_UNMATCHED
 * when no stored frame of it is open (it was entered before attach), else 0.
 * foreign, with_threads: as in jmt_return. */
static __always_inline int jmt_leave(struct jmt_thread *t, struct jmt_sink *sink, __u32 id, __u32 fp, const int foreign,
				     const int with_threads)
{
	struct jmt_clock now;

	if (t->depth == 0)
		return JMT_RETURN_UNMATCHED;
	t->traced_total += 1;
	jmt_event_clock(sink, t, &now);
	return jmt_return(t, id, fp, &now, sink, foreign, with_threads);
}

/* --foreign: an untraced method's entry (or return) inside a traced frame
 * opens (or closes) the frame's foreign segment when it is the first (last)
 * untraced call open above it; the clock is read only then. */
static __always_inline void jmt_foreign_event(struct jmt_thread *t, struct jmt_sink *sink, const int is_entry)
{
	struct jmt_clock now;

	if (is_entry) {
		if (jmt_foreign_enter(t)) {
			jmt_event_clock(sink, t, &now);
			jmt_foreign_open(t, &now);
		}
	} else if (jmt_foreign_leave(t)) {
		jmt_event_clock(sink, t, &now);
		jmt_foreign_close(t, &now);
	}
}

#endif /* JMT_CALLSTACK_H */
