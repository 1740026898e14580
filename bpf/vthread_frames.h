/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Virtual threads' frames (JDK 21+): which of a carrier's traced frames leave
 * it at an unmount (jmt_vt_unmount) and how they come back at a mount
 * (jmt_vt_mount). Pure, the world behind frames.h's hooks: vthreads.bpf.h is a
 * thin adapter, the unit tests run the same functions.
 *
 * A mounted virtual thread's traced frames sit on top of its carrier's stack.
 * At an unmount (freeze) the top frames that belong to its continuation are
 * parked under its id; at its next mount (thaw), on any carrier, they are
 * pushed back.
 * - A frame belongs to the mounted continuation when its sp lies below the
 *   continuation's entry (HotSpot's ContinuationEntry, in the enterSpecial
 *   frame on the carrier's stack: every frame the continuation entered is
 *   below it, every carrier frame above it), or when it came back from a park
 *   (sp 0: its place on the new stack is not known).
 * - A parked frame's start clock is parked (clock.h: jmt_clock_park).
 */
#ifndef JMT_VTHREAD_FRAMES_H
#define JMT_VTHREAD_FRAMES_H

#include "callstack.h"

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
	struct jmt_vt_split_ctx sc = {.t = t, .entry = entry};

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
	case 1: return ref >> (remapped_shift + 1);
	case 2: return ref >> (remapped_shift + 2);
	case 4: return ref >> (remapped_shift + 3);
	case 8: return ref >> (remapped_shift + 4);
	}
	return 0;
}

/* Frame f of virtual thread vthread leaves its carrier at now: its clocks
 * become what it used up. From then on it is that virtual thread's call
 * (--per-thread rows); a call that ran start to end on one carrier is the
 * carrier's. */
static __always_inline void jmt_vt_park(struct jmt_frame *f, const struct jmt_clock *now, __u64 vthread)
{
	f->vthread = vthread;
	jmt_clock_park(&f->start, now);
	f->sp = 0;
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

struct jmt_vt_move_ctx {
	struct jmt_thread *t;
	struct jmt_sink *sink;
	const struct jmt_clock *now;
	__u64 vthread;
	__u32 base;   /* unmount: stored depth below the frames parked */
	__u32 n;      /* mount: frames parked */
	__u32 failed; /* unmount: frames whose park failed */
	int foreign;  /* as in jmt_push */
};

static long jmt_vt_park_one(__u32 i, void *data)
{
	struct jmt_vt_move_ctx *mc = (struct jmt_vt_move_ctx *)data;
	struct jmt_frame *f;
	__u32 d = mc->base + i;

	if (d >= mc->t->depth || d >= JMT_MAX_DEPTH)
		return 1;
	f = &mc->t->frames[JMT_IDX(d)];
	jmt_vt_park(f, mc->now, mc->vthread);
	if (jmt_park_frame(mc->sink, i, f))
		mc->failed += 1;
	return 0;
}

/* Loop step: drops the top frame down to base, and its parked copy (frames
 * of a virtual thread that could not all be parked). */
static long jmt_vt_drop_one(__u32 i, void *data)
{
	struct jmt_vt_move_ctx *mc = (struct jmt_vt_move_ctx *)data;
	struct jmt_thread *t = mc->t;

	if (t->depth <= mc->base || t->depth > JMT_MAX_DEPTH)
		return 1;
	JMT_CLOSED_RECORD(mc->sink, closed, JMT_CLOSED_DROPPED);
	if (!closed)
		return 1;
	jmt_forget_frame(mc->sink, t->depth - 1 - mc->base);
	jmt_drop_top(t, closed, mc->foreign);
	jmt_dropped(mc->sink, t, closed);
	jmt_count(mc->sink, JMT_CNT_VT_FRAMES_LOST, 1);
	return 0;
}

/* Results of jmt_vt_unmount besides the number of frames parked. */
#define JMT_VT_NOTHING_PARKED 0
#define JMT_VT_PARK_FAILED (-1)

/*
 * Virtual thread vthread unmounts from carrier t (its freeze succeeded), its
 * continuation's entry at entry on t's stack: its frames (jmt_vt_split, and
 * those beyond JMT_MAX_DEPTH as a count) leave t, parked through the hooks
 * with a header (struct jmt_parked) that holds their number. Returns how many
 * stored frames were parked, JMT_VT_NOTHING_PARKED, or JMT_VT_PARK_FAILED
 * when one could not be kept: the virtual thread's frames are then dropped
 * and counted lost. foreign: as in jmt_push (the open segment's start parks
 * with them).
 */
static __always_inline int jmt_vt_unmount(struct jmt_thread *t, struct jmt_sink *sink, __u64 entry, __u64 vthread,
					  const int foreign)
{
	struct jmt_parked parked = {};
	struct jmt_clock now;
	struct jmt_vt_move_ctx mc = {.t = t, .sink = sink, .now = &now, .vthread = vthread, .foreign = foreign};
	__u32 n = jmt_vt_split(t, entry), beyond;

	if (!n)
		return JMT_VT_NOTHING_PARKED;
	beyond = jmt_vt_beyond(t);
	t->depth -= beyond;
	mc.base = t->depth - n;
	jmt_hook_clock(sink, t, &now);
	parked.n = n;
	parked.beyond = beyond;
	if (foreign) {
		parked.foreign_start = t->foreign_start;
		jmt_clock_park(&parked.foreign_start, &now);
	}
	jmt_loop(JMT_MAX_DEPTH, jmt_vt_park_one, &mc);
	if (mc.failed || jmt_park_header(sink, &parked)) {
		jmt_count(sink, JMT_CNT_VT_FRAMES_LOST, beyond);
		jmt_loop(JMT_MAX_DEPTH, jmt_vt_drop_one, &mc);
		return JMT_VT_PARK_FAILED;
	}
	t->depth = mc.base;
	return (int)n;
}

static long jmt_vt_unpark_one(__u32 i, void *data)
{
	struct jmt_vt_move_ctx *mc = (struct jmt_vt_move_ctx *)data;
	struct jmt_frame *f;

	if (i >= mc->n)
		return 1;
	f = jmt_parked_frame(mc->sink, i);
	if (!f) {
		jmt_count(mc->sink, JMT_CNT_VT_FRAMES_LOST, 1);
		return 0;
	}
	jmt_clock_unpark(&f->start, mc->now);
	if (jmt_vt_push(mc->t, f))
		jmt_count(mc->sink, JMT_CNT_DEPTH_OVERFLOW, 1);
	jmt_forget_frame(mc->sink, i);
	return 0;
}

/*
 * The virtual thread whose frames parked's header describes mounts on carrier
 * t: they go back on top of t's stack, bottom first, their clocks going on
 * from what they had used (the header itself stays the caller's to forget).
 * foreign: as in jmt_push.
 */
static __always_inline void jmt_vt_mount(struct jmt_thread *t, struct jmt_sink *sink, const struct jmt_parked *parked,
					 const int foreign)
{
	struct jmt_clock now;
	struct jmt_vt_move_ctx mc = {.t = t, .sink = sink, .now = &now, .n = parked->n};

	jmt_hook_clock(sink, t, &now);
	if (foreign) {
		t->foreign_start = parked->foreign_start;
		jmt_clock_unpark(&t->foreign_start, &now);
	}
	jmt_loop(JMT_MAX_DEPTH, jmt_vt_unpark_one, &mc);
	t->depth += parked->beyond;
}

#endif /* JMT_VTHREAD_FRAMES_H */
