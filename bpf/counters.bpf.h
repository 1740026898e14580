/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-CPU record (diagnostic counters, slice_events) and its increments.
 */
#ifndef JMT_COUNTERS_BPF_H
#define JMT_COUNTERS_BPF_H

#include "globals.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jmt_cpu);
} cpu_state SEC(".maps");

/* This CPU's record; never NULL for key 0 of a per-CPU array, checked for the verifier. */
static __always_inline struct jmt_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/* Counters and slice_events are plain per-CPU increments: a program preempted
 * midway (only under preempt=full/lazy/RT) may very rarely lose one, which
 * shifts a diagnostic count or one event's correction, never a total. */
static __always_inline void bump(struct jmt_cpu *cpu, enum jmt_counter c)
{
	if (c < JMT_CNT_NR)
		cpu->counters[c] += 1;
}

static __always_inline void bump_by(struct jmt_cpu *cpu, enum jmt_counter c, __u64 n)
{
	if (c < JMT_CNT_NR)
		cpu->counters[c] += n;
}

static __always_inline void count(enum jmt_counter c)
{
	struct jmt_cpu *cpu = this_cpu();

	if (cpu)
		bump(cpu, c);
}

#endif /* JMT_COUNTERS_BPF_H */
