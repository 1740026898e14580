/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the agent's two files (jmt_agent.c: requests, methods, the owner's
 * watch; agent_retransform.c: retransforming) share. Nothing here is
 * exported from the shared object (built with -fvisibility=hidden).
 */
#ifndef JMT_AGENT_INTERNAL_H
#define JMT_AGENT_INTERNAL_H

#include <jvmti.h>

#include "agent_abi.h"
#include "agent_request.h"

extern jvmtiEnv *jmt_jvmti;
extern struct jmt_agent_state jmt_agent_state;
/* One operation at a time: a request, or the watch's restore. Guards the mode. */
extern jrawMonitorID jmt_op_lock;

void *memset(void *dst, int c, unsigned long n);
void *memcpy(void *dst, const void *src, unsigned long n);

/* What selects a class for retransforming; a class is taken when any part says so. */
struct jmt_selection {
	int all;
	const char *filter; /* class filter, or NULL */
	unsigned long filter_len;
	const jmethodID *methods; /* a table of jmethodIDs: the classes declaring one, or NULL */
	int count_unmodifiable;
};

/* Retransforms the loaded classes sel takes; the counts go to jmt_agent_state. */
jvmtiError jmt_retransform(const struct jmt_selection *sel);

/*
 * Where HotSpot has not recorded every dependency yet (JDK 22 and older, no
 * agent from the start), the first redefinition deoptimizes all compiled code:
 * one class retransformed does it.
 */
jvmtiError jmt_deoptimize_all(JNIEnv *jni);

/* RESTORE (agent_abi.h), under jmt_op_lock. */
jvmtiError jmt_op_restore(void);

/* A daemon thread (JVMTI's agent thread) waiting on the owner's FIFO r->watch;
 * under jmt_op_lock. Nothing is left open or started when it fails. */
jvmtiError jmt_start_watch(const struct jmt_request *r, JNIEnv *jni);

/* A daemon thread (JVMTI's agent thread) named name running fn(arg). */
jvmtiError jmt_run_thread(JNIEnv *jni, const char *name, jvmtiStartFunction fn, void *arg);

/* The traffic watch (agent_abi.h, JMT_OP_DEFER): a daemon thread that restores once the
 * JVM's CPU time says traffic is back, while the mode stays DEFERRED; under jmt_op_lock.
 * An older watch ends at its next look. */
jvmtiError jmt_start_traffic_watch(JNIEnv *jni);

#endif /* JMT_AGENT_INTERNAL_H */
