/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every difference between the kernels the programs run on, in one place (as
 * libbpf-tools' core_fixes.bpf.h). jmethodtime.bpf.c is built twice: as
 * jmethodtime.bpf.o, for kernels with bpf_loop (5.17 and newer), and with
 * JMT_COMPAT_5_10 as jmethodtime_compat.bpf.o, which the loader picks on a
 * kernel without bpf_loop (Debian 11's 5.10). Both have the same programs,
 * maps and globals (one skeleton opens either); the compat object has a few
 * maps more, its own. Nothing here costs the main object an instruction.
 *
 * What 5.10 lacks, and the compat object's fallback:
 * - bpf_loop (5.17): a thread's stack is walked by a bounded loop (checked by
 *   the verifier once per iteration; the searches are global functions); the
 *   --class/--method globs step JMT_COMPAT_GLOB_BURST steps at a time in a
 *   global function verified once (methods.bpf.h), JMT_GLOB_STEPS in all;
 *   JMT_TEST_TRAP_NS spins at most JMT_COMPAT_SPINS clock reads.
 * - bpf_for_each_map_elem (5.13): a class unload does not walk the method
 *   table; its entries are dropped at their next lookup instead
 *   (jmt_method_stale), so a method of a new class at the unloaded one's
 *   address never takes its id.
 * - task storage in tracing programs, bpf_get_current_task_btf (5.11):
 *   threads and runnable_since are hash maps by thread id, their entries
 *   deleted when the thread exits.
 * - task_struct::__state (5.14): state before it (CO-RE flavour).
 * - atomic compare-and-swap, fetch-and-add, or (5.12): ids are claimed by an
 *   insert with BPF_NOEXIST in compat_id_claims (one CPU wins it), the counter moved
 *   on by a plain atomic add; an add is never made an or (jmt_atomic_add).
 * - a global function's pointer arguments (5.12): method_info_slow is static.
 * - 512 bytes of stack for a program and the calls below it, each rounded up
 *   to 32: a closed frame's record (208 bytes) is in a per-CPU map, not on the
 *   stack (sink.bpf.h, compat_closed), and the return program (288 bytes) makes
 *   no verdict (a method first met at its return, entered before the attach,
 *   is counted in returns_unjudged).
 * - A loop's body is verified once per step: a dropped frame's totals are added
 *   by a global function (compat_account_dropped), not inline in the drop loops.
 * - The virtual-thread hooks' loops (bpf_loop): the unmount's search and its
 *   drop are global functions, the drop's step one of its own (vthreads.bpf.h),
 *   so the verifier checks each body once, not once per frame of 256.
 */
#ifndef JMT_COMPAT_BPF_H
#define JMT_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "frames.h"

#ifndef JMT_COMPAT_5_10

/* Every feature the programs use is there (5.17 and newer). */
#define JMT_HAS_BPF_LOOP 1
#define JMT_HAS_FOR_EACH_MAP_ELEM 1
#define jmt_loop(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
/* method_info_slow: a global function, verified once. */
#define JMT_SLOW_LINKAGE
#define JMT_SLOW_GLOBAL 1
/* The return program makes a first-seen method's verdict and table entry. */
#define JMT_VERDICT_AT_RETURN 1
/* An atomic add whose result is not used. */
#define jmt_atomic_add(ptr, v) __sync_fetch_and_add((ptr), (v))
#define JMT_TASK_MAP_TYPE BPF_MAP_TYPE_TASK_STORAGE
#define JMT_TASK_MAP_ENTRIES(n)
#define JMT_TASK_KEY int

/* The running thread's entry of task map map (threads): flags as bpf_task_storage_get's. */
#define jmt_current_task_get(map, flags) bpf_task_storage_get((map), bpf_get_current_task_btf(), 0, (flags))
/* task's entry of a task map (a tp_btf program's task_struct). */
#define jmt_task_get(map, task, flags) bpf_task_storage_get((map), (task), 0, (flags))
#define jmt_task_delete(map, task) bpf_task_storage_delete((map), (task))
/* runnable_since's flags at a switch-out or wakeup of task, and its end at
 * task's exit: task storage goes with the task. */
#define JMT_SINCE_CREATE(task) BPF_LOCAL_STORAGE_GET_F_CREATE
#define JMT_SINCE_DELETE(task)

static __always_inline long jmt_task_state(struct task_struct *task)
{
	return task->__state;
}

#else /* JMT_COMPAT_5_10 */

#define JMT_HAS_BPF_LOOP 0
#define JMT_HAS_FOR_EACH_MAP_ELEM 0
/* A bounded loop: the callback is a plain function here, inlined or called.
 * The searches (their result is a depth) are global functions of the running
 * thread's state, verified once, their results unknown to the caller's
 * verification: otherwise each depth a search can end at is a state of its
 * own, and the loops after it are verified once per depth. */
#define jmt_loop(n, fn, ctx) jmt_loop_##fn(n, fn, ctx)
#define jmt_bounded_loop(n, fn, ctx)                           \
	do {                                                   \
		for (__u32 jmt_i_ = 0; jmt_i_ < (n); jmt_i_++) \
			if (fn(jmt_i_, (ctx)))                 \
				break;                         \
	} while (0)
#define jmt_loop_jmt_drop_one jmt_bounded_loop
/* The parking counts the frames it could not park from a 0 the verifier
 * cannot see as 0 (jmt_opaque_zero): from a known 0, each count of failures
 * would be a state of its own at each step. */
#define jmt_loop_jmt_vt_park_one(steps, fn, ctx)   \
	do {                                       \
		(ctx)->failed = jmt_opaque_zero(); \
		jmt_bounded_loop(steps, fn, ctx);  \
	} while (0)
#define jmt_loop_jmt_vt_drop_one(steps, fn, ctx) compat_vt_drop((ctx)->base, (ctx)->vthread)
#define jmt_loop_jmt_vt_unpark_one jmt_bounded_loop
#define jmt_loop_jmt_find_one(steps, fn, ctx) ((ctx)->match = compat_find((ctx)->id))
#define jmt_loop_jmt_vt_split_one(steps, fn, ctx) ((ctx)->n = compat_vt_split((ctx)->entry))
/* 0, to the verifier 0 or 1: ktime (ns since boot) is below 2^63. */
static __always_inline __u32 jmt_opaque_zero(void)
{
	return (__u32)(bpf_ktime_get_ns() >> 63);
}

/* jmt_find and jmt_vt_split on the running thread's state (sink.bpf.h,
 * vthreads.bpf.h). */
__noinline int compat_find(__u64 id);
__noinline int compat_vt_split(__u64 entry);
/* jmt_vt_unmount's drop of a virtual thread's frames above base, on the
 * running thread (vthreads.bpf.h): its loop's body (each frame's totals) is
 * verified once, not once per way of reaching it. */
__noinline int compat_vt_drop(__u64 base, __u64 vthread);
#define JMT_SLOW_LINKAGE static
#define JMT_SLOW_GLOBAL 0
/* The return program only looks a method up: a first sight at a return is
 * counted (returns_unjudged) and ends there, so the return program calls
 * nothing as deep as method_info_slow and method_record (128 bytes). */
#define JMT_VERDICT_AT_RETURN 0
/* 5.10 has the atomic add alone (BPF_XADD), not or, and or fetch: the value
 * is hidden from clang, which makes an add of a known 0 an atomic or. */
#define jmt_atomic_add(ptr, v)                       \
	({                                           \
		__typeof__(*(ptr)) jmt_v_ = (v);     \
		asm volatile("" : "+r"(jmt_v_));     \
		__sync_fetch_and_add((ptr), jmt_v_); \
	})
#define JMT_TASK_MAP_TYPE BPF_MAP_TYPE_HASH
/* Threads at once per map; an exited thread's entry is deleted at its exit. */
#define JMT_COMPAT_THREADS 4096
#define JMT_TASK_MAP_ENTRIES(n) __uint(max_entries, (n));
#define JMT_TASK_KEY __u32
/* Glob steps per call of compat_glob_steps, a global function: each step
 * leaves the verifier about 20 branches to follow later, each call one, of
 * at most 8,192 at a time (8 globs x 512 calls, 64 x 20). */
#define JMT_COMPAT_GLOB_BURST 64
/* JMT_TEST_TRAP_NS: at most this many clock reads. */
#define JMT_COMPAT_SPINS 1024

/* A zero thread state: a new entry of threads is copied from it (it is too
 * large for the stack). Never written. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jmt_thread);
} compat_zero_thread SEC(".maps");

/* The entry of key tid in map (threads or runnable_since), created zero when
 * flags say so; big: the value is a struct jmt_thread (copied from
 * compat_zero_thread), else a __u64. */
static __always_inline void *jmt_tid_get(void *map, __u32 tid, __u64 flags, const int big)
{
	void *v = bpf_map_lookup_elem(map, &tid);
	const void *zero_value;
	__u64 zero64 = 0;
	__u32 zero = 0;

	if (v || !(flags & BPF_LOCAL_STORAGE_GET_F_CREATE))
		return v;
	zero_value = big ? bpf_map_lookup_elem(&compat_zero_thread, &zero) : &zero64;
	if (!zero_value)
		return 0;
	bpf_map_update_elem(map, &tid, zero_value, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

/* A map's value size, from its definition (__type(value, ...)). */
#define jmt_big_value(map) (sizeof(*(map)->value) > sizeof(__u64))
#define jmt_current_task_get(map, flags) \
	jmt_tid_get((map), (__u32)bpf_get_current_pid_tgid(), (flags), jmt_big_value(map))
#define jmt_task_get(map, task, flags) jmt_tid_get((map), (__u32)(task)->pid, (flags), jmt_big_value(map))
#define jmt_task_delete(map, task)                     \
	({                                             \
		__u32 jmt_tid_ = (task)->pid;          \
		bpf_map_delete_elem((map), &jmt_tid_); \
	})

/* An exiting task (PF_EXITING: after its sched_process_exit) gets no
 * runnable_since entry, which its exit deleted. */
#define JMT_PF_EXITING 0x00000004
#define JMT_SINCE_CREATE(task) ((task)->flags & JMT_PF_EXITING ? 0 : BPF_LOCAL_STORAGE_GET_F_CREATE)
#define JMT_SINCE_DELETE(task) jmt_task_delete(&runnable_since, (task))

/* task_struct::state, named __state from 5.14. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long jmt_task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return task->__state;
	return ((struct task_struct___pre514 *)task)->state;
}

/* Ids claimed: (kind << 32 | id) -> 1. Kinds: enum jmt_id_kind. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_METHODS + JMT_MAX_PATHS + JMT_MAX_THREAD_ROWS + 64);
	__type(key, __u64);
	__type(value, __u8);
} compat_id_claims SEC(".maps");

/* Class unloads: class key -> method_generation after its unload. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_REJECTED_CLASSES * 4);
	__type(key, __u64);
	__type(value, __u64);
} compat_unloaded SEC(".maps");

/* Method table entries made after a class unload: key -> method_generation
 * then (none: made before every unload, generation 0). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_METHOD_KEYS);
	__type(key, struct jmt_method_key);
	__type(value, __u64);
} compat_method_gens SEC(".maps");

/* Whether k's method table entry was made before its class's last unload
 * (generation: method_generation now): then the entry is of the unloaded
 * class, whose names' memory another class may have taken. */
static __always_inline int jmt_method_stale(const struct jmt_method_key *k, __u64 generation)
{
	__u64 *unloaded, *made;

	if (!generation)
		return 0;
	unloaded = bpf_map_lookup_elem(&compat_unloaded, &k->klass);
	if (!unloaded)
		return 0;
	made = bpf_map_lookup_elem(&compat_method_gens, k);
	return (made ? *made : 0) < *unloaded;
}

/* k's method table entry was made at generation (jmt_method_stale). */
static __always_inline void jmt_method_made(const struct jmt_method_key *k, __u64 generation)
{
	if (generation)
		bpf_map_update_elem(&compat_method_gens, k, &generation, BPF_ANY);
}

/* Class klass unloads; generation: method_generation after it. */
static __always_inline void jmt_class_unloaded(__u64 klass, __u64 generation)
{
	bpf_map_update_elem(&compat_unloaded, &klass, &generation, BPF_ANY);
}

#endif /* JMT_COMPAT_5_10 */

/* What next_id hands out (the compat object's claims are per kind). */
enum jmt_id_kind { JMT_ID_METHOD, JMT_ID_PATH, JMT_ID_ROW, JMT_ID_EXAMPLE };

/* Attempts at handing out an id against other CPUs before giving up (each
 * lost race means another CPU got one). */
#define JMT_ID_ATTEMPTS 16

/* The value of a map whose entries only need to be there (compat_id_claims,
 * rejected_classes), from .rodata, not the stack: 5.10 takes at most 512
 * bytes for a program and the calls below it, each rounded up to 32 (the
 * return program, method_info_slow and method_record; jmt_drop_one and
 * row_of_slow). */
static const __u8 jmt_present = 1;

/* The next id after *last, below limit: *last goes up by one, never to limit
 * or past it, so what userspace reads is always an id handed out. 0 when
 * the ids are all out (or the CPUs raced JMT_ID_ATTEMPTS times). */
static __always_inline __u32 next_id(__u32 *last, __u32 limit, __u32 kind)
{
	__u32 cur = *(volatile __u32 *)last;

	for (int i = 0; i < JMT_ID_ATTEMPTS; i++) {
#ifndef JMT_COMPAT_5_10
		__u32 seen;

		if (cur + 1 >= limit)
			return 0;
		seen = __sync_val_compare_and_swap(last, cur, cur + 1);
		if (seen == cur)
			return cur + 1;
		cur = seen;
#else
		/* Ids are claimed in order, each the first unclaimed one from a
		 * start at most the highest claimed + 1: the claimed ids are
		 * always the first ones, and *last, moved on by one per claim,
		 * is the highest (behind it only while a claimer has yet to add). */
		__u64 key = (__u64)kind << 32 | (cur + 1);
		__u32 now;

		if (cur + 1 >= limit)
			return 0;
		if (!bpf_map_update_elem(&compat_id_claims, &key, &jmt_present, BPF_NOEXIST)) {
			__sync_fetch_and_add(last, 1); /* result unused: 5.10's atomic add */
			return cur + 1;
		}
		now = *(volatile __u32 *)last;
		cur = now > cur + 1 ? now : cur + 1;
#endif
	}
	return 0;
}

#endif /* JMT_COMPAT_BPF_H */
