/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's retransforming (agent_internal.h): classes retransformed with
 * their bytes unchanged, so that HotSpot deoptimizes the compiled code that
 * depends on them, in batches of RETRANSFORM_BATCH (one safepoint each).
 */
#include "agent_internal.h"
#include "agent_request.h"

#define RETRANSFORM_BATCH 256

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
	err = (*jmt_jvmti)->RetransformClasses(jmt_jvmti, b->n, b->classes);
	if (err == JVMTI_ERROR_NONE) {
		jmt_agent_state.retransformed += (uint32_t)b->n;
	} else {
		/* One class spoiled the batch: take them one by one. */
		for (i = 0; i < b->n; i++) {
			err = (*jmt_jvmti)->RetransformClasses(jmt_jvmti, 1, &b->classes[i]);
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

	if ((*jmt_jvmti)->GetClassMethods(jmt_jvmti, k, &n, &methods) != JVMTI_ERROR_NONE)
		return 0;
	for (i = 0; i < n && !found; i++)
		found = jmt_set_has((const void *const *)table, methods[i]);
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)methods);
	return found;
}

static int selected(const struct jmt_selection *sel, jclass k)
{
	char *sig = NULL;
	unsigned long len;
	int take = 0;

	if (sel->all)
		return 1;
	if (sel->filter && (*jmt_jvmti)->GetClassSignature(jmt_jvmti, k, &sig, NULL) == JVMTI_ERROR_NONE) {
		len = jmt_str_len(sig);
		/* "Lpkg/Name;": a class or interface, not an array or a primitive. */
		if (len > 2 && sig[0] == 'L' && sig[len - 1] == ';')
			take = jmt_class_selected(sel->filter, sel->filter_len, sig + 1, len - 2);
		(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)sig);
	}
	if (!take && sel->methods)
		take = declares_one_of(k, sel->methods);
	return take;
}

jvmtiError jmt_retransform(const struct jmt_selection *sel)
{
	struct batch *b = NULL;
	jclass *classes = NULL;
	jint n = 0, i;
	jboolean modifiable;
	jvmtiError err;

	err = (*jmt_jvmti)->Allocate(jmt_jvmti, sizeof(*b), (unsigned char **)&b);
	if (err != JVMTI_ERROR_NONE)
		return err;
	b->n = 0;
	b->error = JVMTI_ERROR_NONE;
	err = (*jmt_jvmti)->GetLoadedClasses(jmt_jvmti, &n, &classes);
	for (i = 0; err == JVMTI_ERROR_NONE && i < n; i++) {
		if (!selected(sel, classes[i]))
			continue;
		modifiable = JNI_FALSE;
		(*jmt_jvmti)->IsModifiableClass(jmt_jvmti, classes[i], &modifiable);
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
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)classes);
	(*jmt_jvmti)->Deallocate(jmt_jvmti, (unsigned char *)b);
	return err;
}

/*
 * java/lang/Void is the class redefined: it has no code that runs, and a
 * method of a redefined class that is running (a loop that never returns)
 * can never be compiled again.
 */
jvmtiError jmt_deoptimize_all(JNIEnv *jni)
{
	jclass void_class = (*jni)->FindClass(jni, "java/lang/Void");
	jvmtiError err;

	if (!void_class) {
		(*jni)->ExceptionClear(jni);
		return JVMTI_ERROR_INVALID_CLASS;
	}
	err = (*jmt_jvmti)->RetransformClasses(jmt_jvmti, 1, &void_class);
	jmt_agent_state.retransformed += err == JVMTI_ERROR_NONE;
	(*jni)->DeleteLocalRef(jni, void_class);
	return err;
}
