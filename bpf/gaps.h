/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The gap between two consecutive probe events of one thread on one CPU (no
 * event and no context switch between them), as the JVM lives it: the rest
 * of one trap, the Java code between the two probes, and the start of the
 * next trap up to its clock read. Its lower edge is one event's cost to the
 * traced JVM with almost no Java code in between.
 *
 * Log-linear buckets (sizes in jmethodtime.h): 2^JMT_GAP_SUB_BITS buckets per power of two, so a
 * bucket is at most 1/32 (3.1%) of its value wide above 32 ns; gaps of
 * 2^JMT_GAP_TOP_LOG2 ns and more share the last bucket. Pure C: the BPF
 * programs and the unit tests include it.
 */
#ifndef JMT_GAPS_H
#define JMT_GAPS_H

#include "jmethodtime.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

JMT_STATIC_ASSERT(JMT_GAP_BUCKETS == 417,
		  "bucket count: 32 linear buckets below 32 ns, 32 per octave to 2^17 ns, 1 overflow");

/* Index of the highest set bit of v (v > 0): a branchy search, as BPF has no clz. */
static __always_inline __u32 jmt_log2(__u64 v)
{
	__u32 r = 0;

	/* One step of the search per line. */
	/* clang-format off */
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	/* clang-format on */
	return r;
}

/* Bucket of a gap (ns): exact below 2^JMT_GAP_SUB_BITS, then 32 per octave. */
static __always_inline __u32 jmt_gap_bucket(__u64 gap_ns)
{
	__u32 msb;

	if (gap_ns < (1ULL << JMT_GAP_SUB_BITS))
		return (__u32)gap_ns;
	if (gap_ns >= (1ULL << JMT_GAP_TOP_LOG2))
		return JMT_GAP_BUCKETS - 1;
	msb = jmt_log2(gap_ns);
	return ((msb - JMT_GAP_SUB_BITS + 1) << JMT_GAP_SUB_BITS) +
		(__u32)((gap_ns >> (msb - JMT_GAP_SUB_BITS)) & ((1U << JMT_GAP_SUB_BITS) - 1));
}

/* Smallest gap (ns) that falls into bucket b (b < JMT_GAP_BUCKETS - 1). */
static __always_inline __u64 jmt_gap_bucket_low_ns(__u32 b)
{
	__u32 octave = b >> JMT_GAP_SUB_BITS;

	if (octave == 0)
		return b;
	return (__u64)((1U << JMT_GAP_SUB_BITS) | (b & ((1U << JMT_GAP_SUB_BITS) - 1))) << (octave - 1);
}

#endif /* JMT_GAPS_H */
