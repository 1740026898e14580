// Formatters: Profile -> text. They never touch BPF.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "model/paths.h"
#include "model/profile.h"
#include "util/time_text.h"

namespace jmt {

struct TableOptions {
    size_t top = 20;
    SortKey sort = SortKey::Excl;
    bool offcpu = false;  // the run-queue and blocked columns even when no row has 1% of its time in them
};

// "987", "12.3K", "4.56M": three significant digits above 9999.
std::string format_count(uint64_t n);

// "950 ns", "12.3 us", "4.56 ms", "1.23 s": three significant digits.
std::string format_duration(uint64_t ns);

// A corrected time with its bounds [lo, hi] (ns): "121 us ±18%" (the larger
// distance to either end, rounded up), or "≤ 1.23 ms" when the range reaches
// 0 or more than doubles the time (the time then says little of itself).
std::string format_bounded(uint64_t ns, const uint64_t (&bounds)[2]);

// "Probe events: 2.59M (841K/s); about 2.37 s of trap time, 58% of the JVM's
// 4.10 s on a CPU": what the probes cost the JVM over the profile's window,
// with advice to keep the trace short from 25% on.
std::string overhead_text(const Profile &profile);
// How the probes were had, when they were switched on at run time: the classes, a switch onto
// code still interpreted (with the filtered-out events it cost), and a cold spot left at the
// end; empty otherwise.
std::string probes_text(const Profile &profile);

// "Run queue: the JVM's threads waited 1.25 s for a CPU against 1.78 s on one
// (41% of their runnable time); ...": the window's run-queue wait, and from
// kSaturatedRunqShare on that the CPUs were saturated (and how much of the
// JVM's CPU the traps took). Empty when the wait or the CPU time is unknown.
std::string run_queue_text(const Profile &profile);

// "JDK 25.0.5: virtual threads followed across unmounts (...)" or why they are
// not; empty for a JDK without virtual threads.
std::string virtual_threads_text(const Profile &profile);

// "Pinned: virtual threads blocked their carrier 250 times inside traced
// calls, 5.10 s in all (250 by a monitor held); inside a/B.m 250 for 5.10 s":
// blocks of a carrier whose virtual thread could not unmount, by reason, and
// the methods that held most of them; empty when there were none.
std::string pinned_text(const Profile &profile);

// "all methods", "package a/b", or "packages a/b, c/d; class *X; methods get*, set*".
std::string filter_text(const std::vector<std::string> &packages, const std::vector<std::string> &class_globs,
                        const std::vector<std::string> &method_globs);

// "Traced pid 1234 for 2.50 s: package demo" (or "Interval 3 ending ..."): the
// header's first line, without its newline.
std::string traced_text(const Profile &profile);

// Why a report has no rows (profile.methods empty): the table's line for it, without its newline
// (report/why_empty.h has the parts).
std::string nothing_traced_text(const Profile &profile);

// The DTrace-style table: header with total elapsed time, aligned columns,
// top N rows by the sort key, then the diagnostic lines that are non-zero.
void write_table(std::ostream &out, const Profile &profile, const TableOptions &opts);

// The call tree: the table's header lines, then one line per call path,
// indented by depth under its parent, children by inclusive elapsed time;
// subtrees under min_percent of the roots' inclusive elapsed total are left
// out (and counted in a last line).
void write_tree(std::ostream &out, const Profile &profile, const CallTree &tree, double min_percent);

// One JSON document with every method (not just the top N). An interval's
// report (profile.interval > 0) is one line (JSON Lines) with "interval" and "end_time".
void write_json(std::ostream &out, const Profile &profile);
// The same with "paths" (report/report_json.h) when paths is not null: the call paths collected.
void write_json(std::ostream &out, const Profile &profile, const CallTree *paths);

// RFC 4180 CSV: a header, then every method sorted by sort (columns named
// like the JSON keys). An interval's report starts each line with its
// interval and end_time, and only interval 1 has the header.
void write_csv(std::ostream &out, const Profile &profile, SortKey sort);

// One line per non-zero diagnostic counter, in words a user understands.
std::vector<std::string> diagnostic_lines(const Diagnostics &diag);

// The non-zero diagnostic counters, by name ("depth_overflow") and count, in
// the order of diagnostic_lines.
std::vector<std::pair<std::string, uint64_t>> diagnostic_counts(const Diagnostics &diag);

}  // namespace jmt
