/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The --package rule: a class (JVM form, '/' between segments) is under a
 * package when the package is its name's prefix ending at a segment's end:
 * the name is the package, or goes on with '/'. "org/postgresql" takes
 * "org/postgresql/Driver" and "org/postgresql/core/v3/QueryExecutorImpl", not
 * "org/postgresqlx/A". A pure function over plain memory: the kernel's filter
 * (filters.bpf.h, each method's first call) and the agent's class filter
 * (user/control/agent/agent_request.h, the classes a switch retransforms) both
 * call it, and the unit tests (tests/unit/test_package.cpp) run it.
 *
 * Reads name[i] only at i < nlen (and masked into a JMT_CLASS_BUF buffer),
 * pkg[i] only at i < plen; a package over JMT_PREFIX_LEN bytes takes nothing.
 */
#ifndef JMT_PACKAGE_H
#define JMT_PACKAGE_H

#include "jmethodtime.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static __always_inline int jmt_under_package(const char *name, __u32 nlen, const volatile char *pkg, __u32 plen)
{
	__u32 j;

	if (plen > nlen || plen > JMT_PREFIX_LEN)
		return 0;
	if (plen < nlen && name[plen & (JMT_CLASS_BUF - 1)] != '/')
		return 0;
	for (j = 0; j < JMT_PREFIX_LEN; j++) {
		if (j >= plen)
			return 1;
		if (name[j] != pkg[j])
			return 0;
	}
	return 1;
}

#endif /* JMT_PACKAGE_H */
