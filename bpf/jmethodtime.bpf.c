// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jmethodtime: per-method call counts, inclusive/exclusive elapsed and on-CPU
 * time from HotSpot's method__entry/method__return USDT probes, aggregated in
 * the kernel. Nothing is sent to userspace per event.
 *
 * This file holds the probes' programs; the parts they
 * use are in headers named for their jobs, each including what it uses:
 * globals.bpf.h (tunables, the traced JVMs), helpers.bpf.h (shared helpers),
 * counters.bpf.h (per-CPU record), args.bpf.h (probe arguments),
 * filters.bpf.h (--package, --class, --method), methods.bpf.h (method table,
 * names), threads.bpf.h (thread state, on-CPU clock, sched programs),
 * totals.bpf.h (per-method, per-path, per-thread totals), paths.bpf.h (call
 * path ids), sink.bpf.h (frames.h's hooks), vthreads.bpf.h (virtual threads'
 * unmounts and mounts). The pure parts the unit tests run: clock.h, frames.h,
 * callstack.h (entry, return), vthread_frames.h (unmount, mount), glob.h, gaps.h.
 */
#include "globals.bpf.h"
#include "args.bpf.h"
#include "methods.bpf.h"
#include "sink.bpf.h"
#include "vthreads.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static long spin_until(__u64 index, void *deadline_ns)
{
	return bpf_ktime_get_ns() >= *(__u64 *)deadline_ns;
}

static __always_inline void test_trap(void)
{
	__u64 deadline_ns;

	if (!test_trap_ns)
		return;
	deadline_ns = bpf_ktime_get_ns() + test_trap_ns;
#if JMT_HAS_BPF_LOOP
	/* Each iteration reads the clock: 1 << 20 of them outlast any test_trap_ns used. */
	bpf_loop(1 << 20, spin_until, &deadline_ns, 0);
#else
	/* compat.bpf.h: at most JMT_COMPAT_SPINS clock reads. */
	for (int i = 0; i < JMT_COMPAT_SPINS; i++)
		if (spin_until(i, &deadline_ns))
			break;
#endif
}

/* Both probes' first steps: counts the event and finds its method's verdict.
 * 1 when the method is traced (*fp and *info set); 0 when the event ends here
 * (unreadable, first sight deferred, or untraced: --foreign's part done). */
static __always_inline int traced_event(struct pt_regs *ctx, struct jmt_cpu *cpu, long jvm, const int is_entry,
					__u32 *fp, struct jmt_method_info *info)
{
	struct jmt_method_key k;

	cpu->slice_events += 1;
	bump(cpu, is_entry ? JMT_CNT_ENTRIES : JMT_CNT_RETURNS);
	if (read_key(ctx, &k)) {
		bump(cpu, JMT_CNT_ARG_FAIL);
		return 0;
	}
	k.jvm = jvm;
	k.pad = 0;
	*fp = jmt_fingerprint(&k);
	/* The verdict first: a rejected method's event needs nothing else
	 * (but its callers' foreign time under --foreign). */
	if (method_info(&k, *fp, info, cpu, is_entry || JMT_VERDICT_AT_RETURN))
		return 0;
	if (!info->traced) {
		struct jmt_thread *t = foreign ? thread_state(0) : 0;
		struct jmt_sink sink = {.cpu = cpu};

		if (t)
			jmt_foreign_event(t, &sink, is_entry);
		return 0;
	}
	return 1;
}

/* The entry probe's body (cpu->running counts it). */
static __always_inline void on_entry(struct pt_regs *ctx, struct jmt_cpu *cpu, long jvm)
{
	struct jmt_sink sink = {.cpu = cpu};
	struct jmt_method_info info;
	struct jmt_thread *t;
	__u64 bp;
	__u32 fp;

	if (!traced_event(ctx, cpu, jvm, 1, &fp, &info))
		return;
	t = thread_state(1);
	if (!t)
		return;
	bump(cpu, JMT_CNT_TRACED_CALLS);
	/* The probe's function keeps a frame pointer: bp + 16 is its caller's sp
	 * (x86), or that sp less the function's constant frame size (arm64, whose
	 * frame record is at the bottom of the frame): the Java frame's, the same
	 * for every event of one compiled frame. */
	bp = JMT_CTX_FP(ctx);
	if (jmt_enter(t, &sink, info.id, fp, bp + 16, bp, foreign))
		bump(cpu, JMT_CNT_DEPTH_OVERFLOW);
}

/* The return probe's body (cpu->running counts it); with_threads is a
 * constant: the program without per-thread rows (handle_return) is compiled
 * exactly as if they did not exist. */
static __always_inline void on_return(struct pt_regs *ctx, struct jmt_cpu *cpu, long jvm, const int with_threads)
{
	struct jmt_sink sink = {.cpu = cpu};
	struct jmt_method_info info;
	struct jmt_thread *t;
	__u32 fp;

	if (!traced_event(ctx, cpu, jvm, 0, &fp, &info))
		return;
	t = thread_state(0);
	if (!t || jmt_leave(t, &sink, info.id, fp, foreign, with_threads))
		bump(cpu, JMT_CNT_UNMATCHED_RETURNS);
}

/* A probe program: the event's body (entry or return, with_threads: constants)
 * counted in this CPU's running programs. */
static __always_inline int probe(struct pt_regs *ctx, const int entry, const int with_threads)
{
	struct jmt_cpu *cpu = this_cpu();
	long jvm = event_jvm();

	test_trap();
	if (!cpu || jvm < 0)
		return 0;
	cpu->running += 1;
	if (entry)
		on_entry(ctx, cpu, jvm);
	else
		on_return(ctx, cpu, jvm, with_threads);
	cpu->running -= 1;
	return 0;
}

SEC("usdt")
int handle_entry(struct pt_regs *ctx)
{
	return probe(ctx, 1, 0);
}

/* hotspot:class__unloaded(name, name length, loader, shared): its arguments
 * from registers where the loader found them plain (a kernel without BPF
 * cookies attaches plain uprobes), else libbpf's generic reader. */
SEC("usdt")
int handle_class_unloaded(struct pt_regs *ctx)
{
	long name = 0, len = 0;

	if (event_jvm() < 0)
		return 0;
	if (fast_unload_args) {
		name = reg_value(ctx, unload_arg_reg[0]);
		len = reg_value(ctx, unload_arg_reg[1]);
	} else if (bpf_usdt_arg(ctx, 0, &name) || bpf_usdt_arg(ctx, 1, &len)) {
		count(JMT_CNT_ARG_FAIL);
		return 0;
	}
	forget_class(jmt_pack_name(name, len));
	return 0;
}

/* The loader keeps one of the two: handle_return, or handle_return_t for --per-thread. */
SEC("usdt")
int handle_return(struct pt_regs *ctx)
{
	return probe(ctx, 0, 0);
}

SEC("usdt")
int handle_return_t(struct pt_regs *ctx)
{
	return probe(ctx, 0, 1);
}
