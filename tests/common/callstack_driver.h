// Runs the kernel's frame logic (bpf/callstack.h, bpf/vthread_frames.h) in
// userspace: frames.h's hooks over plain memory, and a thread whose probe
// events come at given times. The functions run are the programs' own:
// jmt_enter, jmt_leave, jmt_foreign_event, jmt_vt_unmount, jmt_vt_mount.
// One per test file that includes it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <utility>

#include "vthread_frames.h"

// A method's totals as the kernel adds them (jmt_add_closed, jmt_add_foreign: the
// foreign values are 0 unless the thread runs as under --foreign), and its
// frames with a lost foreign segment (the kernel's foreign_lost counter).
struct Totals : jmt_method_stats {
    Totals() : jmt_method_stats{} {}
    uint64_t foreign_lost = 0;
};

// The parked frames of every virtual thread, shared by carriers as the
// programs' two maps are: by (virtual thread, index), and their headers.
struct ParkedStore {
    std::map<std::pair<uint64_t, uint32_t>, jmt_frame> frames;
    std::map<uint64_t, jmt_parked> headers;
    bool refuse = false;  // every park fails (a full map)
};

namespace callstack_driver {
struct Thread;
}

// frames.h's sink: a thread's clocks, where its closed frames go (the
// programs' maps), its counters, and the parked frames it reaches.
struct jmt_sink {
    callstack_driver::Thread *th = nullptr;
    std::map<uint32_t, Totals> totals;
    int foreign = 0;
    uint64_t dropped = 0;                   // the kernel's dropped_frames counter
    std::map<uint32_t, uint64_t> vthread;   // by method id: the virtual thread of its last closed frame
    uint64_t call_site_reads = 0;           // jmt_read_call_site's user-memory reads
    std::map<uint32_t, uint64_t> counters;  // by enum jmt_counter
    ParkedStore own_store;
    ParkedStore *store = &own_store;
    uint64_t vtid = 0;  // the virtual thread being unmounted or mounted
};

namespace callstack_driver {

// Drives the kernel's logic the way the programs do. Clocks: elapsed is the
// time an event comes at; on-CPU time is half of it, or cpu with exact_cpu;
// events count every probe event, traced ones are the kernel's own count.
struct Thread {
    std::unique_ptr<jmt_thread> t = std::make_unique<jmt_thread>();
    jmt_sink sink;
    int &foreign = sink.foreign;
    std::map<uint32_t, Totals> &totals = sink.totals;
    uint64_t sp = 1 << 20;  // each entry one byte deeper: nested calls
    uint64_t bp = 0;        // the probe function's frame pointer at an entry (0: none, no call site read)

    uint64_t now = 0;        // ns of the event under way
    uint64_t events = 0;     // probe events of the thread, counted before its clocks are read
    bool exact_cpu = false;  // on-CPU time is cpu below, not now / 2
    uint64_t cpu = 0;        // with exact_cpu: on-CPU ns so far
    uint64_t runq = 0;       // ns waited runnable for a CPU so far

    Thread() { sink.th = this; }
    Thread(const Thread &) = delete;
    Thread &operator=(const Thread &) = delete;

    jmt_clock clock() const { return {now, exact_cpu ? cpu : now / 2, events, t->traced_total, runq}; }
    static uint32_t fingerprint(uint32_t id) { return id * 7919u; }

    void rejected() { ++events; }  // an event the package filter rejects, outside --foreign's reach
    // An untraced method's entry or return at at, as the programs run it.
    void untraced_enter(uint64_t at) { untraced(at, 1); }
    void untraced_leave(uint64_t at) { untraced(at, 0); }
    void untraced(uint64_t at, int is_entry)
    {
        ++events;
        now = at;
        if (foreign)
            jmt_foreign_event(t.get(), &sink, is_entry);
    }
    // A traced method's entry at at: 0 when stored, 1 beyond JMT_MAX_DEPTH.
    int enter(uint32_t id, uint64_t at)
    {
        ++events;
        now = at;
        const uint64_t s = sp--;
        return jmt_enter(t.get(), &sink, id, fingerprint(id), s, bp, foreign);
    }
    // A traced method's return at at: false when unmatched (no frame of it open).
    bool leave(uint32_t id, uint64_t at)
    {
        ++events;
        now = at;
        return jmt_leave(t.get(), &sink, id, fingerprint(id), foreign, 0) == 0;
    }
    // Virtual thread vtid unmounts from this carrier at at (its continuation
    // entry at entry): jmt_vt_unmount's result.
    int unmount(uint64_t vtid, uint64_t entry, uint64_t at)
    {
        now = at;
        sink.vtid = vtid;
        return jmt_vt_unmount(t.get(), &sink, entry, vtid, foreign);
    }
    // Virtual thread vtid mounts on this carrier at at: false when it has nothing parked.
    bool mount(uint64_t vtid, uint64_t at)
    {
        now = at;
        sink.vtid = vtid;
        auto h = sink.store->headers.find(vtid);
        if (h == sink.store->headers.end())
            return false;
        const jmt_parked header = h->second;
        jmt_vt_mount(t.get(), &sink, &header, foreign);
        sink.store->headers.erase(vtid);
        return true;
    }
};

}  // namespace callstack_driver

static void jmt_event_clock(jmt_sink *sink, jmt_thread *, jmt_clock *now) { *now = sink->th->clock(); }

static void jmt_hook_clock(jmt_sink *sink, jmt_thread *, jmt_clock *now) { *now = sink->th->clock(); }

// Call paths are ids of their own here: the method id + 100.
static __u32 jmt_entry_path(jmt_sink *, const jmt_thread *, __u32 id) { return id + 100; }

// The kernel reads the return address at bp + 8; here each frame pointer has its own site.
static __u64 jmt_read_call_site(jmt_sink *sink, __u64 bp)
{
    sink->call_site_reads++;
    return bp ? bp + 0x1000 : 0;
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

static void jmt_count(jmt_sink *sink, __u32 c, __u64 n) { sink->counters[c] += n; }

static int jmt_park_frame(jmt_sink *sink, __u32 idx, const jmt_frame *f)
{
    if (sink->store->refuse)
        return 1;
    sink->store->frames[{sink->vtid, idx}] = *f;
    return 0;
}

static int jmt_park_header(jmt_sink *sink, const jmt_parked *p)
{
    if (sink->store->refuse)
        return 1;
    sink->store->headers[sink->vtid] = *p;
    return 0;
}

static jmt_frame *jmt_parked_frame(jmt_sink *sink, __u32 idx)
{
    auto f = sink->store->frames.find({sink->vtid, idx});
    return f == sink->store->frames.end() ? nullptr : &f->second;
}

static void jmt_forget_frame(jmt_sink *sink, __u32 idx) { sink->store->frames.erase({sink->vtid, idx}); }
