/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small helpers the program's parts share: the per-CPU caches' slot
 * sequence and min_u32 (next_id, which hands out ids, is compat.bpf.h's).
 */
#ifndef JMT_HELPERS_BPF_H
#define JMT_HELPERS_BPF_H

#include "globals.bpf.h"

static __always_inline __u32 min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

/*
 * The per-CPU caches are written field by field. A program preempted while
 * writing (or reading) a slot could let another program on the same CPU read
 * half of two entries; each slot carries a sequence, odd while written, and a
 * read counts only when the sequence was even and unchanged around it. One
 * CPU: program order is the only order to keep, against the compiler.
 */
#define jmt_barrier() asm volatile("" ::: "memory")

static __always_inline __u32 cache_read_begin(const __u32 *seq)
{
	__u32 s = *(const volatile __u32 *)seq;

	jmt_barrier();
	return s;
}

static __always_inline int cache_read_valid(const __u32 *seq, __u32 begin)
{
	jmt_barrier();
	return !(begin & 1) && *(const volatile __u32 *)seq == begin;
}

static __always_inline void cache_write_begin(__u32 *seq)
{
	*(volatile __u32 *)seq += 1;
	jmt_barrier();
}

static __always_inline void cache_write_end(__u32 *seq)
{
	jmt_barrier();
	*(volatile __u32 *)seq += 1;
}

#endif /* JMT_HELPERS_BPF_H */
