/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call path ids (--folded, --tree, --flamegraph, --pprof): (parent path,
 * method) -> path id, handed out at first sight, with a per-CPU cache in front.
 */
#ifndef JMT_PATHS_BPF_H
#define JMT_PATHS_BPF_H

#include "globals.bpf.h"
#include "helpers.bpf.h"
#include "counters.bpf.h"

/* Call paths: (parent path, method) -> path id; the paths' totals are
 * path_stats (totals.bpf.h). The loader shrinks it (and path_cache,
 * path_stats) to one entry when call_paths is off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_PATHS);
	__type(key, struct jmt_path_key);
	__type(value, __u32);
} path_ids SEC(".maps");

/* Per-CPU direct-mapped cache of path_ids: an array lookup instead of a hash
 * on most entries. A pair's path id never changes once handed out, so a slot
 * is never stale; truncated pairs are not cached. */
struct jmt_path_cache_slot {
	__u32 seq; /* odd while a program writes the slot (helpers.bpf.h, cache_read_begin) */
	struct jmt_path_key key;
	__u32 path; /* 0: empty slot */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_PATH_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct jmt_path_cache_slot);
} path_cache SEC(".maps");

/* The path id of method id entered under parent path parent, created on
 * first sight; JMT_PATH_TRUNCATED once the table is full, and for every
 * frame entered above a truncated one. */
static __noinline __u32 path_of_slow(__u32 parent, __u32 id)
{
	struct jmt_path_key key = {.parent = parent, .id = id};
	__u32 *found, path;

	found = bpf_map_lookup_elem(&path_ids, &key);
	if (found)
		return *found;
	path = next_id(&last_path_id, max_path_ids, JMT_ID_PATH);
	if (!path || bpf_map_update_elem(&path_ids, &key, &path, BPF_NOEXIST)) {
		/* Full, or another CPU inserted this path first (its id is the one kept). */
		found = bpf_map_lookup_elem(&path_ids, &key);
		if (found)
			return *found;
		count(JMT_CNT_PATHS_FULL);
		return JMT_PATH_TRUNCATED;
	}
	return path;
}

static __always_inline __u32 path_of(__u32 parent, __u32 id)
{
	__u32 slot_idx = (parent * 0x9E3779B1u ^ id * 0x85EBCA77u) >> 20;
	struct jmt_path_cache_slot *slot;
	__u32 path;

	if (parent == JMT_PATH_TRUNCATED)
		return JMT_PATH_TRUNCATED;
	slot_idx &= path_cache_mask;
	slot = bpf_map_lookup_elem(&path_cache, &slot_idx);
	if (slot) {
		__u32 seq = cache_read_begin(&slot->seq);
		int hit = slot->path && slot->key.parent == parent && slot->key.id == id;

		path = slot->path;
		if (hit && cache_read_valid(&slot->seq, seq))
			return path;
	}
	path = path_of_slow(parent, id);
	if (slot && path != JMT_PATH_TRUNCATED) {
		cache_write_begin(&slot->seq);
		slot->key.parent = parent;
		slot->key.id = id;
		slot->path = path;
		cache_write_end(&slot->seq);
	}
	return path;
}

#endif /* JMT_PATHS_BPF_H */
