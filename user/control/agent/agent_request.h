/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's reading of a request and its class filter (agent_abi.h): pure
 * functions over plain memory, included by jmt_agent.c (built without a C
 * library) and by the unit tests (tests/unit/test_agent_request.cpp), so that
 * the agent's parser, matcher and method set are the ones the tests run.
 *
 * A class filter is "*" (every class) or items separated by ' ': "p:PKG" (a
 * --package prefix, whole segments: package.h) and "g:GLOB" (a --class glob, glob.h). A
 * class is selected when it is under one of the packages, if there are any,
 * and matches one of the globs, if there are any: what the kernel's filter
 * decides for its methods.
 */
#ifndef JMT_AGENT_REQUEST_H
#define JMT_AGENT_REQUEST_H

#include "agent_abi.h"
#include "glob.h"
#include "package.h"

static inline unsigned long jmt_str_len(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static inline int jmt_starts_with(const char *s, unsigned long len, const char *prefix)
{
	unsigned long i;

	for (i = 0; prefix[i]; i++)
		if (i >= len || s[i] != prefix[i])
			return 0;
	return 1;
}

struct jmt_request {
	uint32_t op;
	int deopt; /* BEGIN: take the one-time full deoptimization */
	int32_t owner_pid;
	uint64_t owner_start;
	const char *classes; /* SWITCH: the filter, "*" or "p:PKG g:GLOB ..." */
	unsigned long classes_len;
	uint64_t flag_addr; /* BEGIN: DTraceMethodProbes's address, 0 */
	const char *watch;  /* BEGIN: the owner's FIFO, or NULL */
	unsigned long watch_len;
	const char *self; /* the path this request loaded the agent from, or NULL */
	unsigned long self_len;
};

static inline uint64_t jmt_parse_u64(const char *s, unsigned long len, unsigned long *used)
{
	uint64_t v = 0;
	unsigned long i = 0;

	while (i < len && s[i] >= '0' && s[i] <= '9')
		v = v * 10 + (uint64_t)(s[i++] - '0');
	*used = i;
	return v;
}

static const struct {
	const char *name;
	uint32_t op;
} jmt_ops[] = {
	{"begin", JMT_OP_BEGIN},     {"arm", JMT_OP_ARM},	  {"switch", JMT_OP_SWITCH},
	{"restore", JMT_OP_RESTORE}, {"standby", JMT_OP_STANDBY}, {"defer", JMT_OP_DEFER},
};

/* "op=NAME;owner=PID.START;deopt=1;classes=FILTER": 0, or -1 when it does not parse. */
static inline int jmt_parse_request(const char *opts, struct jmt_request *r)
{
	unsigned long len = opts ? jmt_str_len(opts) : 0, at = 0;

	r->op = JMT_OP_NONE;
	r->deopt = 0;
	r->owner_pid = 0;
	r->owner_start = 0;
	r->classes = 0;
	r->classes_len = 0;
	r->flag_addr = 0;
	r->watch = 0;
	r->watch_len = 0;
	r->self = 0;
	r->self_len = 0;
	while (at < len) {
		const char *f = opts + at;
		unsigned long flen = 0, used, i;

		while (at + flen < len && f[flen] != ';')
			flen++;
		at += flen + 1;
		if (jmt_starts_with(f, flen, "op=")) {
			for (i = 0; i < sizeof(jmt_ops) / sizeof(jmt_ops[0]); i++)
				if (flen == 3 + jmt_str_len(jmt_ops[i].name) &&
				    jmt_starts_with(f + 3, flen - 3, jmt_ops[i].name))
					r->op = jmt_ops[i].op;
		} else if (jmt_starts_with(f, flen, "owner=")) {
			r->owner_pid = (int32_t)jmt_parse_u64(f + 6, flen - 6, &used);
			if (6 + used >= flen || f[6 + used] != '.')
				return -1;
			r->owner_start = jmt_parse_u64(f + 7 + used, flen - 7 - used, &used);
		} else if (jmt_starts_with(f, flen, "deopt=")) {
			r->deopt = flen == 7 && f[6] == '1';
		} else if (jmt_starts_with(f, flen, "flag=")) {
			r->flag_addr = jmt_parse_u64(f + 5, flen - 5, &used);
			if (5 + used != flen)
				return -1;
		} else if (jmt_starts_with(f, flen, "watch=")) {
			r->watch = f + 6;
			r->watch_len = flen - 6;
			if (r->watch_len == 0 || r->watch_len >= JMT_AGENT_WATCH_PATH_MAX || r->watch[0] != '/')
				return -1;
		} else if (jmt_starts_with(f, flen, "self=")) {
			r->self = f + 5;
			r->self_len = flen - 5;
			if (r->self_len == 0 || r->self_len >= JMT_AGENT_WATCH_PATH_MAX || r->self[0] != '/')
				return -1;
		} else if (jmt_starts_with(f, flen, "classes=")) {
			r->classes = f + 8;
			r->classes_len = flen - 8;
		} else if (flen) {
			return -1;
		}
	}
	return r->op == JMT_OP_NONE ? -1 : 0;
}

static inline int jmt_glob_matches(const char *name, unsigned long nlen, const char *pat, unsigned long plen)
{
	struct jmt_glob_state st;
	__u32 mask = 1;

	if (plen >= JMT_GLOB_LEN)
		return 0;
	while (mask < nlen && mask < 0x80000000U)
		mask <<= 1;
	jmt_glob_init(&st, (__u32)plen, (__u32)nlen);
	while (!jmt_glob_step(&st, pat, name, mask - 1))
		;
	return st.result == JMT_GLOB_MATCH;
}

/*
 * Whether class name (JVM form, nlen bytes) is one the filter can trace: "*"
 * takes every class; otherwise under one of its packages ("p:") if it has any,
 * and matching one of its globs ("g:") if it has any, as the kernel decides.
 * An empty filter, or one of no "p:" or "g:" item, takes none.
 */
static inline int jmt_class_selected(const char *filter, unsigned long flen, const char *name, unsigned long nlen)
{
	int packages = 0, in_package = 0, globs = 0, in_glob = 0;
	unsigned long at = 0;

	if (flen == 1 && filter[0] == '*')
		return 1;
	while (at < flen) {
		const char *item = filter + at;
		unsigned long ilen = 0;

		while (at + ilen < flen && item[ilen] != ' ')
			ilen++;
		at += ilen + 1;
		if (ilen < 2 || item[1] != ':')
			continue;
		if (item[0] == 'p') {
			packages = 1;
			in_package |= jmt_under_package(name, (__u32)nlen, item + 2, (__u32)(ilen - 2));
		} else if (item[0] == 'g') {
			globs = 1;
			in_glob |= jmt_glob_matches(name, nlen, item + 2, ilen - 2);
		}
	}
	/* A filter with no item it can read selects nothing (never every class). */
	return (packages || globs) && (!packages || in_package) && (!globs || in_glob);
}

/*
 * The set of methods compiled while tracking: JMT_AGENT_TRACKED_MAX slots of
 * pointers (jmethodIDs), open addressing, NULL an empty slot. At most three
 * quarters fill, so a probe stays short; past that *overflow is set (the
 * agent then takes every class).
 */
static inline uint32_t jmt_set_slot(const void *key)
{
	return (uint32_t)((((uint64_t)(unsigned long)key >> 3) * 0x9e3779b97f4a7c15ULL) >> 32) &
		(JMT_AGENT_TRACKED_MAX - 1);
}

static inline int jmt_set_has(const void *const *set, const void *key)
{
	uint32_t i, s = jmt_set_slot(key);

	for (i = 0; i < JMT_AGENT_TRACKED_MAX; i++, s = (s + 1) & (JMT_AGENT_TRACKED_MAX - 1)) {
		if (set[s] == key)
			return 1;
		if (!set[s])
			return 0;
	}
	return 0;
}

/* A slot whose key was taken out: probes go on past it, nothing is added to it. */
#define JMT_SET_TAKEN ((const void *)1)

/* Takes key out of the set (its slot becomes JMT_SET_TAKEN): 1 when it was there. */
static inline int jmt_set_take(const void **set, const void *key)
{
	uint32_t i, s = jmt_set_slot(key);

	for (i = 0; i < JMT_AGENT_TRACKED_MAX; i++, s = (s + 1) & (JMT_AGENT_TRACKED_MAX - 1)) {
		if (set[s] == key) {
			set[s] = JMT_SET_TAKEN;
			return 1;
		}
		if (!set[s])
			return 0;
	}
	return 0;
}

/* Adds key (not NULL) unless it is there; *count counts the keys held. */
static inline void jmt_set_add(const void **set, const void *key, uint32_t *count, uint32_t *overflow)
{
	uint32_t i, s = jmt_set_slot(key);

	for (i = 0; i < JMT_AGENT_TRACKED_MAX; i++, s = (s + 1) & (JMT_AGENT_TRACKED_MAX - 1)) {
		if (set[s] == key)
			return;
		if (!set[s])
			break;
	}
	if (*count >= JMT_AGENT_TRACKED_MAX / 4 * 3) {
		*overflow = 1;
		return;
	}
	set[s] = key;
	*count += 1;
}

#endif /* JMT_AGENT_REQUEST_H */
