/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The method table: method key -> (id, verdict), with a per-CPU cache in
 * front, and the names of each traced method, read once at first sight.
 */
#ifndef JMT_METHODS_BPF_H
#define JMT_METHODS_BPF_H

#include "globals.bpf.h"
#include "helpers.bpf.h"
#include "counters.bpf.h"
#include "filters.bpf.h"
#include "args.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_METHOD_KEYS);
	__type(key, struct jmt_method_key);
	__type(value, struct jmt_method_info);
} methods SEC(".maps");

/* Per-CPU direct-mapped cache of the method table, indexed by fingerprint:
 * an array lookup instead of a hash of 24 bytes on most events. A slot is
 * valid while method_generation is the one it was filled in: a class unload
 * drops that class's table entries (their names' memory may be reused for
 * other names, which would then share a key), then moves the generation on. */
struct jmt_method_cache_slot {
	__u32 seq; /* odd while a program writes the slot (helpers.bpf.h, cache_read_begin) */
	__u32 pad;
	struct jmt_method_key key;
	struct jmt_method_info info;
	__u64 generation;
};

/* Class unloads seen so far (see jmt_method_cache_slot). */
__u64 method_generation = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_METHOD_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct jmt_method_cache_slot);
} method_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_METHODS);
	__type(key, __u32);
	__type(value, struct jmt_names);
} names SEC(".maps");

/* Examples of rejected methods (JMT_REJECTED_EXAMPLES): read_ok is 1 when
 * the method name was read too (the --method stage reads it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JMT_REJECT_GROUPS *JMT_REJECTED_EXAMPLES);
	__type(key, __u32);
	__type(value, struct jmt_names);
} rejected_examples SEC(".maps");

/* Examples taken so far per enum jmt_reject_group, at most JMT_REJECTED_EXAMPLES. */
__u32 rejected_taken[JMT_REJECT_GROUPS] = {};

/* Class keys (klass, packed address|length) that --class/--method rejected;
 * the loader shrinks it to one entry without globs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_REJECTED_CLASSES);
	__type(key, __u64);
	__type(value, __u8);
} rejected_classes SEC(".maps");

/* One buffer per scratch level (JMT_SCRATCH_LEVELS). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct jmt_names);
} names_scratch SEC(".maps");

#if !JMT_HAS_BPF_LOOP
/* compat_glob_steps's arguments are 64-bit, checked
 * whole and masked as well (powers of two), the masks hidden from clang: 5.10
 * knows nothing of a global function's arguments, and does not carry a check
 * to the copies it spills and fills. Its stack is small: 5.10 allows 512
 * bytes to the deepest chain: the entry program's 256, method_info_slow's, a
 * verdict's and this one's, 32 each at least. */
#define COMPAT_GLOB_ARGS_BAD(kind, i, level) \
	((level) >= JMT_SCRATCH_LEVELS || (i) >= JMT_MAX_GLOBS || (kind) >= JMT_GLOB_KINDS)

static __always_inline __u32 compat_masked(__u32 v, __u32 mask)
{
	asm volatile("" : "+r"(v));
	return v & mask;
}

/* filters.bpf.h's compat_glob_steps (globs_kept set the state up). A global
 * function, verified once; the state is in a map value, read and written at every step (the
 * barrier: clang would keep it in registers, whose values the verifier would
 * follow step by step), so every step's paths meet in one state. */
__noinline int compat_glob_steps(__u64 kind, __u64 i, __u64 level)
{
	__u32 key = level, k = compat_masked(kind, JMT_GLOB_KINDS - 1), g = compat_masked(i, JMT_MAX_GLOBS - 1);
	const volatile char *pat = globs[k][g].s;
	struct jmt_glob_state *st;
	struct jmt_names *n;
	const char *name;

	if (COMPAT_GLOB_ARGS_BAD(kind, i, level))
		return 1;
	n = bpf_map_lookup_elem(&names_scratch, &key);
	st = bpf_map_lookup_elem(&glob_scratch, &key);
	if (!n || !st)
		return 1;
	/* Four live values (the state, the pattern, the name, the step): in
	 * registers, not on the stack. A method name is read through the class
	 * buffer's mask too: its bytes are read only below its length, at most
	 * JMT_METHOD_BUF, and the mask keeps a read within struct jmt_names. */
	name = k == JMT_GLOB_CLASS ? n->klass : n->method;
	for (__u32 step = 0; step < JMT_COMPAT_GLOB_BURST; step++) {
		jmt_barrier();
		if (jmt_glob_step(st, pat, name, JMT_CLASS_BUF - 1))
			return 1;
	}
	return 0;
}

#endif

JMT_SLOW_LINKAGE int method_info_slow(const struct jmt_method_key *k, struct jmt_method_info *out);

/* The method table entry for k, or 0; an entry left by a class unload
 * (forget_class) is dropped now and not given. */
static __always_inline struct jmt_method_info *method_entry(const struct jmt_method_key *k, struct jmt_cpu *cpu)
{
	struct jmt_method_info *found = bpf_map_lookup_elem(&methods, k);

#if !JMT_HAS_FOR_EACH_MAP_ELEM
	if (found && jmt_method_stale(k, method_generation)) {
		if (!bpf_map_delete_elem(&methods, k))
			bump(cpu, JMT_CNT_METHODS_FORGOTTEN);
		found = 0;
	}
#endif
	return found;
}

/* The method table entry for k when it has one: 0 and *out, else -1 and
 * counted (returns_unjudged). Inline: the compat object's return program calls
 * nothing below it here. */
static __always_inline int method_known(const struct jmt_method_key *k, struct jmt_method_info *out,
					struct jmt_cpu *cpu)
{
	struct jmt_method_info *found = method_entry(k, cpu);

	if (!found) {
		bump(cpu, JMT_CNT_RETURNS_UNJUDGED);
		return -1;
	}
	*out = *found;
	return 0;
}

/* The method table entry for k (verdict, id), created on first sight. */
static __always_inline int method_info(const struct jmt_method_key *k, __u32 fp, struct jmt_method_info *out,
				       struct jmt_cpu *cpu, const int may_create)
{
	__u32 slot_idx = fp & method_cache_mask;
	struct jmt_method_cache_slot *slot = bpf_map_lookup_elem(&method_cache, &slot_idx);

	__u64 generation = method_generation;

	if (slot) {
		__u32 seq = cache_read_begin(&slot->seq);
		int hit = slot->key.klass == k->klass && slot->key.method == k->method && slot->key.sig == k->sig &&
			slot->key.jvm == k->jvm && slot->generation == generation;

		*out = slot->info;
		if (hit && cache_read_valid(&slot->seq, seq))
			return 0;
	}
	if (may_create ? method_info_slow(k, out) : method_known(k, out, cpu))
		return -1;
	if (slot) {
		cache_write_begin(&slot->seq);
		slot->key = *k;
		slot->info = *out;
		slot->generation = generation;
		cache_write_end(&slot->seq);
	}
	return 0;
}

/* The filters' verdict: kept (0 or 1), the stage that decided, whether the
 * method's name was read into the scratch names, the class name read's error. */
#define JMT_VERDICT_KEPT 1
#define JMT_VERDICT_STAGE(v) (((v) >> 1) & 3)
#define JMT_VERDICT_METHOD_READ 8
#define JMT_VERDICT_CLASS_ERR 16

static int method_verdict(const struct jmt_method_key *k, __u32 level);
static int class_globs_verdict(__u32 level, int verdict);
static int method_globs_verdict(__u32 level, int verdict);
static int method_record(const struct jmt_method_key *k, struct jmt_method_info *out, __u32 level, int verdict);

/* Finds or creates the method table entry for k: verdict, id, names. A global
 * function (compat.bpf.h: static before 5.12): verified once on its own,
 * called only on a cache miss, so the filters (prefixes, then class globs,
 * then method globs) cost only at the first sight of each method. Takes this
 * CPU's next scratch level. */
JMT_SLOW_LINKAGE __noinline int method_info_slow(const struct jmt_method_key *k, struct jmt_method_info *out)
{
	struct jmt_method_info *found;
	struct jmt_cpu *cpu = this_cpu();
	struct jmt_method_key key;
	const struct jmt_method_key *kp = &key;
	__u32 level;
	int err;

	if (!k || !out || !cpu)
		return -1;
#if JMT_SLOW_GLOBAL
	/* A global function's argument is plain memory to the verifier, which 6.1's
	 * refuses as a map key (6.12's takes it): the key goes on the stack. */
	key = *k;
#else
	kp = k; /* a static function's: the caller's stack already */
#endif
	found = method_entry(kp, cpu);
	if (found) {
		*out = *found;
		return 0;
	}
	level = cpu->scratch_depth;
	if (level >= JMT_SCRATCH_LEVELS) {
		bump(cpu, JMT_CNT_SCRATCH_BUSY);
		return -1; /* decided at a later event */
	}
	cpu->scratch_depth = level + 1;
	/* Calls in turn, not one within the other: 6.1's verifier adds up the
	 * stack of every frame of a call chain, each rounded up to 32 (the
	 * return program's 416 bytes, this function's, a glob verdict's and its
	 * bpf_loop callback's, 32 each) against 512. */
	err = method_verdict(kp, level);
	if (err > 0 && (err & JMT_VERDICT_KEPT) && n_class_globs)
		err = class_globs_verdict(level, err);
	if (err > 0 && (err & JMT_VERDICT_KEPT) && n_method_globs)
		err = method_globs_verdict(level, err);
	if (err >= 0)
		err = method_record(kp, out, level, err);
	cpu->scratch_depth = level;
	return err;
}

/* Filter stages that can reject a method, in the order they run. */
enum jmt_stage { JMT_STAGE_KEPT, JMT_STAGE_PACKAGE, JMT_STAGE_CLASS, JMT_STAGE_METHOD };

/* Counts a new method's verdict by the stage that decided it, and keeps the
 * first rejected ones' names (n) as examples. Once per method. */
static __always_inline void count_verdict(const struct jmt_method_key *k, struct jmt_names *n, enum jmt_stage stage,
					  int method_read)
{
	enum jmt_reject_group group;
	__u32 slot;

	count(JMT_CNT_METHODS_SEEN);
	if (stage == JMT_STAGE_KEPT)
		return;
	if (stage == JMT_STAGE_PACKAGE) {
		count(JMT_CNT_REJECTED_BY_PACKAGE);
		group = JMT_REJECTED_BY_PACKAGE;
	} else {
		count(stage == JMT_STAGE_CLASS ? JMT_CNT_REJECTED_BY_CLASS : JMT_CNT_REJECTED_BY_METHOD);
		if (bpf_map_update_elem(&rejected_classes, &k->klass, &jmt_present, BPF_NOEXIST))
			return; /* a class seen before: one example per class */
		count(JMT_CNT_CLASSES_REJECTED_BY_GLOBS);
		group = JMT_REJECTED_BY_GLOBS;
	}
	/* Examples 1..JMT_REJECTED_EXAMPLES: rejected_taken never passes it. */
	slot = next_id(&rejected_taken[group], JMT_REJECTED_EXAMPLES + 1, JMT_ID_EXAMPLE + group);
	if (!slot)
		return;
	slot += group * JMT_REJECTED_EXAMPLES - 1;
	n->read_ok = method_read;
	bpf_map_update_elem(&rejected_examples, &slot, n, BPF_ANY);
}

/* Verdict v after the filter of stage gave kept: 1 kept, 0 rejected by that
 * stage, -1 a glob out of its steps (rejected, and counted). */
static __always_inline int verdict_after(int v, int kept, enum jmt_stage stage)
{
	if (kept < 0)
		count(JMT_CNT_GLOB_BUDGET_OUT); /* once per method: the verdict is kept */
	v &= ~(JMT_VERDICT_KEPT | (3 << 1));
	return kept > 0 ? v | JMT_VERDICT_KEPT : v | (stage << 1);
}

/* The --package verdict on k, its names' addresses and its class name read
 * into level's scratch buffers: a JMT_VERDICT_* set, or -1 when undecided
 * (names unreadable: a later event). */
static __noinline int method_verdict(const struct jmt_method_key *k, __u32 level)
{
	struct jmt_names *n;
	int verdict = 0;

	if (!k || level >= JMT_SCRATCH_LEVELS)
		return -1;
	n = bpf_map_lookup_elem(&names_scratch, &level);
	if (!n)
		return -1;
	n->class_addr = (__u64)key_addr(k->klass);
	n->method_addr = (__u64)key_addr(k->method);
	n->sig_addr = (__u64)key_addr(k->sig);
	n->class_len = key_len(k->klass);
	n->method_len = key_len(k->method);
	n->sig_len = key_len(k->sig);
	n->jvm = k->jvm;
	if (bpf_probe_read_user(n->klass, min_u32(n->class_len, JMT_CLASS_BUF), key_addr(k->klass))) {
		if (n_prefixes || n_class_globs) {
			count(JMT_CNT_NAMES_FAIL);
			return -1;
		}
		verdict |= JMT_VERDICT_CLASS_ERR;
	}
	return verdict_after(verdict, class_kept(n->klass, n->class_len), JMT_STAGE_PACKAGE);
}

/* verdict (kept so far) after the --class globs, on the class name read
 * (at most JMT_CLASS_BUF bytes). */
static __noinline int class_globs_verdict(__u32 level, int verdict)
{
	struct jmt_glob_state *st;
	struct jmt_names *n;

	if (level >= JMT_SCRATCH_LEVELS)
		return -1;
	n = bpf_map_lookup_elem(&names_scratch, &level);
	st = bpf_map_lookup_elem(&glob_scratch, &level);
	if (!n || !st)
		return -1;
	return verdict_after(verdict,
			     globs_kept(JMT_GLOB_CLASS, n->klass, min_u32(n->class_len, JMT_CLASS_BUF), st, level),
			     JMT_STAGE_CLASS);
}

/* verdict (kept so far) after the --method globs, the method's name read
 * first; -1 when it cannot be read (undecided). */
static __noinline int method_globs_verdict(__u32 level, int verdict)
{
	struct jmt_glob_state *st;
	struct jmt_names *n;
	__u32 mlen;

	if (level >= JMT_SCRATCH_LEVELS)
		return -1;
	n = bpf_map_lookup_elem(&names_scratch, &level);
	st = bpf_map_lookup_elem(&glob_scratch, &level);
	if (!n || !st)
		return -1;
	mlen = min_u32(n->method_len, JMT_METHOD_BUF);
	if (bpf_probe_read_user(n->method, mlen, (const void *)n->method_addr)) {
		count(JMT_CNT_NAMES_FAIL);
		return -1;
	}
	return verdict_after(verdict | JMT_VERDICT_METHOD_READ, globs_kept(JMT_GLOB_METHOD, n->method, mlen, st, level),
			     JMT_STAGE_METHOD);
}

/* The method table entry for k by its verdict (method_verdict's), its names
 * (in level's scratch buffers) kept when traced: *out. */
static __noinline int method_record(const struct jmt_method_key *k, struct jmt_method_info *out, __u32 level,
				    int verdict)
{
	struct jmt_method_info *found, info = {};
	struct jmt_names *n;
	long err;

	if (!k || !out || level >= JMT_SCRATCH_LEVELS)
		return -1;
	n = bpf_map_lookup_elem(&names_scratch, &level);
	if (!n)
		return -1;
	info.traced = verdict & JMT_VERDICT_KEPT;
	if (info.traced) {
		info.id = next_id(&last_method_id, max_method_ids, JMT_ID_METHOD);
		if (!info.id) {
			count(JMT_CNT_METHOD_TABLE_FULL);
			info.id = 0;
			info.traced = 0;
		}
	}
	if (bpf_map_update_elem(&methods, k, &info, BPF_NOEXIST)) {
		found = bpf_map_lookup_elem(&methods, k);
		if (!found) {
			count(JMT_CNT_METHOD_TABLE_FULL);
			return -1;
		}
		*out = *found; /* another CPU inserted it first */
		return 0;
	}
#if !JMT_HAS_FOR_EACH_MAP_ELEM
	jmt_method_made(k, method_generation);
#endif
	count_verdict(k, n, JMT_VERDICT_STAGE(verdict), !!(verdict & JMT_VERDICT_METHOD_READ));
	if (info.traced) {
		err = verdict & JMT_VERDICT_CLASS_ERR;
		if (!(verdict & JMT_VERDICT_METHOD_READ))
			err |= bpf_probe_read_user(n->method, min_u32(n->method_len, JMT_METHOD_BUF),
						   key_addr(k->method));
		err |= bpf_probe_read_user(n->sig, min_u32(n->sig_len, JMT_SIG_BUF), key_addr(k->sig));
		n->read_ok = err == 0;
		if (bpf_map_update_elem(&names, &info.id, n, BPF_ANY) || err)
			count(JMT_CNT_NAMES_FAIL);
	}
	*out = info;
	return 0;
}

#if JMT_HAS_FOR_EACH_MAP_ELEM
/* Drops one method table entry of the unloaded class (bpf_for_each_map_elem). */
static long forget_if_class(struct bpf_map *map, const struct jmt_method_key *key, struct jmt_method_info *info,
			    __u64 *klass)
{
	if (key->klass == *klass && !bpf_map_delete_elem(map, key))
		count(JMT_CNT_METHODS_FORGOTTEN);
	return 0;
}
#endif

/* A class of name klass (packed address|length, as in the method key) unloaded:
 * its methods' entries go, and every CPU's cache with them. The JVM unloads
 * at a safepoint, before the class's symbols are freed, so no event of a
 * reused name can meet a stale entry. Other classes of the same name (other
 * loaders) lose their entries too and get new ids at their next event; the
 * report merges rows by name. Without bpf_for_each_map_elem (compat.bpf.h),
 * the unload is recorded and each of the class's entries goes at its next
 * lookup, before it could be taken for a method of another class. */
static __always_inline void forget_class(__u64 klass)
{
	count(JMT_CNT_CLASSES_UNLOADED);
#if JMT_HAS_FOR_EACH_MAP_ELEM
	bpf_for_each_map_elem(&methods, forget_if_class, &klass, 0);
#else
	jmt_class_unloaded(klass, method_generation + 1);
#endif
	/* After the deletions: a cache filled in between holds a fresh entry. */
	__sync_fetch_and_add(&method_generation, 1);
}

#endif /* JMT_METHODS_BPF_H */
