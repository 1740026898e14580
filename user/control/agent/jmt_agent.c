/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jmethodtime's JVMTI agent, the part of the tool that runs inside the target
 * JVM (loaded through HotSpot's attach mechanism, agent_abi.h). It retransforms
 * classes with their bytes unchanged, so that HotSpot deoptimizes the compiled
 * code that depends on them; what compiles next reads DTraceMethodProbes anew.
 * It remembers the methods compiled while a trace is on, so that their code,
 * compiled with probe calls, is deoptimized again when the trace ends; and
 * the methods its deoptimizations took, until they compile again. While a
 * trace's owner lives, one thread of the agent waits for the owner's FIFO to
 * close, and puts the JVM back itself if the owner ended without doing so. A
 * trace that ends with DEFER leaves that code in place until another thread of
 * the agent sees traffic (traffic_watch.c), or the next trace takes it over.
 *
 * No Java code and no C library (the JVM may link glibc or musl): memory comes
 * from JVMTI's Allocate, locking from raw monitors, system calls from agent_sys.h.
 */
#include <jvmti.h>

#include "agent_internal.h"
#include "agent_maps.h"
#include "agent_request.h"
#include "agent_sys.h"

#define EXPORT __attribute__((visibility("default")))
/* Passes of RESTORE: the second takes the methods whose compile ended between
 * the first's look at the table and its first retransform (from JDK 17 on,
 * a compile still in flight then is discarded: the redefinition invalidates it). */
#define RESTORE_PASSES 2

EXPORT struct jmt_agent_state jmt_agent_state = {
	.magic = JMT_AGENT_MAGIC,
	.abi = JMT_AGENT_ABI_VERSION,
	.own_fd = -1,
};

jvmtiEnv *jmt_jvmti;
/* Guards tracked, hot and their counts in jmt_agent_state (taken inside jmt_op_lock, never around it). */
static jrawMonitorID tracked_lock;
/* One operation at a time: a request, or the watch's restore. Guards the mode. */
jrawMonitorID jmt_op_lock;
/* jmethodIDs compiled since ARM (open addressing, NULL: empty); NULL while not tracking. */
static jmethodID *tracked;
/* The methods the agent's last deoptimization took that have not compiled again
 * (taken out as they do: JMT_SET_TAKEN); NULL once none is left, or none was. */
static jmethodID *hot;
/* 1: tracked holds the methods a DEFER left with probe calls, which BEGIN
 * and ARM keep until a RESTORE takes them (under jmt_op_lock). */
static int carried;

/* ---- Methods compiled while tracking -------------------------------------------------------- */

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method, jint code_size, const void *code_addr,
					    jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)code_size, (void)code_addr, (void)map_length, (void)map, (void)compile_info;
	(*env)->RawMonitorEnter(env, tracked_lock);
	jmt_agent_state.compiles++;
	/* Deferred, the flag is off: what compiles now has no probe call. */
	if (tracked && jmt_agent_state.mode != JMT_AGENT_DEFERRED)
		jmt_set_add((const void **)tracked, method, &jmt_agent_state.tracked,
			    &jmt_agent_state.tracked_overflow);
	if (hot && jmt_set_take((const void **)hot, method))
		jmt_agent_state.hot_back++;
	(*env)->RawMonitorExit(env, tracked_lock);
}

static jvmtiError set_tracking(int on)
{
	return (*jmt_jvmti)
		->SetEventNotificationMode(jmt_jvmti, on ? JVMTI_ENABLE : JVMTI_DISABLE,
					   JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
}

/* Compiles are watched while a table wants them: tracked, or hot methods still to come back. */
static jvmtiError update_tracking(void)
{
	jmethodID *done = NULL;
	int on;

	(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
	if (hot && jmt_agent_state.hot_back >= jmt_agent_state.hot) {
		done = hot;
		hot = NULL;
	}
	on = tracked || hot;
	(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)done);
	return set_tracking(on);
}

/* The tracked table becomes the hot one: the methods a deoptimization by cause
 * (an enum jmt_agent_op) is about to take. Tracking stops (tracked NULL). */
static void hot_from_tracked(uint32_t cause)
{
	jmethodID *old;

	(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
	old = hot;
	hot = tracked;
	tracked = NULL;
	jmt_agent_state.hot = jmt_agent_state.tracked;
	jmt_agent_state.hot_back = 0;
	jmt_agent_state.hot_cause = cause;
	jmt_agent_state.tracked = 0;
	(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
	carried = 0; /* all of it deoptimized next */
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)old);
}

/* Empties the table (allocating it first) under the lock; a carried one is kept. */
static jvmtiError clear_tracked(void)
{
	jvmtiError err = JVMTI_ERROR_NONE;
	unsigned char *mem = (unsigned char *)tracked;

	if (mem && carried)
		return JVMTI_ERROR_NONE;
	if (!mem)
		err = (*jmt_jvmti)->Allocate(jmt_jvmti, (jlong)sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX, &mem);
	if (err != JVMTI_ERROR_NONE)
		return err;
	(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
	memset(mem, 0, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
	tracked = (jmethodID *)mem;
	jmt_agent_state.tracked = 0;
	jmt_agent_state.tracked_overflow = 0;
	(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
	return JVMTI_ERROR_NONE;
}

/* Stops remembering: the table is freed under the lock, so no callback still writes it. */
static void drop_tracked(void)
{
	jmethodID *table;

	(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
	table = tracked;
	tracked = NULL;
	jmt_agent_state.tracked = 0;
	(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)table);
}

/* ---- The operations --------------------------------------------------------------------------- */

/* The methods with compiled code now (CompiledMethodLoad replayed by
 * GenerateEvents, on this thread) in a fresh tracked table. */
static jvmtiError track_compiled_now(void)
{
	jvmtiError err = clear_tracked();

	if (err == JVMTI_ERROR_NONE)
		err = set_tracking(1);
	if (err == JVMTI_ERROR_NONE)
		err = (*jmt_jvmti)->GenerateEvents(jmt_jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	return err;
}

/* The one-time deoptimization of all compiled code, its methods remembered as hot. */
static jvmtiError deoptimize_all_remembered(JNIEnv *jni, uint32_t cause)
{
	jvmtiError err = track_compiled_now();

	if (err != JVMTI_ERROR_NONE)
		return err;
	hot_from_tracked(cause);
	return jmt_deoptimize_all(jni);
}

/* The watch first: when it cannot start, nothing else changes. */
static jvmtiError op_begin(const struct jmt_request *r, JNIEnv *jni)
{
	jvmtiError err = r->watch ? jmt_start_watch(r, jni) : JVMTI_ERROR_NONE;

	if (err == JVMTI_ERROR_NONE && r->deopt)
		err = deoptimize_all_remembered(jni, JMT_OP_BEGIN);
	if (err == JVMTI_ERROR_NONE)
		err = clear_tracked();
	if (err == JVMTI_ERROR_NONE)
		err = set_tracking(1);
	if (err != JVMTI_ERROR_NONE)
		return err;
	jmt_agent_state.compiles = 0;
	jmt_agent_state.owner_pid = r->owner_pid;
	jmt_agent_state.owner_start = r->owner_start;
	jmt_agent_state.flag_addr = r->flag_addr;
	if (jmt_agent_state.mode != JMT_AGENT_SWITCHED)
		jmt_agent_state.mode = JMT_AGENT_TRACKING;
	return JVMTI_ERROR_NONE;
}

static jvmtiError op_switch(const struct jmt_request *r)
{
	struct jmt_selection sel = {0};

	if (!tracked)
		return JVMTI_ERROR_NOT_AVAILABLE; /* BEGIN first */
	jmt_agent_state.mode = JMT_AGENT_SWITCHED;
	sel.filter = r->classes;
	sel.filter_len = r->classes_len;
	sel.count_unmodifiable = 1;
	return jmt_retransform(&sel);
}

/* A copy of methods (a table holding count methods) becomes the hot table, for cause. */
static void remember_hot(const jmethodID *methods, uint32_t count, uint32_t cause)
{
	jmethodID *copy = NULL;
	jmethodID *old;

	if ((*jmt_jvmti)
		    ->Allocate(jmt_jvmti, (jlong)sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX, (unsigned char **)&copy) !=
	    JVMTI_ERROR_NONE)
		return;
	memcpy(copy, methods, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
	(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
	old = hot;
	hot = copy;
	jmt_agent_state.hot = count;
	jmt_agent_state.hot_back = 0;
	jmt_agent_state.hot_cause = cause;
	(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)old);
}

/*
 * The classes of every method compiled since ARM (with the probe calls, as the
 * flag was on; the switch's other methods run interpreted and compile without).
 * A compile that ends during a pass is remembered for the next; when the table
 * overflowed, every class. The first pass's methods are remembered as hot.
 */
jvmtiError jmt_op_restore(void)
{
	struct jmt_selection sel = {0};
	jmethodID *snapshot = NULL;
	jvmtiError err;
	uint32_t count;
	int pass;

	if (!tracked)
		return JVMTI_ERROR_NONE; /* nothing switched */
	err = (*jmt_jvmti)
		      ->Allocate(jmt_jvmti, (jlong)sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX,
				 (unsigned char **)&snapshot);
	for (pass = 0; err == JVMTI_ERROR_NONE && pass < RESTORE_PASSES; pass++) {
		(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
		memcpy(snapshot, tracked, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
		sel.all = jmt_agent_state.tracked_overflow;
		if (pass > 0 && !jmt_agent_state.tracked && !sel.all) {
			(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
			break;
		}
		count = jmt_agent_state.tracked;
		memset(tracked, 0, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
		jmt_agent_state.tracked = 0;
		jmt_agent_state.tracked_overflow = 0;
		(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
		if (pass == 0)
			remember_hot(snapshot, count, JMT_OP_RESTORE);
		sel.methods = snapshot;
		err = jmt_retransform(&sel);
	}
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)snapshot);
	if (err != JVMTI_ERROR_NONE)
		return err;
	drop_tracked();
	err = update_tracking();
	if (err != JVMTI_ERROR_NONE)
		return err;
	jmt_agent_state.owner_pid = 0;
	jmt_agent_state.owner_start = 0;
	jmt_agent_state.mode = jmt_agent_state.standby ? JMT_AGENT_STANDBY : JMT_AGENT_IDLE;
	carried = 0;
	return JVMTI_ERROR_NONE;
}

/* RESTORE put off until the traffic watch sees traffic (agent_abi.h); without a watch, now. */
static jvmtiError op_defer(JNIEnv *jni)
{
	if (!tracked)
		return JVMTI_ERROR_NONE; /* nothing switched */
	jmt_agent_state.mode = JMT_AGENT_DEFERRED;
	carried = 1;
	jmt_agent_state.deferred = jmt_agent_state.tracked;
	jmt_agent_state.owner_pid = 0;
	jmt_agent_state.owner_start = 0;
	if (jmt_start_traffic_watch(jni) == JVMTI_ERROR_NONE)
		return JVMTI_ERROR_NONE;
	return jmt_op_restore();
}

/*
 * The classes of every method compiled now (CompiledMethodLoad replayed by
 * GenerateEvents), retransformed: their code compiles again, reading the flag
 * anew. Classes without compiled code need nothing.
 */
static jvmtiError retransform_compiled(void)
{
	struct jmt_selection sel = {0};
	jvmtiError err = track_compiled_now();

	set_tracking(0);
	if (err == JVMTI_ERROR_NONE) {
		/* No callback writes the table once the lock was taken after disabling. */
		(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, tracked_lock);
		sel.all = jmt_agent_state.tracked_overflow;
		(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, tracked_lock);
		sel.methods = tracked;
		err = jmt_retransform(&sel);
	}
	if (err == JVMTI_ERROR_NONE)
		hot_from_tracked(JMT_OP_STANDBY);
	drop_tracked();
	return err;
}

/* The flag is off (the tool wrote it): no compiled code keeps a probe call; the
 * methods deoptimized are remembered as hot until they compile again. */
static jvmtiError op_standby(const struct jmt_request *r, JNIEnv *jni)
{
	jvmtiError err = r->deopt ? deoptimize_all_remembered(jni, JMT_OP_STANDBY) : retransform_compiled();

	if (err == JVMTI_ERROR_NONE)
		err = update_tracking();
	if (err == JVMTI_ERROR_NONE) {
		jmt_agent_state.standby = 1;
		jmt_agent_state.mode = JMT_AGENT_STANDBY;
	}
	return err;
}

/* ---- Entry ------------------------------------------------------------------------------------ */

static int init_jvmti(JavaVM *vm)
{
	jvmtiCapabilities caps;
	jvmtiEventCallbacks callbacks;

	if (jmt_jvmti)
		return JMT_AGENT_OK;
	if ((*vm)->GetEnv(vm, (void **)&jmt_jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jmt_jvmti) {
		jmt_jvmti = NULL;
		return JMT_AGENT_NO_JVMTI;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_retransform_classes = 1;
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jmt_jvmti)->AddCapabilities(jmt_jvmti, &caps) != JVMTI_ERROR_NONE)
		return JMT_AGENT_NO_CAPABILITY;
	memset(&callbacks, 0, sizeof(callbacks));
	callbacks.CompiledMethodLoad = on_compiled_method_load;
	if ((*jmt_jvmti)->SetEventCallbacks(jmt_jvmti, &callbacks, (jint)sizeof(callbacks)) != JVMTI_ERROR_NONE ||
	    (*jmt_jvmti)->CreateRawMonitor(jmt_jvmti, "jmethodtime tracked methods", &tracked_lock) !=
		    JVMTI_ERROR_NONE ||
	    (*jmt_jvmti)->CreateRawMonitor(jmt_jvmti, "jmethodtime operations", &jmt_op_lock) != JVMTI_ERROR_NONE)
		return JMT_AGENT_JVMTI_FAILED;
	return JMT_AGENT_OK;
}

/* A live owner (its watch waits on the FIFO it holds open) keeps the JVM: BEGIN and STANDBY are
 * refused, and every other request that does not carry its owner= token. Liveness is the watch's,
 * so a tracer in another pid namespace cannot mistake a live owner for a dead one. */
static int held_by_another(const struct jmt_request *r)
{
	if (!jmt_agent_state.watching)
		return 0;
	if (r->op == JMT_OP_BEGIN || r->op == JMT_OP_STANDBY)
		return 1;
	return r->owner_pid != jmt_agent_state.owner_pid || r->owner_start != jmt_agent_state.owner_start;
}

/* The first request that names the agent's file opens it for the JVM's life (own_fd). */
static void keep_own_file(const struct jmt_request *r)
{
	char path[JMT_AGENT_WATCH_PATH_MAX];
	int fd;

	if (!r->self || jmt_agent_state.own_fd >= 0)
		return;
	memcpy(path, r->self, r->self_len);
	path[r->self_len] = 0;
	fd = jmt_open_read(path);
	if (fd >= 0)
		jmt_agent_state.own_fd = fd;
}

EXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	struct jmt_request r;
	JNIEnv *jni = NULL;
	jvmtiError err = JVMTI_ERROR_NONE;
	int code;

	(void)reserved;
	if (jmt_parse_request(options, &r) != 0) {
		code = JMT_AGENT_BAD_REQUEST;
		goto out;
	}
	jmt_agent_state.last_op = r.op;
	keep_own_file(&r);
	/* The byte the owner's watch may store 0 to is checked before anything changes. */
	if (r.op == JMT_OP_BEGIN && r.flag_addr && !jmt_flag_address_ok(r.flag_addr)) {
		code = JMT_AGENT_BAD_FLAG;
		goto out;
	}
	code = init_jvmti(vm);
	if (code == JMT_AGENT_OK && (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
		code = JMT_AGENT_NO_JVMTI;
	if (code != JMT_AGENT_OK)
		goto out;
	(*jmt_jvmti)->RawMonitorEnter(jmt_jvmti, jmt_op_lock);
	jmt_agent_state.retransformed = 0;
	jmt_agent_state.unmodifiable = 0;
	jmt_agent_state.failed = 0;
	jmt_agent_state.last_jvmti_error = 0;
	if (held_by_another(&r)) {
		jmt_agent_state.last_error = JMT_AGENT_BUSY;
		jmt_agent_state.requests++;
		(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, jmt_op_lock);
		return JNI_OK;
	}
	switch (r.op) {
	case JMT_OP_BEGIN: err = op_begin(&r, jni); break;
	case JMT_OP_ARM: err = clear_tracked(); break;
	case JMT_OP_SWITCH: err = op_switch(&r); break;
	case JMT_OP_RESTORE: err = jmt_op_restore(); break;
	case JMT_OP_STANDBY: err = op_standby(&r, jni); break;
	case JMT_OP_DEFER: err = op_defer(jni); break;
	}
	if (err != JVMTI_ERROR_NONE) {
		jmt_agent_state.last_jvmti_error = (int32_t)err;
		code = JMT_AGENT_JVMTI_FAILED;
	}
	jmt_agent_state.last_error = code;
	jmt_agent_state.requests++;
	(*jmt_jvmti)->RawMonitorExit(jmt_jvmti, jmt_op_lock);
	return JNI_OK;
out:
	jmt_agent_state.last_error = code;
	jmt_agent_state.requests++;
	/* Always 0 to HotSpot: a non-zero return unloads the library, and with it
	 * the state and the tracked methods; the tool reads last_error instead. */
	return JNI_OK;
}
