/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's traffic watch (agent_internal.h): after a DEFER, the code compiled
 * while the trace was on keeps its probe calls, cheap without a tracer, so that
 * a quiet JVM keeps its compiled code and the next trace traps as narrowly as
 * the last. Once the JVM works again (its CPU time over the last
 * JMT_AGENT_TRAFFIC_WINDOW_MS reaches JMT_AGENT_TRAFFIC_PERMILLE of one CPU),
 * the watch restores (RESTORE), and the probe calls go as that code compiles
 * again under the traffic. A BEGIN first (mode no longer DEFERRED) ends it.
 */
#include "agent_internal.h"
#include "agent_sys.h"

/* The current watch's number (under jmt_op_lock): an older watch that looks ends. */
static uint32_t traffic_gen;

#define SAMPLES (JMT_AGENT_TRAFFIC_WINDOW_MS / JMT_AGENT_TRAFFIC_POLL_MS + 1)
/* Clock ticks (10 ms) of CPU time over the window that make traffic. */
#define TRAFFIC_TICKS (JMT_AGENT_TRAFFIC_PERMILLE * JMT_AGENT_TRAFFIC_WINDOW_MS / 10000)

/* Whether the samples (the oldest first, -1: unread) span the window with traffic in it. */
static int traffic(const long *samples)
{
	return samples[0] >= 0 && samples[SAMPLES - 1] >= 0 && samples[SAMPLES - 1] - samples[0] >= TRAFFIC_TICKS;
}

static void JNICALL watch_traffic(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
	uint32_t gen = (uint32_t)(unsigned long)arg;
	long samples[SAMPLES];
	int i, done = 0;
	jvmtiError err;

	(void)jni;
	for (i = 0; i < SAMPLES; i++)
		samples[i] = -1;
	while (!done) {
		for (i = 0; i + 1 < SAMPLES; i++)
			samples[i] = samples[i + 1];
		samples[SAMPLES - 1] = jmt_self_cpu_ticks();
		(*env)->RawMonitorEnter(env, jmt_op_lock);
		if (gen != traffic_gen || jmt_agent_state.mode != JMT_AGENT_DEFERRED) {
			done = 1;
		} else if (traffic(samples)) {
			jmt_agent_state.retransformed = 0;
			err = jmt_op_restore();
			jmt_agent_state.traffic_restores++;
			jmt_agent_state.traffic_restore_error = (int32_t)err;
			done = 1;
		}
		(*env)->RawMonitorExit(env, jmt_op_lock);
		if (!done)
			jmt_sleep_ms(JMT_AGENT_TRAFFIC_POLL_MS);
	}
}

jvmtiError jmt_start_traffic_watch(JNIEnv *jni)
{
	return jmt_run_thread(jni, "jmethodtime traffic watch", watch_traffic, (void *)(unsigned long)++traffic_gen);
}
