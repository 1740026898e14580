/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Glob matching for --class and --method, one bounded step at a time.
 * Pure functions over plain memory: included by jmethodtime.bpf.c (which
 * drives the steps with bpf_loop) and by the unit tests (tests/unit/test_glob.cpp),
 * so the kernel's matcher is the one that is tested.
 *
 * Semantics: '*' matches any run of bytes, empty or not, '/' included; '?'
 * matches exactly one byte; every other byte matches itself. The whole
 * subject must match (anchored at both ends). There is no escape character.
 *
 * Algorithm: iterative star backtracking. On a mismatch only the most recent
 * '*' is retried, swallowing one more subject byte: an earlier '*' never needs
 * to swallow more, because whatever it would swallow the later '*' can too.
 *
 * Invariants (checked on every step, so any state is safe to step):
 * - p <= plen < JMT_GLOB_LEN and s <= slen; pattern bytes are read only at
 *   p < plen, subject bytes only at s < slen, and every index is also masked
 *   with its buffer's size - 1 (sizes are powers of two).
 * - star_p < p when star_p != JMT_GLOB_NO_STAR; star_s only grows, and s >= star_s.
 * Work: between two backtracks p only grows (plen + 1 steps at most) and each
 * backtrack moves star_s one byte on, so a match takes at most
 * (slen + 1) * (plen + 1) + plen + 1 steps (about 132000 for a 127-byte
 * pattern against a 1024-byte name); practical patterns take a few times slen.
 * The kernel stops after JMT_GLOB_STEPS steps (jmethodtime.h) and counts it.
 */
#ifndef JMT_GLOB_H
#define JMT_GLOB_H

#include "jmethodtime.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define JMT_GLOB_NO_STAR 0xffffffffU

enum jmt_glob_result {
	JMT_GLOB_RUNNING = -1, /* undecided: step again */
	JMT_GLOB_NO_MATCH = 0,
	JMT_GLOB_MATCH = 1,
};

struct jmt_glob_state {
	__u32 p;	 /* next pattern byte */
	__u32 s;	 /* next subject byte */
	__u32 star_p;	 /* index of the last '*' passed, JMT_GLOB_NO_STAR before any */
	__u32 star_s;	 /* subject index where that '*''s run ends for now */
	__u32 plen;	 /* pattern length (bytes), < JMT_GLOB_LEN */
	__u32 slen;	 /* subject length (bytes), <= its buffer's size */
	__s32 result;	 /* enum jmt_glob_result */
	__u32 steps;	 /* steps taken so far */
	__u32 glob;	 /* filters.bpf.h: the index of the glob being matched */
	__u32 undecided; /* filters.bpf.h: 1 once a glob ran out of steps */
};

static __always_inline void jmt_glob_init(struct jmt_glob_state *st, __u32 plen, __u32 slen)
{
	st->p = 0;
	st->s = 0;
	st->star_p = JMT_GLOB_NO_STAR;
	st->star_s = 0;
	st->plen = plen < JMT_GLOB_LEN ? plen : JMT_GLOB_LEN - 1;
	st->slen = slen;
	st->result = JMT_GLOB_RUNNING;
	st->steps = 0;
}

/*
 * One step of the match of pat (plen bytes) against str (slen bytes, read
 * through str_mask = its buffer's size - 1). Returns 0 while undecided, 1 once
 * st->result is decided (further steps change nothing): the contract of a
 * bpf_loop callback.
 */
static __always_inline int jmt_glob_step(struct jmt_glob_state *st, const volatile char *pat, const char *str,
					 __u32 str_mask)
{
	__u32 p = st->p, s = st->s, plen = st->plen;
	char pc = 0;

	if (st->result != JMT_GLOB_RUNNING)
		return 1;
	if (plen >= JMT_GLOB_LEN || p > plen || s > st->slen) {
		st->result = JMT_GLOB_NO_MATCH; /* a corrupt state: never a match */
		return 1;
	}
	st->steps += 1;
	if (p < plen)
		pc = pat[p & (JMT_GLOB_LEN - 1)];
	if (s >= st->slen) {
		/* Subject consumed: only trailing '*'s may remain. */
		if (p < plen && pc == '*') {
			st->p = p + 1;
			return 0;
		}
		st->result = p == plen ? JMT_GLOB_MATCH : JMT_GLOB_NO_MATCH;
		return 1;
	}
	if (p < plen && pc == '*') {
		/* The star swallows nothing for now. */
		st->star_p = p;
		st->star_s = s;
		st->p = p + 1;
		return 0;
	}
	if (p < plen && (pc == '?' || pc == str[s & str_mask])) {
		st->p = p + 1;
		st->s = s + 1;
		return 0;
	}
	if (st->star_p != JMT_GLOB_NO_STAR && st->star_p < plen) {
		/* Backtrack: the last star swallows one more byte. */
		st->star_s += 1;
		st->s = st->star_s;
		st->p = st->star_p + 1;
		return 0;
	}
	st->result = JMT_GLOB_NO_MATCH;
	return 1;
}

#endif /* JMT_GLOB_H */
