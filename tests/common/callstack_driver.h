// Drives the kernel's frame arithmetic (bpf/callstack.h) in userspace the way
// jmethodtime.bpf.c does: the hooks callstack.h needs, and a thread that
// enters and leaves methods at given times. One per test file that includes it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "callstack.h"

// A method's totals as the kernel adds them (jmt_add_closed, jmt_add_foreign: the
// foreign values are 0 unless the thread runs as under --foreign), and its
// frames with a lost foreign segment (the kernel's foreign_lost counter).
struct Totals : jmt_method_stats {
    Totals() : jmt_method_stats{} {}
    uint64_t foreign_lost = 0;
};

// callstack.h's sink: where the kernel's return path puts closed frames (the
// BPF programs' maps), here a map of totals by method id.
struct jmt_sink {
    std::map<uint32_t, Totals> totals;
    int foreign = 0;
    uint64_t dropped = 0;  // the kernel's dropped_frames counter
    std::map<uint32_t, uint64_t> vthread;  // by method id: the virtual thread of its last closed frame
    uint64_t call_site_reads = 0;          // jmt_read_call_site's user-memory reads
};

// The kernel reads the return address at bp + 8; here each frame pointer has its own site.
static __u64 jmt_read_call_site(jmt_sink *sink, __u64 bp)
{
    sink->call_site_reads++;
    return bp + 0x1000;
}

static void jmt_account(jmt_sink *sink, jmt_thread *, const jmt_closed *c, const int)
{
    Totals &s = sink->totals[c->id];
    jmt_add_closed(&s, c);
    if (sink->foreign)
        jmt_add_foreign(&s, c);
    s.foreign_lost += c->foreign_lost;
    sink->vthread[c->id] = c->vthread;
}

static void jmt_dropped(jmt_sink *sink, jmt_thread *t, const jmt_closed *c)
{
    jmt_account(sink, t, c, 0);
    sink->dropped++;
}

namespace callstack_driver {

// Drives callstack.h the way jmethodtime.bpf.c does, with cpu time = wall / 2;
// foreign: as under --foreign.
struct Thread {
    std::unique_ptr<jmt_thread> t = std::make_unique<jmt_thread>();
    jmt_sink sink;
    int &foreign = sink.foreign;
    std::map<uint32_t, Totals> &totals = sink.totals;
    uint64_t sp = 1 << 20;  // each entry one byte deeper: nested calls

    uint64_t events = 0;  // probe events of the thread, counted before its clocks are read
    uint64_t traced = 0;  // of those, events of traced methods (all of them here, unless rejected())
    bool exact_cpu = false;  // on-CPU time is cpu below, not now / 2
    uint64_t cpu = 0;        // with exact_cpu: on-CPU ns so far
    uint64_t runq = 0;       // ns waited runnable for a CPU so far
    jmt_clock clock(uint64_t now)
    {
        ++events;
        ++traced;
        return {now, exact_cpu ? cpu : now / 2, events, traced, runq};
    }
    void rejected() { ++events; }  // an event the package filter rejects
    // Mirror foreign_event: an untraced method's entry or return at now.
    void untraced_enter(uint64_t now)
    {
        rejected();
        if (foreign && jmt_foreign_enter(t.get())) {
            const jmt_clock c{now, now / 2, events, traced};
            jmt_foreign_open(t.get(), &c);
        }
    }
    void untraced_leave(uint64_t now)
    {
        rejected();
        if (foreign && jmt_foreign_leave(t.get())) {
            const jmt_clock c{now, now / 2, events, traced};
            jmt_foreign_close(t.get(), &c);
        }
    }
    static uint32_t fingerprint(uint32_t id) { return id * 7919u; }
    int enter(uint32_t id, uint64_t now)
    {
        jmt_clock c = clock(now);
        return jmt_push(t.get(), id, fingerprint(id), &c, sp--, 0, id + 100, foreign);
    }
    // As handle_return: no frame open is an unmatched return; otherwise the
    // kernel's own return path (top frame, unstored frame, find + drop + close).
    bool leave(uint32_t id, uint64_t now)
    {
        const jmt_clock now_clock = clock(now);
        if (t->depth == 0)
            return false;
        return jmt_return(t.get(), id, fingerprint(id), &now_clock, &sink, foreign, 0) == 0;
    }
};

}  // namespace callstack_driver
