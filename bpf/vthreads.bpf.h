/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Virtual threads (JDK 21+): uprobes on HotSpot's freeze (a virtual thread
 * unmounts) and thaw (it mounts) move its traced frames off its carrier's
 * stack and back, parked under its id meanwhile (callstack.h says which
 * frames and how their clocks move). Each hook reads at its entry which
 * virtual thread and which continuation entry, and acts at its return, once
 * HotSpot says the frames moved. Part of jmethodtime.bpf.c, which includes it
 * after threads.bpf.h.
 */
#ifndef JMT_VTHREADS_BPF_H
#define JMT_VTHREADS_BPF_H

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
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	for (__u32 i = 0; i < JMT_MAX_TARGETS; i++) {
		if (i >= n_targets)
			break;
		if (target_tgids[i] == tgid)
			return vt_layouts[i].cont_entry_offset ? &vt_layouts[i] : 0;
	}
	return 0;
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
	    bpf_probe_read_user(&size, sizeof(size), (void *)(jt + l->stack_size_offset)) ||
	    *entry >= base || *entry < base - size) {
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

struct vt_park_ctx {
	struct jmt_thread *t;
	struct jmt_clock now;
	struct jmt_parked_key key;
	__u32 base;   /* stored depth below the frames parked */
	__u32 failed; /* frames whose park failed */
};

static long vt_park_one(__u32 i, void *data)
{
	struct vt_park_ctx *pc = (struct vt_park_ctx *)data;
	struct jmt_frame *f;
	__u32 d = pc->base + i;

	if (d >= pc->t->depth || d >= JMT_MAX_DEPTH)
		return 1;
	f = &pc->t->frames[JMT_IDX(d)];
	jmt_vt_park(f, &pc->now, pc->key.vtid);
	pc->key.idx = i;
	if (bpf_map_update_elem(&parked_frames, &pc->key, f, BPF_ANY))
		pc->failed += 1;
	return 0;
}

struct vt_drop_ctx {
	struct jmt_thread *t;
	__u32 base;
	struct jmt_parked_key key;
};

/* Loop step: drops the top frame down to base, and its parked copy (frames
 * of a virtual thread that could not all be parked). */
static long vt_drop_one(__u32 i, void *data)
{
	struct vt_drop_ctx *dc = (struct vt_drop_ctx *)data;
	struct jmt_closed closed = {};

	if (dc->t->depth <= dc->base || dc->t->depth > JMT_MAX_DEPTH)
		return 1;
	dc->key.idx = dc->t->depth - 1 - dc->base;
	bpf_map_delete_elem(&parked_frames, &dc->key);
	jmt_drop_top(dc->t, &closed, foreign);
	jmt_dropped(0, dc->t, &closed);
	count(JMT_CNT_VT_FRAMES_LOST);
	return 0;
}

SEC("uretprobe")
int handle_freeze_ret(struct pt_regs *ctx)
{
	struct vt_park_ctx pc = {};
	struct jmt_parked parked = {};
	struct jmt_cpu *cpu = this_cpu();
	__u64 entry = 0;
	__u32 n, beyond;

	pc.t = vt_take_pending(&pc.key.vtid, &entry);
	if (!pc.t || !cpu)
		return 0;
	if ((int)PT_REGS_RC(ctx) != JMT_FREEZE_OK) {
		/* pinned: the virtual thread stays on this carrier, which blocks next */
		pc.t->pin_reason = (__u32)PT_REGS_RC(ctx);
		pc.t->pin_counted = 0;
		pc.t->pin_block_ns = 0;
		return 0;
	}
	pc.t->pin_reason = 0;
	n = jmt_vt_split(pc.t, entry);
	if (!n)
		return 0;
	beyond = jmt_vt_beyond(pc.t);
	pc.t->depth -= beyond;
	pc.base = pc.t->depth - n;
	pc.key.tgid = bpf_get_current_pid_tgid() >> 32;
	thread_clock_now(pc.t, cpu, &pc.now);
	parked.n = n;
	parked.beyond = beyond;
	if (foreign) {
		parked.foreign_start = pc.t->foreign_start;
		jmt_vt_park_clock(&parked.foreign_start, &pc.now);
	}
	jmt_loop(JMT_MAX_DEPTH, vt_park_one, &pc);
	pc.key.idx = JMT_PARKED_HEADER;
	if (pc.failed || bpf_map_update_elem(&parked_vthreads, &pc.key, &parked, BPF_ANY)) {
		struct vt_drop_ctx dc = { .t = pc.t, .base = pc.base, .key = pc.key };

		bump_by(cpu, JMT_CNT_VT_FRAMES_LOST, beyond);
		jmt_loop(JMT_MAX_DEPTH, vt_drop_one, &dc);
		return 0;
	}
	pc.t->depth = pc.base;
	bump(cpu, JMT_CNT_VT_UNMOUNTS);
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

struct vt_unpark_ctx {
	struct jmt_thread *t;
	struct jmt_clock now;
	struct jmt_parked_key key;
	__u32 n;
};

static long vt_unpark_one(__u32 i, void *data)
{
	struct vt_unpark_ctx *uc = (struct vt_unpark_ctx *)data;
	struct jmt_frame *f;

	if (i >= uc->n)
		return 1;
	uc->key.idx = i;
	f = bpf_map_lookup_elem(&parked_frames, &uc->key);
	if (!f) {
		count(JMT_CNT_VT_FRAMES_LOST);
		return 0;
	}
	jmt_vt_unpark(f, &uc->now);
	if (jmt_vt_push(uc->t, f))
		count(JMT_CNT_DEPTH_OVERFLOW);
	bpf_map_delete_elem(&parked_frames, &uc->key);
	return 0;
}

/* The thaw's result is the top thawed frame's sp, or the continuation entry
 * itself when nothing was thawed (JDK 24+: a virtual thread blocked on a
 * monitor that is still taken goes back to wait, its frames stay parked). */
SEC("uretprobe")
int handle_thaw_ret(struct pt_regs *ctx)
{
	struct vt_unpark_ctx uc = {};
	struct jmt_parked *parked;
	struct jmt_cpu *cpu = this_cpu();
	__u64 entry = 0;

	uc.t = vt_take_pending(&uc.key.vtid, &entry);
	if (!uc.t || !cpu || PT_REGS_RC(ctx) == entry)
		return 0;
	uc.key.tgid = bpf_get_current_pid_tgid() >> 32;
	uc.key.idx = JMT_PARKED_HEADER;
	parked = bpf_map_lookup_elem(&parked_vthreads, &uc.key);
	if (!parked)
		return 0;
	uc.n = parked->n;
	thread_clock_now(uc.t, cpu, &uc.now);
	if (foreign) {
		uc.t->foreign_start = parked->foreign_start;
		jmt_vt_unpark_clock(&uc.t->foreign_start, &uc.now);
	}
	jmt_loop(JMT_MAX_DEPTH, vt_unpark_one, &uc);
	uc.t->depth += parked->beyond;
	uc.key.idx = JMT_PARKED_HEADER; /* the loop left a frame's index there */
	bpf_map_delete_elem(&parked_vthreads, &uc.key);
	bump(cpu, JMT_CNT_VT_MOUNTS);
	return 0;
}

#endif /* JMT_VTHREADS_BPF_H */
