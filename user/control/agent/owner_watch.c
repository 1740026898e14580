/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's watch over a trace's owner (agent_internal.h): the owner holds a
 * FIFO open for writing while it lives; a thread of the agent waits for the
 * read end to hang up, which the kernel does when the owner's last descriptor
 * closes, however it ends (SIGKILL included). The owner that ends a trace
 * itself restores first, so the watch then finds nothing to do and ends.
 */
#include "agent_internal.h"
#include "agent_sys.h"

/* The watch whose owner is the current one (under jmt_op_lock); an older watch that wakes does nothing. */
static uint32_t watch_gen;

struct watch {
	int fd;	      /* the owner's FIFO, read end */
	uint32_t gen; /* watch_gen when it started */
};

/* Waits for the FIFO's last writer (the owner) to close it. If this watch is
 * still the current one and the owner left the probes on: flag off, RESTORE.
 * Ends then, whatever it found. */
static void JNICALL watch_owner(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
	struct watch w = *(struct watch *)arg;
	jvmtiError err;

	(void)jni;
	(*env)->Deallocate(env, (unsigned char *)arg);
	jmt_wait_readable(w.fd);
	jmt_close(w.fd);
	(*env)->RawMonitorEnter(env, jmt_op_lock);
	if (w.gen == watch_gen) {
		jmt_agent_state.watching = 0;
		if (jmt_agent_state.mode == JMT_AGENT_TRACKING || jmt_agent_state.mode == JMT_AGENT_SWITCHED) {
			if (jmt_agent_state.flag_addr)
				*(volatile unsigned char *)(unsigned long)jmt_agent_state.flag_addr = 0;
			jmt_agent_state.retransformed = 0;
			err = jmt_op_restore();
			jmt_agent_state.owner_gone++;
			jmt_agent_state.owner_gone_error = (int32_t)err;
		}
	}
	(*env)->RawMonitorExit(env, jmt_op_lock);
}

jvmtiError jmt_run_thread(JNIEnv *jni, const char *name, jvmtiStartFunction fn, void *arg)
{
	jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = NULL;
	jstring jname = NULL;
	jobject thread = NULL;
	jvmtiError err = JVMTI_ERROR_OUT_OF_MEMORY;

	if (thread_class)
		init = (*jni)->GetMethodID(jni, thread_class, "<init>", "(Ljava/lang/String;)V");
	if (init)
		jname = (*jni)->NewStringUTF(jni, name);
	if (jname)
		thread = (*jni)->NewObject(jni, thread_class, init, jname);
	if (thread)
		err = (*jmt_jvmti)->RunAgentThread(jmt_jvmti, thread, fn, arg, JVMTI_THREAD_NORM_PRIORITY);
	(*jni)->ExceptionClear(jni);
	if (thread)
		(*jni)->DeleteLocalRef(jni, thread);
	if (jname)
		(*jni)->DeleteLocalRef(jni, jname);
	if (thread_class)
		(*jni)->DeleteLocalRef(jni, thread_class);
	return err;
}

/* A daemon thread (JVMTI's agent thread) waiting on the FIFO r names; nothing is left
 * open or started when it fails. */
jvmtiError jmt_start_watch(const struct jmt_request *r, JNIEnv *jni)
{
	char path[JMT_AGENT_WATCH_PATH_MAX];
	struct watch *w = NULL;
	jvmtiError err;
	int fd;

	memcpy(path, r->watch, r->watch_len);
	path[r->watch_len] = 0;
	fd = jmt_open_read(path);
	if (fd < 0)
		return JVMTI_ERROR_NOT_AVAILABLE;
	/* The owner holds the write end open: a read finds no data (-EAGAIN). End of file means no
	 * writer: the owner died before this open, and a FIFO opened anew never hangs up. */
	{
		char byte;

		if (jmt_read(fd, &byte, 1) == 0) {
			jmt_close(fd);
			return JVMTI_ERROR_NOT_AVAILABLE;
		}
	}
	err = (*jmt_jvmti)->Allocate(jmt_jvmti, sizeof(*w), (unsigned char **)&w);
	if (err == JVMTI_ERROR_NONE) {
		w->fd = fd;
		w->gen = ++watch_gen;
		err = jmt_run_thread(jni, "jmethodtime owner watch", watch_owner, w);
		if (err != JVMTI_ERROR_NONE)
			(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)w);
	}
	if (err != JVMTI_ERROR_NONE)
		jmt_close(fd);
	jmt_agent_state.watching = err == JVMTI_ERROR_NONE;
	return err;
}
