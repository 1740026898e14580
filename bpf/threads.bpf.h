/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread state (task storage) and its on-CPU clock: created at a
 * thread's first traced event, kept by the sched_switch program, freed by
 * the sched_process_exit one. --per-thread: the threads' names.
 */
#ifndef JMT_THREADS_BPF_H
#define JMT_THREADS_BPF_H

#include "globals.bpf.h"
#include "counters.bpf.h"
#include "gaps.h"
#include "frames.h"

/* task_struct.__state of a runnable task (the kernel's TASK_RUNNING, a macro BTF does not carry). */
#define JMT_TASK_RUNNING 0

struct {
	__uint(type, JMT_TASK_MAP_TYPE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	JMT_TASK_MAP_ENTRIES(JMT_COMPAT_THREADS)
	__type(key, JMT_TASK_KEY);
	__type(value, struct jmt_thread);
} threads SEC(".maps");

/* Every target thread, traced or not: the ktime (ns) it became runnable
 * without a CPU (preempted, yielding, or woken), 0 while it runs or blocks.
 * Freed with the task. */
struct {
	__uint(type, JMT_TASK_MAP_TYPE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	JMT_TASK_MAP_ENTRIES(JMT_COMPAT_THREADS)
	__type(key, JMT_TASK_KEY);
	__type(value, __u64);
} runnable_since SEC(".maps");

/* --per-thread: tid -> comm when the thread's state was created (its name
 * after the thread has exited; userspace prefers the live name). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_THREAD_NAMES);
	__type(key, __u32);
	__type(value, char[JMT_COMM_LEN]);
} thread_names SEC(".maps");

/* --per-thread: the running thread's comm under its tid, once per thread state. */
static __noinline int record_thread_name(void)
{
	char comm[JMT_COMM_LEN] = {};
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (bpf_get_current_comm(comm, sizeof(comm)))
		return -1;
	return bpf_map_update_elem(&thread_names, &tid, comm, BPF_ANY);
}

static __always_inline struct jmt_thread *thread_state(int create)
{
	struct jmt_thread *t;

	t = jmt_current_task_get(&threads, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!t) {
		if (create)
			count(JMT_CNT_THREAD_STATE_FAIL);
		return 0;
	}
	if (!t->initialized) {
		count(JMT_CNT_THREADS_TRACED);
		if (per_thread)
			record_thread_name();
		/* First seen at a probe: the thread is on a CPU right now. */
		t->switch_in_ns = bpf_ktime_get_ns();
		t->cpu_total_ns = 0;
		t->runq_total_ns = 0;
		t->events_total = 0;
		t->traced_total = 0;
		t->depth = 0;
		t->vt_pending_tid = 0;
		t->pin_reason = 0;
		t->pin_block_ns = 0;
		t->on_cpu = 1;
		t->tid = (__u32)bpf_get_current_pid_tgid();
		t->gap_prev_ns = 0;
		t->initialized = 1;
	}
	return t;
}

/* The gap since the thread's last clocked event when nothing came between:
 * no other probe event (a filtered-out one reads no clock) and no switch. */
static __always_inline void record_gap(struct jmt_thread *t, struct jmt_cpu *cpu, const struct jmt_clock *c)
{
	if (t->gap_prev_ns && c->events == t->gap_prev_events + 1 && t->gap_prev_switch_ns == t->switch_in_ns) {
		__u32 b = jmt_gap_bucket(c->wall_ns - t->gap_prev_ns);

		if (b < JMT_GAP_BUCKETS)
			cpu->gap_hist[b] += 1;
	}
	t->gap_prev_ns = c->wall_ns;
	t->gap_prev_events = c->events;
	t->gap_prev_switch_ns = t->switch_in_ns;
}

/* The running thread's clocks now. A thread at a probe is on a CPU: if its
 * switch-in went unseen, its on-CPU clock restarts now (losing at most that
 * slice) instead of counting from the switch-in before its last switch-out.
 * Not a probe event's (a hook's): the gap histogram is left alone. */
static __always_inline void thread_clock_now(struct jmt_thread *t, struct jmt_cpu *cpu, struct jmt_clock *c)
{
	__u64 switch_in_ns = 0, cpu_total_ns = 0, runq_total_ns = 0;

	/* A preemptible kernel (preempt=full/lazy/RT) can switch this thread out
	 * and in between two reads: the thread's on-CPU fields are read before
	 * the clock and taken only when no switch came between. */
	for (int i = 0; i < 3; i++) {
		switch_in_ns = *(volatile __u64 *)&t->switch_in_ns;
		cpu_total_ns = *(volatile __u64 *)&t->cpu_total_ns;
		runq_total_ns = *(volatile __u64 *)&t->runq_total_ns;
		asm volatile("" ::: "memory");
		c->wall_ns = bpf_ktime_get_ns();
		asm volatile("" ::: "memory");
		if (*(volatile __u64 *)&t->switch_in_ns == switch_in_ns)
			break;
	}
	if (!t->on_cpu) {
		t->on_cpu = 1;
		t->switch_in_ns = c->wall_ns;
		switch_in_ns = c->wall_ns;
		cpu_total_ns = t->cpu_total_ns;
		bump(cpu, JMT_CNT_SWITCH_UNSEEN);
	}
	c->cpu_ns = cpu_total_ns + (c->wall_ns > switch_in_ns ? c->wall_ns - switch_in_ns : 0);
	c->runq_ns = runq_total_ns;
	c->events = t->events_total + cpu->slice_events;
	c->traced = t->traced_total;
}

/* thread_clock_now at a probe event, whose gap since the last one it records. */
static __always_inline void thread_clock(struct jmt_thread *t, struct jmt_cpu *cpu, struct jmt_clock *c)
{
	thread_clock_now(t, cpu, c);
	record_gap(t, cpu, c);
}

/* The carrier of t, blocked while its virtual thread was pinned, runs again
 * at now: the block (to its switch-in: run-queue wait included, the carrier
 * was not free for other virtual threads) goes into its open frames, and
 * counts once per failed freeze. */
static __always_inline void pinned_block_ends(struct jmt_thread *t, struct jmt_cpu *cpu, __u64 now)
{
	__u64 ns = now > t->pin_block_ns ? now - t->pin_block_ns : 0;
	__u32 first = !t->pin_counted;

	jmt_pinned_add(t, ns, first, t->pin_reason == JMT_FREEZE_PINNED_MONITOR);
	bump_by(cpu, JMT_CNT_PINNED_NS, ns);
	if (first) {
		switch (t->pin_reason) {
		case JMT_FREEZE_PINNED_CS: bump(cpu, JMT_CNT_PINNED_CRITICAL); break;
		case JMT_FREEZE_PINNED_NATIVE: bump(cpu, JMT_CNT_PINNED_NATIVE); break;
		case JMT_FREEZE_PINNED_MONITOR: bump(cpu, JMT_CNT_PINNED_MONITOR); break;
		default: bump(cpu, JMT_CNT_PINNED_OTHER);
		}
	}
	t->pin_counted = 1;
	t->pin_block_ns = 0;
}

/* On-CPU time per target thread: accumulated at switch-out, restarted at
 * switch-in. Run-queue wait: from a switch-out that leaves the thread
 * runnable (preempted, or yielding in TASK_RUNNING), or from its wakeup
 * (handle_wakeup), to its next switch-in. A thread switched out in any other
 * state is blocked until its wakeup. */
SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	int prev_target = is_target(prev->tgid), next_target = is_target(next->tgid);
	struct jmt_thread *t;
	struct jmt_cpu *cpu;
	__u64 now;

	if (!prev_target && !next_target)
		return 0;
	now = bpf_ktime_get_ns();
	cpu = this_cpu();
	if (!cpu)
		return 0;
	if (prev_target) {
		__u64 *since = jmt_task_get(&runnable_since, prev, JMT_SINCE_CREATE(prev));
		int runnable = preempt || jmt_task_state(prev) == JMT_TASK_RUNNING;

		if (since)
			*since = runnable ? now : 0;
		t = jmt_task_get(&threads, prev, 0);
		if (t && t->initialized) {
			/* A pinned virtual thread's carrier blocks (not runnable). */
			if (t->pin_reason && t->depth && !runnable && !t->pin_block_ns)
				t->pin_block_ns = now;
			/* Off a CPU without a seen switch-in: its slice's start is unknown. */
			if (t->on_cpu)
				t->cpu_total_ns += now - t->switch_in_ns;
			else
				bump(cpu, JMT_CNT_SWITCH_UNSEEN);
			t->on_cpu = 0;
			t->events_total += cpu->slice_events;
		}
	}
	cpu->slice_events = 0;
	if (next_target) {
		__u64 *since = jmt_task_get(&runnable_since, next, 0);
		__u64 waited = 0;

		if (since && *since) {
			waited = now > *since ? now - *since : 0;
			*since = 0;
			bump_by(cpu, JMT_CNT_RUNQ_NS, waited);
		}
		t = jmt_task_get(&threads, next, 0);
		if (t && t->initialized) {
			if (t->on_cpu)
				bump(cpu, JMT_CNT_SWITCH_UNSEEN); /* its switch-out went unseen */
			t->runq_total_ns += waited;
			t->switch_in_ns = now;
			t->on_cpu = 1;
			if (t->pin_block_ns)
				pinned_block_ends(t, cpu, now);
		}
	}
	return 0;
}

/* A blocked target thread put back on a run queue: its wait for a CPU starts.
 * Runs under the run queue's lock, so the thread's switch-in comes after it. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_wakeup, struct task_struct *p)
{
	__u64 *since;

	if (!is_target(p->tgid))
		return 0;
	since = jmt_task_get(&runnable_since, p, JMT_SINCE_CREATE(p));
	if (since && !*since)
		*since = bpf_ktime_get_ns();
	return 0;
}

/* Frees a target thread's state when it exits, so long traces of short-lived
 * threads keep memory bounded (live states = traced - ended). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task)
{
	if (!is_target(task->tgid))
		return 0;
	if (jmt_task_delete(&threads, task) == 0)
		count(JMT_CNT_THREADS_ENDED);
	JMT_SINCE_DELETE(task);
	return 0;
}

#endif /* JMT_THREADS_BPF_H */
