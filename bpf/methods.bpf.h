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

int method_info_slow(const struct jmt_method_key *k, struct jmt_method_info *out);

/* The method table entry for k (verdict, id), created on first sight. */
static __always_inline int method_info(const struct jmt_method_key *k, __u32 fp, struct jmt_method_info *out)
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
	if (method_info_slow(k, out))
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

static int method_info_resolve(const struct jmt_method_key *k, struct jmt_method_info *out, __u32 level);

/* Finds or creates the method table entry for k: verdict, id, names. A global
 * function: verified once on its own, called only on a cache miss, so the
 * filters (prefixes, then class globs, then method globs) cost only at the
 * first sight of each method. Takes this CPU's next scratch level. */
__noinline int method_info_slow(const struct jmt_method_key *k, struct jmt_method_info *out)
{
	struct jmt_method_info *found;
	struct jmt_cpu *cpu = this_cpu();
	__u32 level;
	int err;

	if (!k || !out || !cpu)
		return -1;
	found = bpf_map_lookup_elem(&methods, k);
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
	err = method_info_resolve(k, out, level);
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
	__u8 one = 1;

	count(JMT_CNT_METHODS_SEEN);
	if (stage == JMT_STAGE_KEPT)
		return;
	if (stage == JMT_STAGE_PACKAGE) {
		count(JMT_CNT_REJECTED_BY_PACKAGE);
		group = JMT_REJECTED_BY_PACKAGE;
	} else {
		count(stage == JMT_STAGE_CLASS ? JMT_CNT_REJECTED_BY_CLASS : JMT_CNT_REJECTED_BY_METHOD);
		if (bpf_map_update_elem(&rejected_classes, &k->klass, &one, BPF_NOEXIST))
			return; /* a class seen before: one example per class */
		count(JMT_CNT_CLASSES_REJECTED_BY_GLOBS);
		group = JMT_REJECTED_BY_GLOBS;
	}
	/* Examples 1..JMT_REJECTED_EXAMPLES: rejected_taken never passes it. */
	slot = next_id(&rejected_taken[group], JMT_REJECTED_EXAMPLES + 1);
	if (!slot)
		return;
	slot += group * JMT_REJECTED_EXAMPLES - 1;
	n->read_ok = method_read;
	bpf_map_update_elem(&rejected_examples, &slot, n, BPF_ANY);
}

/* method_info_slow's work with the scratch buffers of level. */
static __noinline int method_info_resolve(const struct jmt_method_key *k, struct jmt_method_info *out, __u32 level)
{
	struct jmt_method_info *found, info = {};
	struct jmt_names *n;
	__u32 len, mlen;
	long err, merr = 0;
	int kept, method_read = 0;
	enum jmt_stage stage;

	if (!k || !out || level >= JMT_SCRATCH_LEVELS)
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
	len = min_u32(n->class_len, JMT_CLASS_BUF);
	mlen = min_u32(n->method_len, JMT_METHOD_BUF);
	err = bpf_probe_read_user(n->klass, len, key_addr(k->klass));
	if (err && (n_prefixes || n_class_globs)) {
		count(JMT_CNT_NAMES_FAIL);
		return -1; /* verdict unknown: decide on a later event */
	}
	kept = class_kept(n->klass, n->class_len);
	stage = kept > 0 ? JMT_STAGE_KEPT : JMT_STAGE_PACKAGE;
	/* Class globs see the bytes read (at most JMT_CLASS_BUF). */
	if (kept > 0 && n_class_globs) {
		kept = globs_kept(JMT_GLOB_CLASS, n_class_globs, n->klass, len, level);
		stage = kept > 0 ? JMT_STAGE_KEPT : JMT_STAGE_CLASS;
	}
	if (kept > 0 && n_method_globs) {
		merr = bpf_probe_read_user(n->method, mlen, key_addr(k->method));
		if (merr) {
			count(JMT_CNT_NAMES_FAIL);
			return -1; /* verdict unknown: decide on a later event */
		}
		method_read = 1;
		kept = globs_kept(JMT_GLOB_METHOD, n_method_globs, n->method, mlen, level);
		stage = kept > 0 ? JMT_STAGE_KEPT : JMT_STAGE_METHOD;
	}
	if (kept < 0) {
		count(JMT_CNT_GLOB_BUDGET_OUT); /* once per method: the verdict is kept */
		kept = 0;
	}
	info.traced = kept > 0;
	if (info.traced) {
		info.id = next_id(&last_method_id, max_method_ids);
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
	count_verdict(k, n, stage, method_read);
	if (info.traced) {
		if (!method_read)
			err |= bpf_probe_read_user(n->method, mlen, key_addr(k->method));
		err |= bpf_probe_read_user(n->sig, min_u32(n->sig_len, JMT_SIG_BUF), key_addr(k->sig));
		n->read_ok = err == 0;
		if (bpf_map_update_elem(&names, &info.id, n, BPF_ANY) || err)
			count(JMT_CNT_NAMES_FAIL);
	}
	*out = info;
	return 0;
}

/* Drops one method table entry of the unloaded class (bpf_for_each_map_elem). */
static long forget_if_class(struct bpf_map *map, const struct jmt_method_key *key, struct jmt_method_info *info,
			    __u64 *klass)
{
	if (key->klass == *klass && !bpf_map_delete_elem(map, key))
		count(JMT_CNT_METHODS_FORGOTTEN);
	return 0;
}

/* A class of name klass (packed address|length, as in the method key) unloaded:
 * its methods' entries go, and every CPU's cache with them. The JVM unloads
 * at a safepoint, before the class's symbols are freed, so no event of a
 * reused name can meet a stale entry. Other classes of the same name (other
 * loaders) lose their entries too and get new ids at their next event; the
 * report merges rows by name. */
static __always_inline void forget_class(__u64 klass)
{
	count(JMT_CNT_CLASSES_UNLOADED);
	bpf_for_each_map_elem(&methods, forget_if_class, &klass, 0);
	/* After the deletions: a cache filled in between holds a fresh entry. */
	__sync_fetch_and_add(&method_generation, 1);
}

#endif /* JMT_METHODS_BPF_H */
