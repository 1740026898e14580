/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread's clocks (struct jmt_clock, jmethodtime.h: elapsed ns, on-CPU ns,
 * probe events, traced events, run-queue ns) and the few ways they combine:
 * a span since a start, a sum of spans, and a start parked while its virtual
 * thread is off a carrier. Pure: used by the BPF programs and the unit tests.
 */
#ifndef JMT_CLOCK_H
#define JMT_CLOCK_H

#include "jmethodtime.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static __always_inline __u64 jmt_sat_sub(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static __always_inline __u64 jmt_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

/* span = now - start, field by field, never below 0. */
static __always_inline void jmt_clock_since(struct jmt_clock *span, const struct jmt_clock *now,
					    const struct jmt_clock *start)
{
	span->wall_ns = jmt_sat_sub(now->wall_ns, start->wall_ns);
	span->cpu_ns = jmt_sat_sub(now->cpu_ns, start->cpu_ns);
	span->events = jmt_sat_sub(now->events, start->events);
	span->traced = jmt_sat_sub(now->traced, start->traced);
	span->runq_ns = jmt_sat_sub(now->runq_ns, start->runq_ns);
}

static __always_inline void jmt_clock_add(struct jmt_clock *sum, const struct jmt_clock *span)
{
	sum->wall_ns += span->wall_ns;
	sum->cpu_ns += span->cpu_ns;
	sum->events += span->events;
	sum->traced += span->traced;
	sum->runq_ns += span->runq_ns;
}

/* sum += now - start. */
static __always_inline void jmt_clock_add_since(struct jmt_clock *sum, const struct jmt_clock *now,
						const struct jmt_clock *start)
{
	struct jmt_clock span;

	jmt_clock_since(&span, now, start);
	jmt_clock_add(sum, &span);
}

/*
 * A start whose thread leaves its carrier at now (jmt_clock_park) and comes
 * back on a carrier at a later now (jmt_clock_unpark). Parked, it holds what
 * it had used up instead of its start: back, it goes on from there, so it
 * counts only its own virtual thread's on-CPU ns, events and run-queue ns.
 * Elapsed time runs on (wall_ns is kept): the time unmounted is off-CPU time
 * that is not run-queue wait, blocked time.
 */
static __always_inline void jmt_clock_park(struct jmt_clock *start, const struct jmt_clock *now)
{
	start->cpu_ns = jmt_sat_sub(now->cpu_ns, start->cpu_ns);
	start->events = jmt_sat_sub(now->events, start->events);
	start->traced = jmt_sat_sub(now->traced, start->traced);
	start->runq_ns = jmt_sat_sub(now->runq_ns, start->runq_ns);
}

static __always_inline void jmt_clock_unpark(struct jmt_clock *start, const struct jmt_clock *now)
{
	start->cpu_ns = now->cpu_ns - start->cpu_ns;
	start->events = now->events - start->events;
	start->traced = now->traced - start->traced;
	start->runq_ns = now->runq_ns - start->runq_ns;
}

#endif /* JMT_CLOCK_H */
