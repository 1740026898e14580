/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The contract between jmethodtime and its JVMTI agent (jmt_agent.c), which
 * runs inside the target JVM. Plain C, fixed-width types: the agent is built
 * without a C library, the tool includes this from C++.
 *
 * Requests travel as the options string of HotSpot's attach "load" command:
 * "op=NAME;owner=PID.START;flag=ADDR;watch=PATH;classes=FILTER" (fields
 * separated by ';', which no filter or path may contain). The agent answers with Agent_OnAttach's return code
 * (JMT_AGENT_OK or an enum jmt_agent_error), and keeps the details and its
 * mode in the exported jmt_agent_state, which the tool reads through
 * /proc/PID/mem: the state outlives a tool that was killed.
 */
#ifndef JMT_AGENT_ABI_H
#define JMT_AGENT_ABI_H

#include <stdint.h>

#define JMT_AGENT_MAGIC 0x6a6d742d6167656eULL /* "jmt-agen" */
#define JMT_AGENT_ABI_VERSION 4
#define JMT_AGENT_STATE_SYMBOL "jmt_agent_state"
/* HotSpot refuses an attach argument longer than 1024 bytes (JDK 8 to 25). */
#define JMT_AGENT_OPTIONS_MAX 1024
/* Bytes of class filter a switch takes (the agent keeps none: RESTORE takes the classes of the
 * methods compiled since ARM). */
#define JMT_AGENT_FILTER_MAX 1000
/* Methods compiled while tracking, remembered to deoptimize them again. */
#define JMT_AGENT_TRACKED_MAX 65536
/* Bytes of the owner's FIFO path, its NUL included. */
#define JMT_AGENT_WATCH_PATH_MAX 256
/* Traffic, to the agent's traffic watch: the JVM's CPU time (/proc/self/stat, clock ticks of
 * 10 ms) over the last JMT_AGENT_TRAFFIC_WINDOW_MS reaches JMT_AGENT_TRAFFIC_PERMILLE of one CPU,
 * read every JMT_AGENT_TRAFFIC_POLL_MS. */
#define JMT_AGENT_TRAFFIC_WINDOW_MS 1000
#define JMT_AGENT_TRAFFIC_POLL_MS 250
#define JMT_AGENT_TRAFFIC_PERMILLE 100

/* What the JVM's compiled code holds, as the agent left it. */
enum jmt_agent_mode {
    JMT_AGENT_IDLE = 0,     /* untouched since the JVM started, or put back */
    JMT_AGENT_TRACKING = 1, /* a trace is preparing: compiles are remembered */
    JMT_AGENT_SWITCHED = 2, /* the probes are on for the owner's classes */
    JMT_AGENT_STANDBY = 3,  /* flag off, compiled code deoptimized once: no probe calls */
    /* Flag off; the code compiled while the last trace was on keeps its probe calls (a call
     * each, no trap without a tracer) until the traffic watch sees traffic and restores, or
     * the next trace takes them over. */
    JMT_AGENT_DEFERRED = 4,
};

enum jmt_agent_op {
    JMT_OP_NONE = 0,
    /* Remember compiles from now (mode TRACKING); "deopt=1" also takes the
	 * one-time full deoptimization (a class retransformed with the flag off).
	 * "flag=ADDR" (decimal, the JVM's address of DTraceMethodProbes) and
	 * "watch=PATH" (a FIFO the owner holds open for writing, as the JVM sees
	 * it): a thread of the agent waits for the FIFO's last writer to close
	 * and, if the owner had not restored, writes 0 to the flag and restores. */
    JMT_OP_BEGIN = 1,
    /* Forget the compiles remembered so far (sent just before the flag goes on). */
    JMT_OP_ARM = 2,
    /* Retransform the loaded classes the filter matches (mode SWITCHED). */
    JMT_OP_SWITCH = 3,
    /* Retransform every class of a method compiled since ARM (those have the
	 * probe calls), stop remembering (mode IDLE, or STANDBY when it was). */
    JMT_OP_RESTORE = 4,
    /* Retransform every class with compiled code (mode STANDBY): no compiled
	 * code keeps a probe call. "deopt=1": one class, which deoptimizes all. */
    JMT_OP_STANDBY = 5,
    /* RESTORE put off until traffic (mode DEFERRED): the methods compiled since ARM stay
     * remembered, nothing is retransformed, and a thread of the agent
     * (the traffic watch) restores once the JVM's CPU time says traffic is back. A BEGIN
     * before then carries them into its trace (its RESTORE or DEFER takes them too). */
    JMT_OP_DEFER = 6,
};

/* Agent_OnAttach's return codes besides 0. */
enum jmt_agent_error {
    JMT_AGENT_OK = 0,
    JMT_AGENT_BAD_REQUEST = 1,   /* options that do not parse */
    JMT_AGENT_NO_JVMTI = 2,      /* GetEnv failed */
    JMT_AGENT_NO_CAPABILITY = 3, /* can_retransform_classes refused */
    JMT_AGENT_JVMTI_FAILED = 4,  /* a JVMTI call failed: last_jvmti_error says which */
    JMT_AGENT_BUSY = 5,          /* a live owner (its watch open) holds the JVM, and the request is not its: refused */
    JMT_AGENT_BAD_FLAG = 6,      /* BEGIN's flag= not in libjvm's writable data, or not 0 or 1 there */
};

/* Exported, read by the tool. Every field is written by the agent only. */
struct jmt_agent_state {
    uint64_t magic;            /* JMT_AGENT_MAGIC */
    uint32_t abi;              /* JMT_AGENT_ABI_VERSION */
    uint32_t requests;         /* requests answered */
    uint32_t mode;             /* enum jmt_agent_mode */
    uint32_t standby;          /* 1: the JVM was put on standby (RESTORE returns to it) */
    uint32_t last_op;          /* enum jmt_agent_op */
    int32_t last_error;        /* enum jmt_agent_error of the last request */
    int32_t last_jvmti_error;  /* jvmtiError of the failed call, 0 */
    uint32_t retransformed;    /* classes the last request retransformed */
    uint32_t unmodifiable;     /* classes it matched but may not retransform (hidden, arrays) */
    uint32_t failed;           /* classes whose retransform failed */
    uint64_t compiles;         /* methods compiled since BEGIN (CompiledMethodLoad events) */
    uint32_t tracked;          /* distinct methods remembered since ARM */
    uint32_t tracked_overflow; /* 1: more than JMT_AGENT_TRACKED_MAX: RESTORE takes every class */
    int32_t owner_pid;         /* the jmethodtime that sent BEGIN, as this host's pid */
    uint64_t owner_start;      /* its start time (clock ticks after boot, /proc/PID/stat field 22) */
    /* The methods that had compiled code when the agent last deoptimized it
	 * (the full deoptimization, standby's, or a RESTORE's classes), and how
	 * many of them have compiled again since (CompiledMethodLoad). */
    uint32_t hot;             /* distinct methods deoptimized then */
    uint32_t hot_back;        /* of them, compiled again since */
    uint32_t hot_cause;       /* enum jmt_agent_op of that deoptimization (BEGIN, RESTORE, STANDBY) */
    uint32_t watching;        /* 1: a thread waits for the owner's FIFO to close */
    uint64_t flag_addr;       /* the JVM's address of DTraceMethodProbes, from BEGIN; 0: unknown */
    uint32_t owner_gone;      /* restores the agent made itself, its owner gone without one */
    int32_t owner_gone_error; /* jvmtiError of the last of them, 0 */
    /* The agent's own file, open for the JVM's life from the first request that named it
     * (self=); -1: none. Later loads name /proc/self/fd/N, this same file, which every dynamic
     * linker finds among its objects (musl's by device and inode: a copy placed anew would be a
     * second agent with a state of its own). */
    int32_t own_fd;
    /* DEFER: the methods it left with probe calls, the traffic watch's restores, and the
     * jvmtiError of the last of them, 0. */
    uint32_t deferred;
    uint32_t traffic_restores;
    int32_t traffic_restore_error;
};

#endif /* JMT_AGENT_ABI_H */
