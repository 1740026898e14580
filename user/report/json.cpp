#include <nlohmann/json.hpp>

#include "cost/overhead.h"
#include "model/stat_keys.h"
#include "report/report.h"
#include "report/why_empty.h"
#include "report/report_json.h"

namespace jmt {

namespace {

using nlohmann::json;

// Key names are a stable contract (README); times in ns.
// With per_thread (--per-thread), also the thread's "tid" and "thread" name.
// With foreign (--foreign), also the part of the exclusive values inside untraced callees.
// [lo, hi] of every corrected time (cost/correction.h), keyed by kBoundKeys.
json bounds_json(const TimeBounds &b, bool foreign)
{
    json j = json::object();
    for (const BoundKey &k : kBoundKeys)
        if (foreign || !k.foreign)
            j[k.key] = json::array({(b.*k.field)[0], (b.*k.field)[1]});
    j["wider_than_correction"] = b.wider_than_correction;
    return j;
}

json method_json(const MethodRow &m, bool per_thread, bool per_jvm, bool foreign, bool corrected)
{
    json row = stats_json(m.stats, foreign);
    row["class"] = m.klass;
    row["method"] = m.method;
    row["signature"] = m.signature;
    row["probe_dominated"] = m.probe_dominated;
    if (per_thread) {
        row["tid"] = m.tid;
        row["vthread"] = m.vthread;
        row["thread"] = m.thread;
    }
    if (per_jvm)
        row["pid"] = m.pid;
    if (corrected)
        row["bounds"] = bounds_json(m.bounds, foreign);
    return row;
}

json work_json(const JvmWork &w)
{
    return {{"cpu_ns", w.cpu_ns}, {"io_calls", w.io_calls}, {"duration_ns", w.duration_ns}};
}

json probe_windows_json(const ProbeWindowsCost &w)
{
    return {{"entry_ns", w.entry_ns},
            {"return_ns", w.return_ns},
            {"per_event_ns", w.per_event_ns},
            {"windows", w.windows},
            {"duration_ns", w.duration_ns},
            {"gaps_edge_ns", w.gaps_edge_ns},
            {"trace_gaps_edge_ns", w.trace_gaps_edge_ns},
            {"programs_timing_ns", w.programs_timing_ns},
            {"before_trace", w.before_trace},
            {"not_measured", w.why}};
}

const char *cost_source_name(CostSource source)
{
    switch (source) {
    case CostSource::Calibrated: return "calibrated";
    case CostSource::Gaps: return "gaps";
    case CostSource::Paid: return "paid";
    case CostSource::Windows: return "windows";
    }
    return "";
}

const char *cost_top_name(CostTop top)
{
    switch (top) {
    case CostTop::JvmCpu: return "jvm_cpu";
    case CostTop::TrapAndRefill: return "trap_and_refill";
    case CostTop::Unmeasured: return "unmeasured";
    }
    return "";
}

// Every counter, zero or not (unlike the table's diagnostic lines).
json diagnostics_json(const Diagnostics &d)
{
    json j = json::object();
#define JMT_DIAG_KEY(name) j[#name] = d.name;
#define JMT_DIAG_KERNEL(NAME, name) JMT_DIAG_KEY(name)
#define JMT_DIAG_USER(name) JMT_DIAG_KEY(name)
    JMT_DIAGNOSTICS(JMT_DIAG_KERNEL, JMT_DIAG_USER)
#undef JMT_DIAG_KEY
#undef JMT_DIAG_KERNEL
#undef JMT_DIAG_USER
    return j;
}

// What the probes cost the JVM; jvm_cpu_ns and share are null when unknown
// (trap_ns and share at trap_cost: with --raw, the measured range's likely cost); jvm_cpu_early: the
// JVM's CPU time ends at the last reading before it exited.
json overhead_json(const Profile &profile)
{
    const Overhead &o = profile.overhead;
    json j = {{"events", o.events},    {"traced_events", o.traced_events}, {"trap_ns", o.trap_ns},
              {"jvm_cpu_ns", nullptr}, {"jvm_cpu_early", o.jvm_cpu_early}, {"share", nullptr}};
    if (o.jvm_cpu_ns > 0)
        j["jvm_cpu_ns"] = o.jvm_cpu_ns;
    if (o.trap_share)
        j["share"] = *o.trap_share;
    j["jvm_runq_ns"] = o.jvm_runq_ns ? json(*o.jvm_runq_ns) : json(nullptr);
    j["runq_share"] = o.runq_share ? json(*o.runq_share) : json(nullptr);
    j["saturated"] = o.saturated;
    return j;
}

}  // namespace

void write_json(std::ostream &out, const Profile &profile) { write_json(out, profile, nullptr); }

void write_json(std::ostream &out, const Profile &profile, const CallTree *paths)
{
    json methods = json::array();
    const bool per_thread = per_thread_profile(profile);
    const bool per_jvm = profile.per_jvm || per_jvm_rows(profile.methods);
    for (const MethodRow &m : sorted_rows(profile.methods, SortKey::Excl))
        methods.push_back(method_json(m, per_thread, per_jvm, profile.foreign, profile.corrected));
    const CostRange &r = profile.cost_range;
    json doc = {
        {"pid", profile.pid},
        {"duration_ns", profile.duration_ns},
        {"packages", profile.packages},
        {"class_globs", profile.class_globs},
        {"method_globs", profile.method_globs},
        {"times", profile.corrected ? "corrected" : "raw"},
        {"foreign", profile.foreign},
        {"jdk_version", profile.jdk_version},
        {"virtual_threads", profile.virtual_threads},
        {"virtual_threads_not_followed", profile.virtual_threads_not_followed},
        {"kernel_memory_bytes", profile.kernel_memory_bytes},
        {"method_ids", profile.method_ids},
        {"shared_probes", profile.shared_probes},
        {"probes",
         {{"access", profile.probes.access},
          {"classes", profile.probes.classes},
          {"unmodifiable", profile.probes.unmodifiable},
          {"settle_s", profile.probes.settle_s},
          {"settled", profile.probes.settled},
          {"hot_methods", profile.probes.hot_methods},
          {"hot_back", profile.probes.hot_back},
          {"cold", profile.probes.cold},
          {"end_methods", profile.probes.end_methods},
          {"end_back", profile.probes.end_back},
          {"end_cold", profile.probes.end_cold},
          {"end_deferred", profile.probes.end_deferred}}},
        {"probe_cost",
         {{"traced_event_ns", profile.probe_cost.traced_event_ns},
          {"rejected_event_ns", profile.probe_cost.rejected_event_ns},
          {"calibrated_traced_event_ns", profile.calibrated_cost.traced_event_ns},
          {"calibrated_rejected_event_ns", profile.calibrated_cost.rejected_event_ns},
          {"calibration_samples", profile.cost_samples},
          {"source", cost_source_name(profile.cost_source)},
          {"range",
           {{"traced_event_ns", {r.lo.traced_event_ns, r.hi.traced_event_ns}},
            {"rejected_event_ns", {r.lo.rejected_event_ns, r.hi.rejected_event_ns}},
            {"basis", r.basis == CostBasis::Gaps ? "gaps" : "calibration"},
            {"top", cost_top_name(r.top)},
            {"jvm_cpu_ns_per_event", r.jvm_ns_per_event},
            {"paid_ns_per_event", r.paid_ns_per_event},
            {"paid_not_measured", r.paid_why},
            {"paid_capped_by_widest_row", r.paid_capped}}},
          {"work", {{"untraced", work_json(profile.untraced_work)}, {"traced", work_json(profile.traced_work)}}},
          {"windows", probe_windows_json(profile.probe_windows)},
          {"gaps",
           {{"samples", profile.gaps.samples},
            {"edge_ns", profile.gaps.edge_ns},
            {"median_ns", profile.gaps.median_ns}}}}},
        {"overhead", overhead_json(profile)},
        {"methods", std::move(methods)},
        {"diagnostics", diagnostics_json(profile.diag)}};
    // Java's modified UTF-8 (and truncated names) may be invalid UTF-8: each
    // invalid byte becomes U+FFFD instead of throwing.
    doc["schema_version"] = kReportSchemaVersion;  // reports carry their source
    if (profile.sources.size() == 1) {
        doc["source"] = source_json(profile.sources[0], profile.duration_ns);
    } else if (!profile.jvm_pids.empty()) {
        // One trace of several JVMs: a source each, as a merge has (docs/fleet.md).
        doc["sources"] = json::array();
        for (const ReportSource &s : profile.sources)
            doc["sources"].push_back(source_json(s, profile.duration_ns));
        doc["jvm_pids"] = profile.jvm_pids;
    }
    if (paths)
        doc["paths"] = paths_json(*paths);
    if (profile.slower_than_ns) {
        doc["slower_than_ns"] = profile.slower_than_ns;
        doc["slow_calls"] = slow_calls_json(profile.slow_calls);
    }
    if (const std::optional<NothingTraced> why = why_nothing_traced(profile))
        doc["nothing_traced"] = {{"filter", why->filter.empty() ? json(nullptr) : json(why->filter)},
                                 {"reason", why->reason},
                                 {"methods_seen", why->methods_seen},
                                 {"rejected_classes", why->rejected_classes},
                                 {"examples", why->examples}};
    if (profile.interval) {
        doc["interval"] = profile.interval;
        doc["end_time"] = format_utc(profile.end_unix_ns);
    }
    out << doc.dump(profile.interval ? -1 : 2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace jmt
