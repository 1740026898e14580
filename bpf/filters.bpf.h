/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The filters that decide whether a method is traced: --package prefixes
 * (class_kept) and --class / --method globs (globs_kept, stepping glob.h).
 * Run once per method, on the method table's slow path (methods.bpf.h).
 */
#ifndef JMT_FILTERS_BPF_H
#define JMT_FILTERS_BPF_H

#include "globals.bpf.h"
#include "glob.h"
#include "package.h"

/* Whether a class name is under one of the --package prefixes (package.h). */
static __always_inline int class_kept(const char *cls, __u32 len)
{
	if (n_prefixes == 0)
		return 1;
	for (__u32 i = 0; i < JMT_MAX_PREFIXES; i++) {
		if (i >= n_prefixes)
			break;
		if (jmt_under_package(cls, len, prefixes[i].s, prefixes[i].len))
			return 1;
	}
	return 0;
}

/*
 * The state of the glob being matched lives in a map value, not on the stack:
 * the verifier then sees its indices as unknown scalars and checks the
 * bpf_loop callback once for all steps, instead of following constant
 * indices step by step through a known rodata pattern (which, for a long
 * pattern, exceeds its instruction budget). Per CPU and per scratch level,
 * like names_scratch: a program preempted midway (preempt=full/lazy/RT) and
 * another one matching on the same CPU meanwhile use two levels.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct jmt_glob_state);
} glob_scratch SEC(".maps");

/* One glob against one name, stepped by bpf_loop (glob.h): st in glob_scratch
 * (st->glob: the glob's index in globs), str at a name buffer of
 * names_scratch. Small: its callback is the fourth frame of a chain whose
 * stack 6.1 adds up against 512 bytes (methods.bpf.h, method_info_slow). */
struct glob_ctx {
	struct jmt_glob_state *st;
	const char *str;
};

#if JMT_HAS_BPF_LOOP
static long glob_step_class(__u32 i, void *data)
{
	struct glob_ctx *g = data;

	return jmt_glob_step(g->st, globs[JMT_GLOB_CLASS][g->st->glob & (JMT_MAX_GLOBS - 1)].s, g->str,
			     JMT_CLASS_BUF - 1);
}

static long glob_step_method(__u32 i, void *data)
{
	struct glob_ctx *g = data;

	return jmt_glob_step(g->st, globs[JMT_GLOB_METHOD][g->st->glob & (JMT_MAX_GLOBS - 1)].s, g->str,
			     JMT_METHOD_BUF - 1);
}
#endif

#if !JMT_HAS_BPF_LOOP
/* Up to JMT_COMPAT_GLOB_BURST steps of glob i of kind against the name of
 * kind in names_scratch at level, its state in glob_scratch at level (set up
 * by jmt_glob_init): 1 once decided. A global function, verified once
 * (methods.bpf.h defines it, after names_scratch). */
__noinline int compat_glob_steps(__u64 kind, __u64 i, __u64 level);
#endif

/*
 * Whether name (slen bytes, slen <= its buffer: JMT_CLASS_BUF for a class,
 * JMT_METHOD_BUF for a method) matches one of the globs of kind
 * (JMT_GLOB_CLASS, JMT_GLOB_METHOD: a constant): 1 when one does, 0 when none
 * does, -1 when none does but one ran out of its JMT_GLOB_STEPS steps
 * (undecided). st: this CPU's glob_scratch at level, name: its names_scratch.
 * Bounded: at most JMT_MAX_GLOBS loops of at most JMT_GLOB_STEPS steps.
 */
static __always_inline int globs_kept(enum jmt_glob_kind kind, const char *name, __u32 slen, struct jmt_glob_state *st,
				      __u32 level)
{
#if JMT_HAS_BPF_LOOP
	struct glob_ctx g = {.st = st, .str = name};
#endif

	/* Nothing but the glob's index is held across bpf_loop: the globs' count
	 * (rodata), the name's length and whether a glob ran out of steps are
	 * read where they are kept (st). Fewer spills, a frame of 24 bytes. */
	st->undecided = 0;
	st->slen = slen;
	for (__u32 i = 0; i < JMT_MAX_GLOBS; i++) {
		if (i >= (kind == JMT_GLOB_CLASS ? n_class_globs : n_method_globs))
			break;
		jmt_glob_init(st, globs[kind][i].len, st->slen);
#if JMT_HAS_BPF_LOOP
		st->glob = i;
		bpf_loop(JMT_GLOB_STEPS, kind == JMT_GLOB_CLASS ? glob_step_class : glob_step_method, &g, 0);
#else
		/* JMT_GLOB_STEPS steps in all, as bpf_loop's callback would take. */
		for (__u32 burst = 0; burst < JMT_GLOB_STEPS / JMT_COMPAT_GLOB_BURST; burst++)
			if (compat_glob_steps(kind, i, level))
				break;
#endif
		if (st->result == JMT_GLOB_MATCH)
			return 1;
		if (st->result == JMT_GLOB_RUNNING)
			st->undecided = 1;
	}
	return st->undecided ? -1 : 0;
}

#endif /* JMT_FILTERS_BPF_H */
