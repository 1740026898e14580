/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread's stack of traced frames: its layout, and the hooks through which
 * the pure logic over it (callstack.h, vthread_frames.h) reaches the world.
 * Included by the BPF programs and the unit tests alike.
 *
 * Invariants:
 * - t->depth counts open traced frames; frames[0..min(depth, MAX)-1] are
 *   stored, frames beyond JMT_MAX_DEPTH are only counted.
 * - A frame's child clock is the sum of the spans of the traced frames closed
 *   directly above it (and of dropped frames' children), so exclusive =
 *   inclusive - child never double-subtracts nested callees.
 * - All times are ns; cpu_* are on-CPU ns of the frame's thread, runq_* the ns
 *   it waited runnable for a CPU; elapsed - on-CPU - run-queue is blocked time.
 * - events count the probe events (traced or rejected) of the frame's thread,
 *   traced those of traced methods among them: a frame's counts cover every
 *   event after its entry, its return included, so each one stands for about
 *   one trap's time inside the frame (userspace subtracts the calibrated cost).
 * - foreign (--foreign): a frame's foreign clock is the part of its exclusive
 *   time spent inside untraced callees (callstack.h).
 */
#ifndef JMT_FRAMES_H
#define JMT_FRAMES_H

#include "jmethodtime.h"
#include "clock.h"

struct jmt_frame {
	__u32 id;		/* method id */
	__u32 fp;		/* fingerprint of the method key (return matching) */
	struct jmt_clock start; /* the thread's clock at entry; parked: what the frame had used (jmt_clock_park) */
	struct jmt_clock child; /* spans of the traced frames closed directly above it */
	__u64 seen_mask;	/* bit (id % 64) of every frame from 0 to here: 64 bits, id & 63 */
	__u64 sp;		/* the entry probe caller's stack pointer (the Java frame's); 0 once parked */
	__u64 call_site;	/* return address of the probe's function, 0 when not read */
	__u32 recursive;	/* 1 when the same method is open below this frame */
	__u32 path;		/* call path id (0 when paths are off) */
	__u32 foreign_depth;	/* --foreign: untraced calls open directly above this frame */
	__u32 foreign_pad;
	__u64 vthread;		  /* the virtual thread that parked it, 0 before a park */
	__u64 pinned_ns;	  /* ns its carrier was blocked while its virtual thread was pinned (jmt_pinned_add) */
	__u32 pinned;		  /* such blocks */
	__u32 pinned_monitor;	  /* of those, pinned because a monitor was held */
	struct jmt_clock foreign; /* --foreign: closed segments' spans */
};

/* A call site seen for (method id, stack pointer, parent method id): the
 * guess used instead of reading user memory again (~190 ns per read). */
#define JMT_SITE_SLOTS 64
JMT_STATIC_ASSERT(JMT_POWER_OF_TWO(JMT_SITE_SLOTS) && JMT_SITE_SLOTS <= 64,
		  "jmt_site_slot masks the top 6 bits of a 32-bit hash");
struct jmt_site {
	__u64 sp;
	__u32 id;
	__u32 parent; /* id of the traced frame below, 0 at depth 0 */
	__u64 call_site;
};

/* --per-thread: the row id of (this thread, method id), 0 in an empty slot. */
struct jmt_row_slot {
	__u32 id;
	__u32 row;
};

struct jmt_thread {
	__u64 cpu_total_ns;  /* on-CPU ns up to the last switch-out */
	__u64 switch_in_ns;  /* ktime (ns) of the last switch-in */
	__u64 runq_total_ns; /* run-queue wait (ns) up to the last switch-in */
	__u64 events_total;  /* probe events up to the last switch-out */
	__u64 traced_total;  /* events of traced methods, counted as they happen */
	__u32 depth;	     /* open traced frames, may exceed JMT_MAX_DEPTH */
	__u32 initialized;
	__u32 on_cpu;			/* 1 from a switch-in (or a probe) to the next switch-out */
	__u32 tid;			/* kernel thread id (init pid namespace) */
	__u64 gap_prev_ns;		/* ktime (ns) of the last clocked event (gaps.h), 0 before one */
	__u64 gap_prev_events;		/* its events count (struct jmt_clock.events) */
	__u64 gap_prev_switch_ns;	/* switch_in_ns then: another value means a switch came between */
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
	struct jmt_row_slot
		rows[JMT_ROW_SLOTS]; /* --per-thread: by method id & (JMT_ROW_SLOTS - 1), zeroed at creation */
};

/* Task storage holds at most about 64 KiB a value. */
JMT_STATIC_ASSERT(sizeof(struct jmt_thread) <= 60000, "a thread's state fits task storage");

/* What closing one frame contributes to its method's totals: the VALUE and
 * FOREIGN fields of JMT_METHOD_STATS (jmethodtime.h), added by jmt_add_closed.
 * Inclusive values are 0 for a recursive frame; every value is 0 for a dropped
 * one but unreturned (1); traced_* are of events_*, events of traced methods;
 * the --foreign ones are of the exclusive values, those inside untraced callees. */
struct jmt_closed {
	__u32 id;
	__u32 path;	    /* the frame's call path id */
	__u64 vthread;	    /* the frame's virtual thread, when it was open across an unmount */
	__u32 cpu_clamped;  /* 1 when the thread's on-CPU clock ran ahead of elapsed time in this frame */
	__u32 foreign_lost; /* --foreign: 1 when an untraced callee's return never came (segment cut short) */
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

/* The top stored frame, 0 when none is stored (depth 0 or beyond JMT_MAX_DEPTH). */
static __always_inline struct jmt_frame *jmt_top(struct jmt_thread *t)
{
	__u32 d = t->depth;

	if (d == 0 || d > JMT_MAX_DEPTH)
		return 0;
	return &t->frames[JMT_IDX(d - 1)];
}

static __always_inline const struct jmt_frame *jmt_top_const(const struct jmt_thread *t)
{
	return jmt_top((struct jmt_thread *)t);
}

/* Call path id and method id of the top stored frame (the parent of an
 * entry), 0 when none. */
static __always_inline __u32 jmt_parent_path(const struct jmt_thread *t)
{
	const struct jmt_frame *f = jmt_top_const(t);

	return f ? f->path : 0;
}

static __always_inline __u32 jmt_parent_id(const struct jmt_thread *t)
{
	const struct jmt_frame *f = jmt_top_const(t);

	return f ? f->id : 0;
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

/*
 * The loops over a thread's stack step a callback: through bpf_loop in the BPF
 * programs (the callback is verified once, whatever the stack's depth, so the
 * code after the loop is not verified once per depth; compat.bpf.h: a bounded
 * loop on a kernel without it), through a plain loop in userspace.
 */
#ifdef __BPF__
#include "compat.bpf.h"
#else
static inline void jmt_loop(__u32 n, long (*fn)(__u32, void *), void *ctx)
{
	for (__u32 i = 0; i < n; i++)
		if (fn(i, ctx))
			break;
}
#endif

/*
 * Hooks: what the pure logic needs of the world, defined by the file that
 * includes it (jmethodtime.bpf.c: the maps and clocks of the programs; the
 * unit tests: plain memory). sink is that file's own context.
 * - jmt_event_clock: t's clocks at a probe event (the event already counted).
 * - jmt_hook_clock: t's clocks at a freeze or thaw (no probe event).
 * - jmt_entry_path: the call path id of an entry of method id on t (0 when
 *   call paths are off).
 * - jmt_read_call_site: the return address of the entry probe's function,
 *   whose frame pointer is bp (0 when it cannot be read).
 * - jmt_account: a frame closed by its return, or counted beyond
 *   JMT_MAX_DEPTH; with_threads as passed to jmt_return.
 * - jmt_dropped: a frame dropped because its return never fired.
 * - jmt_count: counter c (enum jmt_counter) goes up by n.
 * - jmt_park_frame: keep frame f as parked frame idx of the virtual thread
 *   being unmounted (0, or non-0 when it cannot be kept); jmt_park_header:
 *   keep its header likewise.
 * - jmt_parked_frame: parked frame idx of the virtual thread being mounted (0
 *   when lost); jmt_forget_frame: parked frame idx is gone.
 */
struct jmt_sink;
struct jmt_parked;
static __always_inline void jmt_event_clock(struct jmt_sink *sink, struct jmt_thread *t, struct jmt_clock *now);
static __always_inline void jmt_hook_clock(struct jmt_sink *sink, struct jmt_thread *t, struct jmt_clock *now);
static __always_inline __u32 jmt_entry_path(struct jmt_sink *sink, const struct jmt_thread *t, __u32 id);
static __always_inline __u64 jmt_read_call_site(struct jmt_sink *sink, __u64 bp);
static __always_inline void jmt_account(struct jmt_sink *sink, struct jmt_thread *t, const struct jmt_closed *c,
					const int with_threads);
static __always_inline void jmt_dropped(struct jmt_sink *sink, struct jmt_thread *t, const struct jmt_closed *c);
static __always_inline void jmt_count(struct jmt_sink *sink, __u32 c, __u64 n);
static __always_inline int jmt_park_frame(struct jmt_sink *sink, __u32 idx, const struct jmt_frame *f);
static __always_inline int jmt_park_header(struct jmt_sink *sink, const struct jmt_parked *p);
static __always_inline struct jmt_frame *jmt_parked_frame(struct jmt_sink *sink, __u32 idx);
static __always_inline void jmt_forget_frame(struct jmt_sink *sink, __u32 idx);

#endif /* JMT_FRAMES_H */
