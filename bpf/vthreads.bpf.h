/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Virtual threads (JDK 21+): uprobes on HotSpot's freeze (a virtual thread
 * unmounts) and thaw (it mounts) move its traced frames off its carrier's
 * stack and back, parked under its id meanwhile (vthread_frames.h says which
 * frames and how their clocks move). Each hook reads at its entry which
 * virtual thread and which continuation entry, and acts at its return, once
 * HotSpot says the frames moved (vthread_frames.h moves them; this file is
 * its adapter: the hooks' parked frames are two maps).
 */
#ifndef JMT_VTHREADS_BPF_H
#define JMT_VTHREADS_BPF_H

#include "globals.bpf.h"
#include "sink.bpf.h"
#include "vthread_frames.h"

#if !JMT_HAS_BPF_LOOP
/* compat.bpf.h's search of jmt_vt_split and drop of jmt_vt_unmount: their
 * loops on the running thread's state (the one their caller holds); the
 * search's result is 0 when it has none. */
__noinline int compat_vt_split(__u64 entry)
{
	struct jmt_thread *t = jmt_current_task_get(&threads, 0);
	struct jmt_vt_split_ctx sc = {.entry = entry};

	if (!t)
		return 0;
	sc.t = t;
	for (__u32 i = 0; i < JMT_MAX_DEPTH; i++)
		if (jmt_vt_split_one(i, &sc))
			break;
	return sc.n;
}

/* One step of the drop (jmt_vt_drop_one): a global function of its own, so
 * that its body is verified once, not once per step. 1: nothing left. */
__noinline int compat_vt_drop_one(__u64 base, __u64 vthread)
{
	struct jmt_parked_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .vtid = vthread};
	struct jmt_sink sink = {.cpu = this_cpu(), .key = &key};
	struct jmt_vt_move_ctx mc = {.sink = &sink, .vthread = vthread, .foreign = foreign};
	struct jmt_thread *t = jmt_current_task_get(&threads, 0);

	if (!t || !sink.cpu || base > JMT_MAX_DEPTH)
		return 1;
	mc.t = t;
	mc.base = base;
	return jmt_vt_drop_one(0, &mc) ? 1 : 0;
}

__noinline int compat_vt_drop(__u64 base, __u64 vthread)
{
	for (__u32 i = 0; i < JMT_MAX_DEPTH; i++)
		if (compat_vt_drop_one(base, vthread))
			break;
	return 0;
}
#endif

/* freeze_ok: freeze<Config> and freeze_preempt's result when the frames left the carrier. */
#define JMT_FREEZE_OK 0
/* Continuation::thaw_top: the thaw kind of a mount (the others are return barriers). */
#define JMT_THAW_TOP 0

/* Each traced JVM's layout (index as in target_tgids), written by userspace
 * once the JVM has initialised it; read here at every hook. */
struct jmt_vt_layout vt_layouts[JMT_MAX_TARGETS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_PARKED_FRAMES);
	__type(key, struct jmt_parked_key);
	__type(value, struct jmt_frame);
} parked_frames SEC(".maps");

/* Key idx JMT_PARKED_HEADER of a virtual thread: its struct jmt_parked. */
#define JMT_PARKED_HEADER 0xffffffffu

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_PARKED_VTHREADS);
	__type(key, struct jmt_parked_key);
	__type(value, struct jmt_parked);
} parked_vthreads SEC(".maps");

/* The running JVM's layout, 0 when not traced or not read yet. */
static __always_inline const struct jmt_vt_layout *vt_layout(void)
{
	int i = target_index(bpf_get_current_pid_tgid() >> 32);

	if (i < 0 || i >= JMT_MAX_TARGETS)
		return 0;
	return vt_layouts[i].cont_entry_offset ? &vt_layouts[i] : 0;
}

/* vthread_frames.h's hooks: a virtual thread's parked frames, under sink->key. */
static __always_inline int jmt_park_frame(struct jmt_sink *sink, __u32 idx, const struct jmt_frame *f)
{
	sink->key->idx = idx;
	return bpf_map_update_elem(&parked_frames, sink->key, f, BPF_ANY) ? 1 : 0;
}

static __always_inline int jmt_park_header(struct jmt_sink *sink, const struct jmt_parked *p)
{
	sink->key->idx = JMT_PARKED_HEADER;
	return bpf_map_update_elem(&parked_vthreads, sink->key, p, BPF_ANY) ? 1 : 0;
}

static __always_inline struct jmt_frame *jmt_parked_frame(struct jmt_sink *sink, __u32 idx)
{
	sink->key->idx = idx;
	return bpf_map_lookup_elem(&parked_frames, sink->key);
}

static __always_inline void jmt_forget_frame(struct jmt_sink *sink, __u32 idx)
{
	sink->key->idx = idx;
	bpf_map_delete_elem(&parked_frames, sink->key);
}

/* The mounted virtual thread's id and its continuation entry, read through
 * JavaThread jt: -1 when a read fails or the entry lies outside the carrier's
 * stack (a layout the JVM does not have: counted, nothing moves). */
static __always_inline int vt_identity(const struct jmt_vt_layout *l, __u64 jt, __u64 *vtid, __u64 *entry)
{
	__u64 handle = 0, oop = 0, base = 0, size = 0;

	if (bpf_probe_read_user(&handle, sizeof(handle), (void *)(jt + l->vthread_offset)) || !handle)
		return -1;
	if (bpf_probe_read_user(&oop, sizeof(oop), (void *)handle) || !oop)
		return -1;
	oop = jmt_zpointer_address(oop, l->zpointer_remapped_shift);
	if (!oop || bpf_probe_read_user(vtid, sizeof(*vtid), (void *)(oop + l->tid_offset)) || !*vtid)
		return -1;
	if (bpf_probe_read_user(entry, sizeof(*entry), (void *)(jt + l->cont_entry_offset)) || !*entry)
		return -1;
	if (bpf_probe_read_user(&base, sizeof(base), (void *)(jt + l->stack_base_offset)) ||
	    bpf_probe_read_user(&size, sizeof(size), (void *)(jt + l->stack_size_offset)) || *entry >= base ||
	    *entry < base - size) {
		count(JMT_CNT_VT_LAYOUT_MISMATCH);
		return -1;
	}
	return 0;
}

/* A hook's entry: which virtual thread, kept in t until the hook returns. */
static __always_inline void vt_begin(struct pt_regs *ctx, struct jmt_thread *t)
{
	const struct jmt_vt_layout *l = vt_layout();
	__u64 vtid = 0, entry = 0;

	t->vt_pending_tid = 0;
	if (!l) {
		count(JMT_CNT_VT_UNFOLLOWED);
		return;
	}
	if (vt_identity(l, PT_REGS_PARM1(ctx), &vtid, &entry))
		return;
	t->vt_pending_tid = vtid;
	t->vt_pending_entry = entry;
}

/* A hook's return: the carrier's state, with the virtual thread and the
 * continuation entry its entry read (taken: the next hook starts afresh);
 * 0 when none is pending. */
static __always_inline struct jmt_thread *vt_take_pending(__u64 *vtid, __u64 *entry)
{
	struct jmt_thread *t;

	if (event_jvm() < 0)
		return 0;
	t = thread_state(0);
	if (!t || !t->vt_pending_tid)
		return 0;
	*vtid = t->vt_pending_tid;
	*entry = t->vt_pending_entry;
	t->vt_pending_tid = 0;
	return t;
}

/* freeze<Config>(JavaThread*, intptr_t* sp) and Config::freeze_preempt: only a
 * carrier with traced frames open has anything to park. */
SEC("uprobe")
int handle_freeze(struct pt_regs *ctx)
{
	struct jmt_thread *t;

	if (event_jvm() < 0)
		return 0;
	t = thread_state(0);
	if (t && t->depth)
		vt_begin(ctx, t);
	return 0;
}

SEC("uretprobe")
int handle_freeze_ret(struct pt_regs *ctx)
{
	struct jmt_parked_key key = {};
	struct jmt_sink sink = {.cpu = this_cpu(), .key = &key};
	struct jmt_thread *t;
	__u64 entry = 0;

	t = vt_take_pending(&key.vtid, &entry);
	if (!t || !sink.cpu)
		return 0;
	if ((int)PT_REGS_RC(ctx) != JMT_FREEZE_OK) {
		/* pinned: the virtual thread stays on this carrier, which blocks next */
		t->pin_reason = (__u32)PT_REGS_RC(ctx);
		t->pin_counted = 0;
		t->pin_block_ns = 0;
		return 0;
	}
	t->pin_reason = 0;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	if (jmt_vt_unmount(t, &sink, entry, key.vtid, foreign) > 0)
		bump(sink.cpu, JMT_CNT_VT_UNMOUNTS);
	return 0;
}

/* thaw<Config>(JavaThread*, int kind): a mount (kind thaw_top) of a virtual
 * thread with parked frames. */
SEC("uprobe")
int handle_thaw(struct pt_regs *ctx)
{
	const struct jmt_vt_layout *l;
	struct jmt_parked_key key = {};
	struct jmt_thread *t;
	__u64 entry = 0;

	if (event_jvm() < 0 || (int)PT_REGS_PARM2(ctx) != JMT_THAW_TOP)
		return 0;
	t = thread_state(0);
	if (t)
		t->pin_reason = 0; /* another virtual thread mounts: a pinned one has gone on */
	l = vt_layout();
	if (!l) {
		count(JMT_CNT_VT_UNFOLLOWED);
		return 0;
	}
	if (vt_identity(l, PT_REGS_PARM1(ctx), &key.vtid, &entry))
		return 0;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.idx = JMT_PARKED_HEADER;
	if (!bpf_map_lookup_elem(&parked_vthreads, &key))
		return 0;
	if (!t)
		t = thread_state(1);
	if (!t)
		return 0;
	t->vt_pending_tid = key.vtid;
	t->vt_pending_entry = entry;
	return 0;
}

/* The thaw's result is the top thawed frame's sp, or the continuation entry
 * itself when nothing was thawed (JDK 24+: a virtual thread blocked on a
 * monitor that is still taken goes back to wait, its frames stay parked). */
SEC("uretprobe")
int handle_thaw_ret(struct pt_regs *ctx)
{
	struct jmt_parked_key key = {};
	struct jmt_sink sink = {.cpu = this_cpu(), .key = &key};
	struct jmt_parked *parked;
	struct jmt_thread *t;
	__u64 entry = 0;

	t = vt_take_pending(&key.vtid, &entry);
	if (!t || !sink.cpu || PT_REGS_RC(ctx) == entry)
		return 0;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.idx = JMT_PARKED_HEADER;
	parked = bpf_map_lookup_elem(&parked_vthreads, &key);
	if (!parked)
		return 0;
	jmt_vt_mount(t, &sink, parked, foreign);
	key.idx = JMT_PARKED_HEADER;
	bpf_map_delete_elem(&parked_vthreads, &key);
	bump(sink.cpu, JMT_CNT_VT_MOUNTS);
	return 0;
}

#endif /* JMT_VTHREADS_BPF_H */
