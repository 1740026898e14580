// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jmethodtime: per-method call counts, inclusive/exclusive elapsed and on-CPU
 * time from HotSpot's method__entry/method__return USDT probes, aggregated in
 * the kernel. Nothing is sent to userspace per event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "jmethodtime.h"
#include "callstack.h"
#include "glob.h"
#include "gaps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Tunables, set by the loader between open and load. */
const volatile __u32 target_tgid = 0;
const volatile __u32 n_prefixes = 0;
const volatile struct {
	__u32 len;
	char s[JMT_PREFIX_LEN];
} prefixes[JMT_MAX_PREFIXES] = {};
/* --class and --method globs (JVM form, see glob.h): a method is traced when
 * its class has one of the prefixes, its class name matches one of the class
 * globs and its name one of the method globs; an empty list keeps everything. */
const volatile __u32 n_class_globs = 0;
const volatile __u32 n_method_globs = 0;
/* globs[JMT_GLOB_CLASS][i], i < n_class_globs, and globs[JMT_GLOB_METHOD][i],
 * i < n_method_globs: len bytes of s, len < JMT_GLOB_LEN. */
const volatile struct {
	__u32 len;
	char s[JMT_GLOB_LEN];
} globs[2][JMT_MAX_GLOBS] = {};
/* --per-thread: 1 when traced threads' names are kept (thread_names) and
 * frames dropped on the cold path go to per-thread rows too; the return
 * probe's program is then handle_return_t, which adds every closed frame to
 * its thread's row (thread_stats). */
const volatile __u32 per_thread = 0;
/* Call paths (--folded, --tree, --flamegraph, --pprof): 1 when each traced
 * frame carries its path id and closing it adds to path_stats. */
const volatile __u32 call_paths = 0;
/* --foreign: 1 when untraced methods' events inside a traced frame time the
 * frame's untraced callees (callstack.h), at the cost of a thread-state
 * lookup on every untraced event. */
const volatile __u32 foreign = 0;
/* Id limits: method ids < max_method_ids, path ids < max_path_ids (the
 * sizes the loader gave stats and path_stats, at most JMT_MAX_METHODS and
 * JMT_MAX_PATHS). */
const volatile __u32 max_method_ids = JMT_MAX_METHODS;
const volatile __u32 max_path_ids = JMT_MAX_PATHS;
/* When fast_args is set, USDT argument i (1..6) is read straight from the
 * pt_regs register numbered arg_reg[i] (enum jmt_reg); otherwise through
 * libbpf's generic bpf_usdt_arg(). */
const volatile __u32 fast_args = 0;
const volatile __u8 arg_reg[7] = {};
/* 1 when the kernel may preempt a program midway (preempt=full/lazy/RT):
 * then two events on one CPU can interleave, and the per-CPU method totals
 * take atomic adds; 0 (no preemption in the kernel) allows plain adds. */
const volatile __u32 atomic_totals = 1;
/*
 * Tests only: ns every probe event spins before its work (JMT_TEST_TRAP_NS), so
 * that one host stands in for hosts whose traps cost more (page-table
 * isolation: 5 us and up). Only the tool's programs spin, the calibration's
 * instance too, as a slower trap would. 0 in use: the verifier removes the spin.
 */
const volatile __u64 test_trap_ns = 0;

/* Highest method id handed out so far (ids start at 1). */
__u32 last_method_id = 0;
/* Highest path id handed out so far (ids from JMT_PATH_TRUNCATED + 1 up). */
__u32 last_path_id = JMT_PATH_TRUNCATED;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct jmt_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JMT_MAX_METHOD_KEYS);
	__type(key, struct jmt_method_key);
	__type(value, struct jmt_method_info);
} methods SEC(".maps");

/* Per-CPU direct-mapped cache of the method table, indexed by fingerprint:
 * an array lookup instead of a hash of 24 bytes on most events. Entries of
 * the method table never change once inserted, so the cache is never stale. */
struct jmt_method_cache_slot {
	struct jmt_method_key key;
	struct jmt_method_info info;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_METHOD_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct jmt_method_cache_slot);
} method_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_MAX_METHODS);
	__type(key, __u32);
	__type(value, struct jmt_method_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_METHODS);
	__type(key, __u32);
	__type(value, struct jmt_names);
} names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jmt_names);
} names_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jmt_cpu);
} cpu_state SEC(".maps");

/* --per-thread rows: written only by the thread in the key (see account_thread).
 * The loader shrinks both maps to one entry when per_thread is off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_THREAD_ROWS);
	__type(key, struct jmt_thread_key);
	__type(value, struct jmt_method_stats);
} thread_stats SEC(".maps");

/* --per-thread: tid -> comm when the thread's state was created (its name
 * after the thread has exited; userspace prefers the live name). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_THREAD_NAMES);
	__type(key, __u32);
	__type(value, char[JMT_COMM_LEN]);
} thread_names SEC(".maps");

/* Call paths: (parent path, method) -> path id, and per-path totals of the
 * path's last frame (inclusive = the frame's own time, recursion included).
 * The loader shrinks both to one entry when call_paths is off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, JMT_MAX_PATHS);
	__type(key, struct jmt_path_key);
	__type(value, __u32);
} path_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_MAX_PATHS);
	__type(key, __u32);
	__type(value, struct jmt_method_stats);
} path_stats SEC(".maps");

/* Per-CPU direct-mapped cache of path_ids: an array lookup instead of a hash
 * on most entries. A pair's path id never changes once handed out, so a slot
 * is never stale; truncated pairs are not cached. */
struct jmt_path_cache_slot {
	struct jmt_path_key key;
	__u32 path; /* 0: empty slot */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JMT_PATH_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct jmt_path_cache_slot);
} path_cache SEC(".maps");

/* This CPU's record; never NULL for key 0 of a per-CPU array, checked for the verifier. */
static __always_inline struct jmt_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/* Counters and slice_events are plain per-CPU increments: a program preempted
 * midway (only under preempt=full/lazy/RT) may very rarely lose one, which
 * shifts a diagnostic count or one event's correction, never a total. */
static __always_inline void bump(struct jmt_cpu *cpu, enum jmt_counter c)
{
	if (c < JMT_CNT_NR)
		cpu->counters[c] += 1;
}

static __always_inline void count(enum jmt_counter c)
{
	struct jmt_cpu *cpu = this_cpu();

	if (cpu)
		bump(cpu, c);
}

/* One load at a constant pt_regs offset. Inline asm keeps clang from merging
 * the cases into a computed offset, which the verifier rejects for ctx. */
#define JMT_CTX_LOAD(ctx, field)                                                  \
	({                                                                        \
		__u64 __v;                                                        \
		asm volatile("%[v] = *(u64 *)(%[c] + %[o])"                       \
			     : [v] "=r"(__v)                                      \
			     : [c] "r"(ctx), [o] "i"(offsetof(struct pt_regs, field))); \
		__v;                                                              \
	})

/* reg is rodata: the verifier prunes every case but one at load time. */
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

static __always_inline int usdt_arg(struct pt_regs *ctx, int i, __u64 *out)
{
	long v = 0;
	int err;

	if (fast_args) {
		*out = reg_value(ctx, arg_reg[i]);
		return 0;
	}
	err = bpf_usdt_arg(ctx, i, &v);
	*out = v;
	return err;
}

#define JMT_LEN_SHIFT 48
#define JMT_ADDR_MASK ((1ULL << JMT_LEN_SHIFT) - 1)

/* Reads (class, method, signature) as packed address|length words. */
static __always_inline int read_key(struct pt_regs *ctx, struct jmt_method_key *k)
{
	__u64 cp, cl, mp, ml, sp, sl;

	if (usdt_arg(ctx, 1, &cp) || usdt_arg(ctx, 2, &cl) || usdt_arg(ctx, 3, &mp) ||
	    usdt_arg(ctx, 4, &ml) || usdt_arg(ctx, 5, &sp) || usdt_arg(ctx, 6, &sl))
		return -1;
	k->klass = (cp & JMT_ADDR_MASK) | ((cl & 0xffff) << JMT_LEN_SHIFT);
	k->method = (mp & JMT_ADDR_MASK) | ((ml & 0xffff) << JMT_LEN_SHIFT);
	k->sig = (sp & JMT_ADDR_MASK) | ((sl & 0xffff) << JMT_LEN_SHIFT);
	return 0;
}

static __always_inline __u32 key_len(__u64 word) { return word >> JMT_LEN_SHIFT; }
static __always_inline const void *key_addr(__u64 word) { return (const void *)(word & JMT_ADDR_MASK); }

/* Whole-segment prefix match of a class name against --package prefixes. */
static __always_inline int class_kept(const char *cls, __u32 len)
{
	if (n_prefixes == 0)
		return 1;
	for (__u32 i = 0; i < JMT_MAX_PREFIXES; i++) {
		__u32 plen, j;

		if (i >= n_prefixes)
			break;
		plen = prefixes[i].len;
		if (plen > len || plen > JMT_PREFIX_LEN)
			continue;
		if (plen < len && cls[plen & (JMT_CLASS_BUF - 1)] != '/')
			continue;
		for (j = 0; j < JMT_PREFIX_LEN; j++) {
			if (j >= plen || cls[j] != prefixes[i].s[j])
				break;
		}
		if (j >= plen)
			return 1;
	}
	return 0;
}

static __always_inline __u32 min_u32(__u32 a, __u32 b) { return a < b ? a : b; }

/*
 * The state of the glob being matched lives in a map value, not on the stack:
 * the verifier then sees its indices as unknown scalars and checks the
 * bpf_loop callback once for all steps, instead of following constant
 * indices step by step through a known rodata pattern (which, for a long
 * pattern, exceeds its instruction budget). Per CPU, like names_scratch: only
 * a program preempted midway (preempt=full/lazy/RT) and another one matching
 * on the same CPU meanwhile could mix two matches' states, very rarely.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jmt_glob_state);
} glob_scratch SEC(".maps");

/* One glob against one name, stepped by bpf_loop (glob.h): st in glob_scratch,
 * pat at a rodata pattern, str at a name buffer of names_scratch. */
struct glob_ctx {
	struct jmt_glob_state *st;
	const volatile char *pat;
	const char *str;
};

static long glob_step_class(__u32 i, void *data)
{
	struct glob_ctx *g = data;

	return jmt_glob_step(g->st, g->pat, g->str, JMT_CLASS_BUF - 1);
}

static long glob_step_method(__u32 i, void *data)
{
	struct glob_ctx *g = data;

	return jmt_glob_step(g->st, g->pat, g->str, JMT_METHOD_BUF - 1);
}

/*
 * Whether name (slen bytes, slen <= its buffer: JMT_CLASS_BUF for a class,
 * JMT_METHOD_BUF for a method) matches one of the first n globs of kind
 * (JMT_GLOB_CLASS, JMT_GLOB_METHOD: a constant): 1 when one does, 0 when none
 * does, -1 when none does but one ran out of its JMT_GLOB_STEPS steps
 * (undecided). Bounded: n <= JMT_MAX_GLOBS loops of at most JMT_GLOB_STEPS steps.
 */
static __always_inline int globs_kept(int kind, __u32 n, const char *name, __u32 slen)
{
	struct jmt_glob_state *st;
	__u32 zero = 0;
	int undecided = 0;

	st = bpf_map_lookup_elem(&glob_scratch, &zero);
	if (!st)
		return -1;
	for (__u32 i = 0; i < JMT_MAX_GLOBS; i++) {
		struct glob_ctx g = {};

		if (i >= n)
			break;
		jmt_glob_init(st, globs[kind][i].len, slen);
		g.st = st;
		g.pat = globs[kind][i].s;
		g.str = name;
		if (kind == JMT_GLOB_CLASS)
			bpf_loop(JMT_GLOB_STEPS, glob_step_class, &g, 0);
		else
			bpf_loop(JMT_GLOB_STEPS, glob_step_method, &g, 0);
		if (st->result == JMT_GLOB_MATCH)
			return 1;
		if (st->result == JMT_GLOB_RUNNING)
			undecided = 1;
	}
	return undecided ? -1 : 0;
}

int method_info_slow(const struct jmt_method_key *k, struct jmt_method_info *out);

/* The method table entry for k (verdict, id), created on first sight. */
static __always_inline int method_info(const struct jmt_method_key *k, __u32 fp,
				       struct jmt_method_info *out)
{
	__u32 slot_idx = fp & (JMT_METHOD_CACHE_SLOTS - 1);
	struct jmt_method_cache_slot *slot = bpf_map_lookup_elem(&method_cache, &slot_idx);

	if (slot && slot->key.klass == k->klass && slot->key.method == k->method &&
	    slot->key.sig == k->sig) {
		*out = slot->info;
		return 0;
	}
	if (method_info_slow(k, out))
		return -1;
	if (slot) {
		slot->key = *k;
		slot->info = *out;
	}
	return 0;
}

/* Finds or creates the method table entry for k: verdict, id, names. A global
 * function: verified once on its own, called only on a cache miss, so the
 * filters (prefixes, then class globs, then method globs) cost only at the
 * first sight of each method. */
__noinline int method_info_slow(const struct jmt_method_key *k, struct jmt_method_info *out)
{
	struct jmt_method_info *found, info = {};
	struct jmt_names *n;
	__u32 zero = 0, len, mlen;
	long err, merr = 0;
	int kept, method_read = 0;

	if (!k || !out)
		return -1;
	found = bpf_map_lookup_elem(&methods, k);
	if (found) {
		*out = *found;
		return 0;
	}
	n = bpf_map_lookup_elem(&names_scratch, &zero);
	if (!n)
		return -1;
	n->class_addr = (__u64)key_addr(k->klass);
	n->method_addr = (__u64)key_addr(k->method);
	n->sig_addr = (__u64)key_addr(k->sig);
	n->class_len = key_len(k->klass);
	n->method_len = key_len(k->method);
	n->sig_len = key_len(k->sig);
	len = min_u32(n->class_len, JMT_CLASS_BUF);
	mlen = min_u32(n->method_len, JMT_METHOD_BUF);
	err = bpf_probe_read_user(n->klass, len, key_addr(k->klass));
	if (err && (n_prefixes || n_class_globs)) {
		count(JMT_CNT_NAMES_FAIL);
		return -1; /* verdict unknown: decide on a later event */
	}
	kept = class_kept(n->klass, n->class_len);
	/* Class globs see the bytes read (at most JMT_CLASS_BUF). */
	if (kept > 0 && n_class_globs)
		kept = globs_kept(JMT_GLOB_CLASS, n_class_globs, n->klass, len);
	if (kept > 0 && n_method_globs) {
		merr = bpf_probe_read_user(n->method, mlen, key_addr(k->method));
		if (merr) {
			count(JMT_CNT_NAMES_FAIL);
			return -1; /* verdict unknown: decide on a later event */
		}
		method_read = 1;
		kept = globs_kept(JMT_GLOB_METHOD, n_method_globs, n->method, mlen);
	}
	if (kept < 0) {
		count(JMT_CNT_GLOB_BUDGET_OUT); /* once per method: the verdict is kept */
		kept = 0;
	}
	info.traced = kept > 0;
	if (info.traced) {
		info.id = __sync_fetch_and_add(&last_method_id, 1) + 1;
		if (info.id >= max_method_ids) {
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
	if (info.traced) {
		if (!method_read)
			err |= bpf_probe_read_user(n->method, mlen, key_addr(k->method));
		err |= bpf_probe_read_user(n->sig, min_u32(n->sig_len, JMT_SIG_BUF),
					   key_addr(k->sig));
		n->read_ok = err == 0;
		if (bpf_map_update_elem(&names, &info.id, n, BPF_ANY) || err)
			count(JMT_CNT_NAMES_FAIL);
	}
	*out = info;
	return 0;
}

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
	struct task_struct *task = bpf_get_current_task_btf();
	struct jmt_thread *t;

	t = bpf_task_storage_get(&threads, task, 0,
				 create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
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
		t->events_total = 0;
		t->traced_total = 0;
		t->depth = 0;
		t->on_cpu = 1;
		t->gap_prev_ns = 0;
		t->initialized = 1;
	}
	return t;
}

/* The gap since the thread's last clocked event when nothing came between:
 * no other probe event (a filtered-out one reads no clock) and no switch. */
static __always_inline void record_gap(struct jmt_thread *t, struct jmt_cpu *cpu,
				       const struct jmt_clock *c)
{
	if (t->gap_prev_ns && c->events == t->gap_prev_events + 1 &&
	    t->gap_prev_switch_ns == t->switch_in_ns) {
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
 * slice) instead of counting from the switch-in before its last switch-out. */
static __always_inline void thread_clock(struct jmt_thread *t, struct jmt_cpu *cpu,
					 struct jmt_clock *c)
{
	c->wall_ns = bpf_ktime_get_ns();
	if (!t->on_cpu) {
		t->on_cpu = 1;
		t->switch_in_ns = c->wall_ns;
		bump(cpu, JMT_CNT_SWITCH_UNSEEN);
	}
	c->cpu_ns = t->cpu_total_ns + (c->wall_ns - t->switch_in_ns);
	c->events = t->events_total + cpu->slice_events;
	c->traced = t->traced_total;
	record_gap(t, cpu, c);
}

/* Plain adds of a closed frame into totals (exact when only one program at a
 * time writes them: see account and account_thread). */
static __always_inline void add_closed(struct jmt_method_stats *s, const struct jmt_closed *c)
{
	s->calls += 1;
	s->unreturned += c->unreturned;
	s->wall_incl_ns += c->wall_incl_ns;
	s->wall_excl_ns += c->wall_excl_ns;
	s->cpu_incl_ns += c->cpu_incl_ns;
	s->cpu_excl_ns += c->cpu_excl_ns;
	s->events_incl += c->events_incl;
	s->events_excl += c->events_excl;
	s->traced_incl += c->traced_incl;
	s->traced_excl += c->traced_excl;
	if (foreign) {
		s->wall_foreign_ns += c->wall_foreign_ns;
		s->cpu_foreign_ns += c->cpu_foreign_ns;
		s->events_foreign += c->events_foreign;
		s->traced_foreign += c->traced_foreign;
	}
}

/*
 * --per-thread: adds a closed frame to the (running thread, method) row,
 * creating it on the thread's first close of the method. Only the thread in
 * the key writes its rows, one program at a time (drop_one's bpf_loop runs
 * inside the thread's own program), so plain adds are exact whatever the
 * preemption model. When the table is full the frame stays in the global
 * totals only, and thread_rows_full counts it.
 */
static __always_inline void account_thread(const struct jmt_closed *c)
{
	struct jmt_thread_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .id = c->id };
	struct jmt_method_stats *s = bpf_map_lookup_elem(&thread_stats, &key);

	if (!s) {
		struct jmt_method_stats first = {};

		add_closed(&first, c);
		if (bpf_map_update_elem(&thread_stats, &key, &first, BPF_NOEXIST))
			count(JMT_CNT_THREAD_ROWS_FULL);
		return;
	}
	add_closed(s, c);
}

/* Adds a closed frame to per-CPU totals: atomic adds when the kernel may
 * preempt a program midway (two programs may then interleave on this CPU). */
static __always_inline void add_totals(struct jmt_method_stats *s, const struct jmt_closed *c)
{
	if (atomic_totals) {
		__sync_fetch_and_add(&s->calls, 1);
		__sync_fetch_and_add(&s->unreturned, c->unreturned);
		__sync_fetch_and_add(&s->wall_incl_ns, c->wall_incl_ns);
		__sync_fetch_and_add(&s->wall_excl_ns, c->wall_excl_ns);
		__sync_fetch_and_add(&s->cpu_incl_ns, c->cpu_incl_ns);
		__sync_fetch_and_add(&s->cpu_excl_ns, c->cpu_excl_ns);
		__sync_fetch_and_add(&s->events_incl, c->events_incl);
		__sync_fetch_and_add(&s->events_excl, c->events_excl);
		__sync_fetch_and_add(&s->traced_incl, c->traced_incl);
		__sync_fetch_and_add(&s->traced_excl, c->traced_excl);
		if (foreign) {
			__sync_fetch_and_add(&s->wall_foreign_ns, c->wall_foreign_ns);
			__sync_fetch_and_add(&s->cpu_foreign_ns, c->cpu_foreign_ns);
			__sync_fetch_and_add(&s->events_foreign, c->events_foreign);
			__sync_fetch_and_add(&s->traced_foreign, c->traced_foreign);
		}
		return;
	}
	add_closed(s, c);
}

/* Adds a closed frame to its call path's totals, with the frame's own
 * inclusive values (a path's frames are never double counted). */
static __always_inline void account_path(const struct jmt_closed *c)
{
	struct jmt_closed frame = *c;
	__u32 path = c->path;
	struct jmt_method_stats *s;

	if (path == 0)
		return;
	s = bpf_map_lookup_elem(&path_stats, &path);
	if (!s)
		return;
	frame.wall_incl_ns = c->frame_wall_ns;
	frame.cpu_incl_ns = c->frame_cpu_ns;
	frame.events_incl = c->frame_events;
	frame.traced_incl = c->frame_traced;
	add_totals(s, &frame);
}

/* Adds a closed frame to its method's totals, to its call path's when paths
 * are on, and, when with_threads (a constant, or the per_thread rodata on
 * cold paths), to its thread's row. The row first: userspace reads the totals
 * before the rows, so a frame closing meanwhile is never in the totals
 * without being in its row. */
static __always_inline void account(const struct jmt_closed *c, int with_threads)
{
	__u32 id = c->id;
	struct jmt_method_stats *s = bpf_map_lookup_elem(&stats, &id);

	if (!s)
		return;
	if (c->cpu_clamped)
		count(JMT_CNT_CPU_CLAMPED);
	if (foreign && c->foreign_lost)
		count(JMT_CNT_FOREIGN_LOST);
	if (with_threads)
		account_thread(c);
	if (call_paths)
		account_path(c);
	add_totals(s, c);
}

/* The path id of method id entered under parent path parent, created on
 * first sight; JMT_PATH_TRUNCATED once the table is full, and for every
 * frame entered above a truncated one. */
static __noinline __u32 path_of_slow(__u32 parent, __u32 id)
{
	struct jmt_path_key key = { .parent = parent, .id = id };
	__u32 *found, path;

	found = bpf_map_lookup_elem(&path_ids, &key);
	if (found)
		return *found;
	path = __sync_fetch_and_add(&last_path_id, 1) + 1;
	if (path >= max_path_ids || bpf_map_update_elem(&path_ids, &key, &path, BPF_NOEXIST)) {
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
	slot_idx &= JMT_PATH_CACHE_SLOTS - 1;
	slot = bpf_map_lookup_elem(&path_cache, &slot_idx);
	if (slot && slot->path && slot->key.parent == parent && slot->key.id == id)
		return slot->path;
	path = path_of_slow(parent, id);
	if (slot && path != JMT_PATH_TRUNCATED) {
		slot->key.parent = parent;
		slot->key.id = id;
		slot->path = path;
	}
	return path;
}

/* --foreign: an untraced method's entry (or return) inside a traced frame
 * opens (or closes) the frame's foreign segment when it is the first (last)
 * untraced call open above it; the clock is read only then. */
static __always_inline void foreign_event(struct jmt_cpu *cpu, const int is_entry)
{
	struct jmt_thread *t = thread_state(0);
	struct jmt_clock now;

	if (!t)
		return;
	if (is_entry) {
		if (jmt_foreign_enter(t)) {
			thread_clock(t, cpu, &now);
			jmt_foreign_open(t, &now);
		}
	} else if (jmt_foreign_leave(t)) {
		thread_clock(t, cpu, &now);
		jmt_foreign_close(t, &now);
	}
}

struct drop_ctx {
	struct jmt_thread *t;
	__u32 match;   /* on return: 1-based depth of the frame that returned */
	__u32 id;      /* on entry: the entering method ... */
	__u64 sp;      /* ... its stack pointer ... */
	__u64 call_site; /* ... and call site */
	__u32 on_entry;
};

struct find_ctx {
	const struct jmt_thread *t;
	__u32 id;
	__u32 match; /* 1-based depth of the topmost frame of id, 0 when none */
};

/* bpf_loop callback of jmt_find: verified once, whatever the stack's depth,
 * so the code after the search is not verified once per depth. */
static long find_one(__u32 i, void *data)
{
	struct find_ctx *fc = data;

	return jmt_find_step(fc->t, fc->id, i, &fc->match);
}

/* bpf_loop callback: drops the top frame while it is dead (entry) or above
 * the frame that returned (return). */
static long drop_one(__u32 i, void *data)
{
	struct drop_ctx *dc = data;
	struct jmt_thread *t = dc->t;
	struct jmt_closed closed = {};

	if (t->depth == 0 || t->depth > JMT_MAX_DEPTH)
		return 1;
	if (dc->on_entry ? !jmt_top_is_stale(t, dc->id, dc->sp, dc->call_site) : t->depth <= dc->match)
		return 1;
	jmt_drop_top(t, &closed, foreign);
	account(&closed, per_thread); /* rodata: pruned at load when off */
	count(JMT_CNT_DROPPED_FRAMES);
	return 0;
}

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
	/* Each iteration reads the clock: 1 << 20 of them outlast any test_trap_ns used. */
	bpf_loop(1 << 20, spin_until, &deadline_ns, 0);
}

SEC("usdt")
int handle_entry(struct pt_regs *ctx)
{
	struct jmt_method_key k;
	struct jmt_method_info info;
	struct jmt_thread *t;
	struct jmt_clock now;
	struct jmt_cpu *cpu = this_cpu();
	__u64 sp, call_site = 0;
	__u32 fp, path;

	test_trap();
	if (!cpu)
		return 0;
	cpu->slice_events += 1;
	bump(cpu, JMT_CNT_ENTRIES);
	if (read_key(ctx, &k)) {
		bump(cpu, JMT_CNT_ARG_FAIL);
		return 0;
	}
	fp = jmt_fingerprint(&k);
	if (method_info(&k, fp, &info))
		return 0;
	if (!info.traced) {
		if (foreign)
			foreign_event(cpu, 1);
		return 0;
	}
	t = thread_state(1);
	if (!t)
		return 0;
	sp = JMT_CTX_LOAD(ctx, sp);
	if (jmt_needs_call_site(t, sp)) {
		__u32 parent = jmt_parent_id(t);
		struct jmt_site *site = jmt_site_slot(t, info.id, parent, sp);

		if (!jmt_top_is_ambiguous(t, info.id, sp) && jmt_site_matches(site, info.id, parent, sp)) {
			call_site = site->call_site;
		} else {
			/* The probe's function keeps a frame pointer: its return address is at bp + 8. */
			__u64 bp = JMT_CTX_LOAD(ctx, bp);

			if (bpf_probe_read_user(&call_site, sizeof(call_site), (void *)(bp + 8)))
				call_site = 0;
			site->sp = sp;
			site->id = info.id;
			site->parent = parent;
			site->call_site = call_site;
		}
	}
	if (jmt_top_is_stale(t, info.id, sp, call_site)) {
		struct drop_ctx dc = { .t = t, .id = info.id, .sp = sp, .call_site = call_site,
				       .on_entry = 1 };

		bpf_loop(JMT_MAX_DEPTH, drop_one, &dc, 0);
	}
	/* Before the clock: the lookup's time is the caller's, like the trap's. */
	path = call_paths ? path_of(jmt_parent_path(t), info.id) : 0;
	t->traced_total += 1;
	thread_clock(t, cpu, &now);
	bump(cpu, JMT_CNT_TRACED_CALLS);
	if (jmt_push(t, info.id, fp, &now, sp, call_site, path, foreign))
		bump(cpu, JMT_CNT_DEPTH_OVERFLOW);
	return 0;
}

/* The return probe's body; with_threads is a constant: the program without
 * per-thread rows (handle_return) is compiled exactly as if they did not exist. */
static __always_inline int on_return(struct pt_regs *ctx, const int with_threads)
{
	struct jmt_method_key k;
	struct jmt_method_info info;
	struct jmt_closed closed = {};
	struct jmt_thread *t;
	struct jmt_clock now;
	struct jmt_cpu *cpu = this_cpu();
	__u32 d, match, fp;

	if (!cpu)
		return 0;
	cpu->slice_events += 1;
	bump(cpu, JMT_CNT_RETURNS);
	if (read_key(ctx, &k)) {
		bump(cpu, JMT_CNT_ARG_FAIL);
		return 0;
	}
	fp = jmt_fingerprint(&k);
	/* The verdict first: a rejected method's return needs nothing else
	 * (but its callers' foreign time under --foreign). */
	if (method_info(&k, fp, &info))
		return 0;
	if (!info.traced) {
		if (foreign)
			foreign_event(cpu, 0);
		return 0;
	}
	t = thread_state(0);
	if (!t || t->depth == 0) {
		bump(cpu, JMT_CNT_UNMATCHED_RETURNS);
		return 0;
	}
	d = t->depth;
	t->traced_total += 1;
	thread_clock(t, cpu, &now);

	/* The return of the top stored frame: the common case. */
	if (d <= JMT_MAX_DEPTH && t->frames[JMT_IDX(d - 1)].fp == fp) {
		jmt_close_top(t, &now, &closed, foreign);
		account(&closed, with_threads);
		return 0;
	}
	if (d > JMT_MAX_DEPTH) {
		/* Unstored frame: count the call, its time stays in the deepest stored frame. */
		t->depth = d - 1;
		closed.id = info.id;
		account(&closed, with_threads);
		return 0;
	}
	struct find_ctx fc = { .t = t, .id = info.id };

	bpf_loop(JMT_MAX_DEPTH, find_one, &fc, 0);
	match = fc.match;
	if (!match) {
		bump(cpu, JMT_CNT_UNMATCHED_RETURNS);
		return 0;
	}
	/* Frames above the match lost their return (C1-inlined callee exiting by exception). */
	struct drop_ctx dc = { .t = t, .match = match };

	bpf_loop(JMT_MAX_DEPTH, drop_one, &dc, 0);
	if (t->depth != match || match == 0)
		return 0;
	jmt_close_top(t, &now, &closed, foreign);
	account(&closed, with_threads);
	return 0;
}

/* The loader keeps one of the two: handle_return, or handle_return_t for --per-thread. */
SEC("usdt")
int handle_return(struct pt_regs *ctx)
{
	test_trap();
	return on_return(ctx, 0);
}

SEC("usdt")
int handle_return_t(struct pt_regs *ctx)
{
	test_trap();
	return on_return(ctx, 1);
}

/* On-CPU time per target thread: accumulated at switch-out, restarted at switch-in. */
SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct jmt_thread *t;
	struct jmt_cpu *cpu;
	__u64 now;

	if (prev->tgid != target_tgid && next->tgid != target_tgid)
		return 0;
	now = bpf_ktime_get_ns();
	cpu = this_cpu();
	if (!cpu)
		return 0;
	if (prev->tgid == target_tgid) {
		t = bpf_task_storage_get(&threads, prev, 0, 0);
		if (t && t->initialized) {
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
	if (next->tgid == target_tgid) {
		t = bpf_task_storage_get(&threads, next, 0, 0);
		if (t && t->initialized) {
			if (t->on_cpu)
				bump(cpu, JMT_CNT_SWITCH_UNSEEN); /* its switch-out went unseen */
			t->switch_in_ns = now;
			t->on_cpu = 1;
		}
	}
	return 0;
}

/* Frees a target thread's state when it exits, so long traces of short-lived
 * threads keep memory bounded (live states = traced - ended). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task)
{
	if (task->tgid != target_tgid)
		return 0;
	if (bpf_task_storage_delete(&threads, task) == 0)
		count(JMT_CNT_THREADS_ENDED);
	return 0;
}
