/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * jmethodtime's JVMTI agent, the part of the tool that runs inside the target
 * JVM (loaded through HotSpot's attach mechanism, agent_abi.h). It retransforms
 * classes with their bytes unchanged, so that HotSpot deoptimizes the compiled
 * code that depends on them; what compiles next reads DTraceMethodProbes anew.
 * It remembers the methods compiled while a trace is on, so that their code,
 * compiled with probe calls, is deoptimized again when the trace ends.
 *
 * No Java code and no C library (the JVM may link glibc or musl): memory comes
 * from JVMTI's Allocate, locking from a raw monitor.
 */
#include <jvmti.h>

#include "agent_abi.h"
#include "agent_request.h"

#define EXPORT __attribute__((visibility("default")))

/* Classes per RetransformClasses call: one safepoint each. */
#define RETRANSFORM_BATCH 256
/* Passes of RESTORE: the second takes the methods whose compile ended between
 * the first's look at the table and its first retransform (from JDK 17 on,
 * a compile still in flight then is discarded: the redefinition invalidates it). */
#define RESTORE_PASSES 2

EXPORT struct jmt_agent_state jmt_agent_state = {
	.magic = JMT_AGENT_MAGIC,
	.abi = JMT_AGENT_ABI_VERSION,
};

static jvmtiEnv *jvmti;
static jrawMonitorID tracked_lock;
/* jmethodIDs compiled since ARM (open addressing, NULL: empty); NULL while not tracking. */
static jmethodID *tracked;

/* The compiler may call these for copies and clears; volatile keeps them from calling themselves. */
void *memset(void *dst, int c, unsigned long n)
{
	volatile unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

void *memcpy(void *dst, const void *src, unsigned long n)
{
	volatile unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

/* ---- Methods compiled while tracking -------------------------------------------------------- */

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length,
					    const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)code_size, (void)code_addr, (void)map_length, (void)map, (void)compile_info;
	(*env)->RawMonitorEnter(env, tracked_lock);
	jmt_agent_state.compiles++;
	if (tracked)
		jmt_set_add((const void **)tracked, method, &jmt_agent_state.tracked,
			    &jmt_agent_state.tracked_overflow);
	(*env)->RawMonitorExit(env, tracked_lock);
}

static jvmtiError set_tracking(int on)
{
	return (*jvmti)->SetEventNotificationMode(jvmti, on ? JVMTI_ENABLE : JVMTI_DISABLE,
						   JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
}

/* Empties the table (allocating it first) under the lock. */
static jvmtiError clear_tracked(void)
{
	jvmtiError err = JVMTI_ERROR_NONE;
	unsigned char *mem = (unsigned char *)tracked;

	if (!mem)
		err = (*jvmti)->Allocate(jvmti, (jlong)sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX, &mem);
	if (err != JVMTI_ERROR_NONE)
		return err;
	(*jvmti)->RawMonitorEnter(jvmti, tracked_lock);
	memset(mem, 0, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
	tracked = (jmethodID *)mem;
	jmt_agent_state.tracked = 0;
	jmt_agent_state.tracked_overflow = 0;
	(*jvmti)->RawMonitorExit(jvmti, tracked_lock);
	return JVMTI_ERROR_NONE;
}

/* Stops remembering: the table is freed under the lock, so no callback still writes it. */
static void drop_tracked(void)
{
	jmethodID *table;

	(*jvmti)->RawMonitorEnter(jvmti, tracked_lock);
	table = tracked;
	tracked = NULL;
	jmt_agent_state.tracked = 0;
	(*jvmti)->RawMonitorExit(jvmti, tracked_lock);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)table);
}

/* ---- Retransforming --------------------------------------------------------------------------- */

/* What selects a class for retransforming; a class is taken when any part says so. */
struct selection {
	int all;
	const char *filter; /* class filter, or NULL */
	unsigned long filter_len;
	const jmethodID *methods; /* a table of jmethodIDs: the classes declaring one, or NULL */
	int count_unmodifiable;
};

struct batch {
	jclass classes[RETRANSFORM_BATCH];
	int n;
	jvmtiError error; /* the last failure, JVMTI_ERROR_NONE */
};

static void flush(struct batch *b)
{
	jvmtiError err;
	int i;

	if (!b->n)
		return;
	err = (*jvmti)->RetransformClasses(jvmti, b->n, b->classes);
	if (err == JVMTI_ERROR_NONE) {
		jmt_agent_state.retransformed += (uint32_t)b->n;
	} else {
		/* One class spoiled the batch: take them one by one. */
		for (i = 0; i < b->n; i++) {
			err = (*jvmti)->RetransformClasses(jvmti, 1, &b->classes[i]);
			if (err == JVMTI_ERROR_NONE) {
				jmt_agent_state.retransformed++;
			} else {
				jmt_agent_state.failed++;
				b->error = err;
			}
		}
	}
	b->n = 0;
}

static int declares_one_of(jclass k, const jmethodID *table)
{
	jmethodID *methods = NULL;
	jint n = 0, i;
	int found = 0;

	if ((*jvmti)->GetClassMethods(jvmti, k, &n, &methods) != JVMTI_ERROR_NONE)
		return 0;
	for (i = 0; i < n && !found; i++)
		found = jmt_set_has((const void *const *)table, methods[i]);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
	return found;
}

static int selected(const struct selection *sel, jclass k)
{
	char *sig = NULL;
	unsigned long len;
	int take = 0;

	if (sel->all)
		return 1;
	if (sel->filter && (*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) == JVMTI_ERROR_NONE) {
		len = jmt_str_len(sig);
		/* "Lpkg/Name;": a class or interface, not an array or a primitive. */
		if (len > 2 && sig[0] == 'L' && sig[len - 1] == ';')
			take = jmt_class_selected(sel->filter, sel->filter_len, sig + 1, len - 2);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	if (!take && sel->methods)
		take = declares_one_of(k, sel->methods);
	return take;
}

/* Retransforms the loaded classes sel takes; the counts go to jmt_agent_state. */
static jvmtiError retransform(const struct selection *sel)
{
	struct batch *b = NULL;
	jclass *classes = NULL;
	jint n = 0, i;
	jboolean modifiable;
	jvmtiError err;

	err = (*jvmti)->Allocate(jvmti, sizeof(*b), (unsigned char **)&b);
	if (err != JVMTI_ERROR_NONE)
		return err;
	b->n = 0;
	b->error = JVMTI_ERROR_NONE;
	err = (*jvmti)->GetLoadedClasses(jvmti, &n, &classes);
	for (i = 0; err == JVMTI_ERROR_NONE && i < n; i++) {
		if (!selected(sel, classes[i]))
			continue;
		modifiable = JNI_FALSE;
		(*jvmti)->IsModifiableClass(jvmti, classes[i], &modifiable);
		if (!modifiable) {
			jmt_agent_state.unmodifiable += sel->count_unmodifiable ? 1 : 0;
			continue;
		}
		b->classes[b->n++] = classes[i];
		if (b->n == RETRANSFORM_BATCH)
			flush(b);
	}
	if (err == JVMTI_ERROR_NONE)
		flush(b);
	if (err == JVMTI_ERROR_NONE && b->error != JVMTI_ERROR_NONE)
		jmt_agent_state.last_jvmti_error = b->error;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)b);
	return err;
}

/*
 * Where HotSpot has not recorded every dependency yet (JDK 22 and older, no
 * agent from the start), the first redefinition deoptimizes all compiled code.
 * java/lang/Void is the class redefined: it has no code that runs, and a
 * method of a redefined class that is running (a loop that never returns)
 * can never be compiled again.
 */
static jvmtiError deoptimize_all(JNIEnv *jni)
{
	jclass void_class = (*jni)->FindClass(jni, "java/lang/Void");
	jvmtiError err;

	if (!void_class) {
		(*jni)->ExceptionClear(jni);
		return JVMTI_ERROR_INVALID_CLASS;
	}
	err = (*jvmti)->RetransformClasses(jvmti, 1, &void_class);
	jmt_agent_state.retransformed += err == JVMTI_ERROR_NONE;
	(*jni)->DeleteLocalRef(jni, void_class);
	return err;
}

/* ---- The operations --------------------------------------------------------------------------- */

static jvmtiError op_begin(const struct jmt_request *r, JNIEnv *jni)
{
	jvmtiError err = clear_tracked();

	if (err == JVMTI_ERROR_NONE)
		err = set_tracking(1);
	if (err != JVMTI_ERROR_NONE)
		return err;
	jmt_agent_state.compiles = 0;
	jmt_agent_state.owner_pid = r->owner_pid;
	jmt_agent_state.owner_start = r->owner_start;
	if (jmt_agent_state.mode != JMT_AGENT_SWITCHED)
		jmt_agent_state.mode = JMT_AGENT_TRACKING;
	return r->deopt ? deoptimize_all(jni) : JVMTI_ERROR_NONE;
}

static jvmtiError op_switch(const struct jmt_request *r)
{
	struct selection sel = { 0 };
	unsigned long keep = r->classes_len < JMT_AGENT_FILTER_MAX ? r->classes_len : JMT_AGENT_FILTER_MAX;

	if (!tracked)
		return JVMTI_ERROR_NOT_AVAILABLE; /* BEGIN first */
	memcpy(jmt_agent_state.filter, r->classes, keep);
	jmt_agent_state.filter_len = (uint32_t)keep;
	jmt_agent_state.mode = JMT_AGENT_SWITCHED;
	sel.filter = r->classes;
	sel.filter_len = r->classes_len;
	sel.count_unmodifiable = 1;
	return retransform(&sel);
}

/*
 * The switch's classes and those of every method compiled meanwhile (with the
 * probe calls, as the flag was on). A compile that ends during a pass is
 * remembered for the next; when the table overflowed, every class.
 */
static jvmtiError op_restore(void)
{
	struct selection sel = { 0 };
	jmethodID *snapshot = NULL;
	jvmtiError err;
	int pass;

	if (!tracked)
		return JVMTI_ERROR_NONE; /* nothing switched */
	err = (*jvmti)->Allocate(jvmti, (jlong)sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX,
				 (unsigned char **)&snapshot);
	for (pass = 0; err == JVMTI_ERROR_NONE && pass < RESTORE_PASSES; pass++) {
		(*jvmti)->RawMonitorEnter(jvmti, tracked_lock);
		memcpy(snapshot, tracked, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
		sel.all = jmt_agent_state.tracked_overflow;
		if (pass > 0 && !jmt_agent_state.tracked && !sel.all) {
			(*jvmti)->RawMonitorExit(jvmti, tracked_lock);
			break;
		}
		memset(tracked, 0, sizeof(jmethodID) * JMT_AGENT_TRACKED_MAX);
		jmt_agent_state.tracked = 0;
		jmt_agent_state.tracked_overflow = 0;
		(*jvmti)->RawMonitorExit(jvmti, tracked_lock);
		sel.methods = snapshot;
		sel.filter = pass == 0 && jmt_agent_state.filter_len ? jmt_agent_state.filter : NULL;
		sel.filter_len = jmt_agent_state.filter_len;
		err = retransform(&sel);
	}
	if (err == JVMTI_ERROR_NONE)
		err = set_tracking(0);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)snapshot);
	if (err != JVMTI_ERROR_NONE)
		return err;
	drop_tracked();
	jmt_agent_state.filter_len = 0;
	jmt_agent_state.owner_pid = 0;
	jmt_agent_state.owner_start = 0;
	jmt_agent_state.mode = jmt_agent_state.standby ? JMT_AGENT_STANDBY : JMT_AGENT_IDLE;
	return JVMTI_ERROR_NONE;
}

/*
 * The classes of every method compiled now (CompiledMethodLoad replayed by
 * GenerateEvents), retransformed: their code compiles again, reading the flag
 * anew. Classes without compiled code need nothing.
 */
static jvmtiError retransform_compiled(void)
{
	struct selection sel = { 0 };
	jvmtiError err = clear_tracked();

	if (err == JVMTI_ERROR_NONE)
		err = set_tracking(1);
	if (err == JVMTI_ERROR_NONE)
		err = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	set_tracking(0);
	if (err == JVMTI_ERROR_NONE) {
		/* No callback writes the table once the lock was taken after disabling. */
		(*jvmti)->RawMonitorEnter(jvmti, tracked_lock);
		sel.all = jmt_agent_state.tracked_overflow;
		(*jvmti)->RawMonitorExit(jvmti, tracked_lock);
		sel.methods = tracked;
		err = retransform(&sel);
	}
	drop_tracked();
	return err;
}

/* The flag is off (the tool wrote it): no compiled code keeps a probe call. */
static jvmtiError op_standby(const struct jmt_request *r, JNIEnv *jni)
{
	jvmtiError err = r->deopt ? deoptimize_all(jni) : retransform_compiled();

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

	if (jvmti)
		return JMT_AGENT_OK;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
		jvmti = NULL;
		return JMT_AGENT_NO_JVMTI;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_retransform_classes = 1;
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		return JMT_AGENT_NO_CAPABILITY;
	memset(&callbacks, 0, sizeof(callbacks));
	callbacks.CompiledMethodLoad = on_compiled_method_load;
	if ((*jvmti)->SetEventCallbacks(jvmti, &callbacks, (jint)sizeof(callbacks)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->CreateRawMonitor(jvmti, "jmethodtime tracked methods", &tracked_lock) != JVMTI_ERROR_NONE)
		return JMT_AGENT_JVMTI_FAILED;
	return JMT_AGENT_OK;
}

EXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	struct jmt_request r;
	JNIEnv *jni = NULL;
	jvmtiError err = JVMTI_ERROR_NONE;
	int code;

	(void)reserved;
	jmt_agent_state.requests++;
	jmt_agent_state.retransformed = 0;
	jmt_agent_state.unmodifiable = 0;
	jmt_agent_state.failed = 0;
	jmt_agent_state.last_jvmti_error = 0;
	if (jmt_parse_request(options, &r) != 0) {
		code = JMT_AGENT_BAD_REQUEST;
		goto out;
	}
	jmt_agent_state.last_op = r.op;
	code = init_jvmti(vm);
	if (code == JMT_AGENT_OK && (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
		code = JMT_AGENT_NO_JVMTI;
	if (code != JMT_AGENT_OK)
		goto out;
	switch (r.op) {
	case JMT_OP_BEGIN:
		err = op_begin(&r, jni);
		break;
	case JMT_OP_ARM:
		err = clear_tracked();
		break;
	case JMT_OP_SWITCH:
		err = op_switch(&r);
		break;
	case JMT_OP_RESTORE:
		err = op_restore();
		break;
	case JMT_OP_STANDBY:
		err = op_standby(&r, jni);
		break;
	}
	if (err != JVMTI_ERROR_NONE) {
		jmt_agent_state.last_jvmti_error = (int32_t)err;
		code = JMT_AGENT_JVMTI_FAILED;
	}
out:
	jmt_agent_state.last_error = code;
	/* Always 0 to HotSpot: a non-zero return unloads the library, and with it
	 * the state and the tracked methods; the tool reads last_error instead. */
	return JNI_OK;
}
