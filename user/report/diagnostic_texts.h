// What each diagnostic counter a user is told about means: its text follows
// "name: count " in a report's diagnostic lines, with n in place of "{}". The
// kernel's counters first, in JMT_DIAGNOSTICS's order, then userspace's; a
// counter without a text here is shown in JSON only.
#pragma once

#include <cstdint>

#include "model/profile.h"

namespace jmt {

struct DiagnosticText {
    const char *name;
    uint64_t Diagnostics::*count;
    uint64_t n;
    const char *text;
};

#define JMT_TEXT(name, n, text)                                                                                        \
    {                                                                                                                  \
#name, &Diagnostics::name, n, text                                                                             \
    }
inline const DiagnosticText kDiagnosticTexts[] = {
    JMT_TEXT(depth_overflow, JMT_MAX_DEPTH,
             "calls ran deeper than the {}-frame stack bound; they are counted, their time is charged to "
             "the deepest recorded caller"),
    JMT_TEXT(unmatched_returns, 0, "returns of traced methods entered before tracing started were ignored"),
    JMT_TEXT(dropped_frames, 0,
             "calls ended without a return event (an exception thrown out of a C1-inlined method); they are "
             "counted, their own time is charged to their caller"),
    JMT_TEXT(thread_state_fail, 0,
             "events were ignored: per-thread state could not be allocated (kernel memory); some calls are "
             "missing"),
    JMT_TEXT(method_table_full, 0,
             "times a method was not traced because the method table was full; its calls are missing (narrow "
             "--package)"),
    JMT_TEXT(names_fail, 0,
             "method names could not be read in the kernel; events of a class not yet readable were skipped, "
             "other names were read from the JVM's memory instead"),
    JMT_TEXT(arg_fail, 0, "probe events had unreadable arguments and were ignored"),
    JMT_TEXT(glob_budget_out, JMT_GLOB_STEPS,
             "methods were not traced because a --class or --method pattern took more than {} steps to "
             "match their name; use fewer '*' or a literal part"),
    JMT_TEXT(thread_rows_full, JMT_MAX_THREAD_ROWS,
             "calls could not be split by thread (the per-thread table of {} rows was full); they are in "
             "the row of thread \"[not split: thread table full]\""),
    JMT_TEXT(paths_full, JMT_MAX_PATHS,
             "frames were counted under the call path [truncated] (the table of {} call paths was full); "
             "per-method totals are exact"),
    JMT_TEXT(cpu_clamped, 0,
             "frames measured more on-CPU time than elapsed time (a clock error seen under heavy load); "
             "their on-CPU time was cut to their elapsed time"),
    JMT_TEXT(switch_unseen, 0,
             "context switches of traced threads were not seen by the kernel program; the on-CPU clock of "
             "each such thread restarted at its next probe event (on-CPU time may be a little low)"),
    JMT_TEXT(foreign_lost, 0,
             "calls had an untraced callee whose return never fired (an exception out of a C1-inlined "
             "method): their time after it counts as foreign"),
    JMT_TEXT(scratch_busy, JMT_SCRATCH_LEVELS,
             "first sights of methods were deferred to a later event because {} probe programs were "
             "preempted inside each other on one CPU; those events were not traced"),
    JMT_TEXT(totals_not_ready, JMT_TOTALS_OVERFLOW,
             "calls were not counted: more than {} new methods or call paths came before jmethodtime could "
             "add kernel memory for their totals; trace a narrower --package"),
    JMT_TEXT(vt_frames_lost, JMT_MAX_PARKED_FRAMES,
             "traced frames of unmounting virtual threads could not be parked (more than {} parked frames, "
             "or the virtual thread's id was unreadable); they are counted, their own time is charged to "
             "their caller"),
    JMT_TEXT(vt_unfollowed, 0,
             "unmounts or mounts of virtual threads were not followed (the JVM's thread layout was not "
             "read yet, or the header says why); frames open across them stayed on their carrier thread"),
    JMT_TEXT(vt_layout_mismatch, 0,
             "unmounts or mounts of virtual threads read a continuation entry outside the carrier's stack "
             "(the JVM's thread layout is not the one jmethodtime read); frames open across them stayed "
             "on their carrier thread"),
    JMT_TEXT(slow_calls_lost, JMT_SLOW_RING_BYTES >> 20,
             "calls over --slower-than were not recorded: the {} MB ring buffer was full (jmethodtime reads it "
             "every 100 ms); they are in the counts and histograms"),
    JMT_TEXT(returns_unjudged, 0,
             "returns of methods entered before tracing started were ignored (this kernel's programs make no "
             "method's verdict at a return)"),
    JMT_TEXT(truncated_names, 0,
             "names were longer than the kernel buffer (or unreadable) and could not be completed from the "
             "JVM's memory; they are shown truncated, ending in \"...\""),
};
#undef JMT_TEXT

}  // namespace jmt
