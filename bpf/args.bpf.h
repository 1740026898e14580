/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probes' arguments: USDT arguments read straight from pt_regs registers
 * (fast_args) or through libbpf's bpf_usdt_arg, packed into a method key.
 */
#ifndef JMT_ARGS_BPF_H
#define JMT_ARGS_BPF_H

#include "globals.bpf.h"
#include "helpers.bpf.h"
#include "counters.bpf.h"

/* One load at a constant pt_regs offset. Inline asm keeps clang from merging
 * the cases into a computed offset, which the verifier rejects for ctx. */
#define JMT_CTX_LOAD(ctx, field)                                                        \
	({                                                                              \
		__u64 __v;                                                              \
		asm volatile("%[v] = *(u64 *)(%[c] + %[o])"                             \
			     : [v] "=r"(__v)                                            \
			     : [c] "r"(ctx), [o] "i"(offsetof(struct pt_regs, field))); \
		__v;                                                                    \
	})

/* reg is rodata: the verifier prunes every case but one at load time. */
#if defined(__TARGET_ARCH_x86)
static __always_inline __u64 reg_value(struct pt_regs *ctx, __u8 reg)
{
	switch (reg) {
	case JMT_REG_AX: return JMT_CTX_LOAD(ctx, ax);
	case JMT_REG_BX: return JMT_CTX_LOAD(ctx, bx);
	case JMT_REG_CX: return JMT_CTX_LOAD(ctx, cx);
	case JMT_REG_DX: return JMT_CTX_LOAD(ctx, dx);
	case JMT_REG_SI: return JMT_CTX_LOAD(ctx, si);
	case JMT_REG_DI: return JMT_CTX_LOAD(ctx, di);
	case JMT_REG_BP: return JMT_CTX_LOAD(ctx, bp);
	case JMT_REG_SP: return JMT_CTX_LOAD(ctx, sp);
	case JMT_REG_R8: return JMT_CTX_LOAD(ctx, r8);
	case JMT_REG_R9: return JMT_CTX_LOAD(ctx, r9);
	case JMT_REG_R10: return JMT_CTX_LOAD(ctx, r10);
	case JMT_REG_R11: return JMT_CTX_LOAD(ctx, r11);
	case JMT_REG_R12: return JMT_CTX_LOAD(ctx, r12);
	case JMT_REG_R13: return JMT_CTX_LOAD(ctx, r13);
	case JMT_REG_R14: return JMT_CTX_LOAD(ctx, r14);
	default: return JMT_CTX_LOAD(ctx, r15);
	}
}

/* The frame pointer of the probe's function. */
#define JMT_CTX_FP(ctx) JMT_CTX_LOAD(ctx, bp)
#elif defined(__TARGET_ARCH_arm64)
#define JMT_ARM64_X(n)           \
	case JMT_REG_ARM64_X(n): \
		return JMT_CTX_LOAD(ctx, regs[n])

static __always_inline __u64 reg_value(struct pt_regs *ctx, __u8 reg)
{
	switch (reg) {
		JMT_ARM64_X(0);
		JMT_ARM64_X(1);
		JMT_ARM64_X(2);
		JMT_ARM64_X(3);
		JMT_ARM64_X(4);
		JMT_ARM64_X(5);
		JMT_ARM64_X(6);
		JMT_ARM64_X(7);
		JMT_ARM64_X(8);
		JMT_ARM64_X(9);
		JMT_ARM64_X(10);
		JMT_ARM64_X(11);
		JMT_ARM64_X(12);
		JMT_ARM64_X(13);
		JMT_ARM64_X(14);
		JMT_ARM64_X(15);
		JMT_ARM64_X(16);
		JMT_ARM64_X(17);
		JMT_ARM64_X(18);
		JMT_ARM64_X(19);
		JMT_ARM64_X(20);
		JMT_ARM64_X(21);
		JMT_ARM64_X(22);
		JMT_ARM64_X(23);
		JMT_ARM64_X(24);
		JMT_ARM64_X(25);
		JMT_ARM64_X(26);
		JMT_ARM64_X(27);
		JMT_ARM64_X(28);
		JMT_ARM64_X(29);
		JMT_ARM64_X(30);
	default: return JMT_CTX_LOAD(ctx, sp);
	}
}

/* The frame pointer of the probe's function (x29: its frame record, the
 * caller's x29 then the return address x30). */
#define JMT_CTX_FP(ctx) JMT_CTX_LOAD(ctx, regs[29])
#else
#error "jmethodtime's programs read the registers of x86 and arm64 (__TARGET_ARCH_x86 or __TARGET_ARCH_arm64)"
#endif

/* USDT argument i through libbpf's generic reader (no fast_args). */
static __always_inline int usdt_arg(struct pt_regs *ctx, int i, __u64 *out)
{
	long v = 0;
	int err;

	err = bpf_usdt_arg(ctx, i, &v);
	*out = v;
	return err;
}

/* A name packed in one word: its address (user space, below 2^48) and its
 * length in bytes (16 bits) above it. */
#define JMT_LEN_SHIFT 48
#define JMT_ADDR_MASK ((1ULL << JMT_LEN_SHIFT) - 1)
#define JMT_LEN_MASK 0xffffULL

static __always_inline __u64 jmt_pack_name(__u64 addr, __u64 len)
{
	return (addr & JMT_ADDR_MASK) | ((len & JMT_LEN_MASK) << JMT_LEN_SHIFT);
}

/* Reads (class, method, signature) as packed address|length words; the
 * caller sets jvm. */
static __always_inline int read_key(struct pt_regs *ctx, struct jmt_method_key *k)
{
	__u64 cp, cl, mp, ml, sp, sl;

	if (fast_args) {
		cp = reg_value(ctx, arg_reg[1]);
		cl = reg_value(ctx, arg_reg[2]);
		mp = reg_value(ctx, arg_reg[3]);
		ml = reg_value(ctx, arg_reg[4]);
		sp = reg_value(ctx, arg_reg[5]);
		sl = reg_value(ctx, arg_reg[6]);
	} else if (usdt_arg(ctx, 1, &cp) || usdt_arg(ctx, 2, &cl) || usdt_arg(ctx, 3, &mp) || usdt_arg(ctx, 4, &ml) ||
		   usdt_arg(ctx, 5, &sp) || usdt_arg(ctx, 6, &sl)) {
		return -1;
	}
	k->klass = jmt_pack_name(cp, cl);
	k->method = jmt_pack_name(mp, ml);
	k->sig = jmt_pack_name(sp, sl);
	return 0;
}

static __always_inline __u32 key_len(__u64 word)
{
	return word >> JMT_LEN_SHIFT;
}
static __always_inline const void *key_addr(__u64 word)
{
	return (const void *)(word & JMT_ADDR_MASK);
}

#endif /* JMT_ARGS_BPF_H */
