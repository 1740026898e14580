#include "report/cost_lines.h"

#include "cost/cost_range.h"
#include "report/report.h"

namespace jmt {

namespace {

// Where the per-event cost lies, and which measurement each end rests on:
// "Per probe event 930 ns to 1.98 us (traced), ...". With corrected times,
// each time's ± is that range.
void write_cost_range(std::ostream &out, const Profile &profile)
{
    const CostRange &r = profile.cost_range;
    if (r.hi.traced_event_ns == 0)
        return;
    out << "Per probe event " << format_duration(r.lo.traced_event_ns) << " to "
        << format_duration(r.hi.traced_event_ns) << " (traced), " << format_duration(r.lo.rejected_event_ns) << " to "
        << format_duration(r.hi.rejected_event_ns) << " (filtered out): from ";
    if (r.basis == CostBasis::Gaps)
        out << "the lower edge of " << format_count(profile.gaps.samples) << " gaps between the JVM's own probe events";
    else
        out << "half the calibration (too few gaps between the JVM's own probe events to measure a trap)";
    if (r.top == CostTop::JvmCpu)
        out << " to the JVM's whole CPU time per probe event";
    else if (r.top == CostTop::TrapAndRefill)
        out << (r.basis == CostBasis::Gaps ? " to that trap" : " to the calibration") << " plus at most "
            << format_duration(refill_bound_ns(r.basis == CostBasis::Gaps ? profile.gaps.edge_ns
                                                                          : profile.calibrated_cost.traced_event_ns))
            << " of refill after it (the JVM's whole CPU time per probe event, " << format_duration(r.jvm_ns_per_event)
            << ", bounds only the average event)";
    else
        out << " to twice the likely cost (the JVM's CPU time unknown)";
    if (!profile.corrected) {
        out << "\n";
        return;
    }
    out << "; each time's \u00b1 holds its events at either end";
    if (range_wider_than_likely(r))
        out << "; wider than the " << format_duration(r.likely.traced_event_ns) << " taken out, so rows' bounds "
            << "are wider than their correction ("
            << (r.top == CostTop::JvmCpu          ? "the top, the JVM's CPU time per event, is mostly its own work"
                : r.top == CostTop::TrapAndRefill ? "the refill after a trap is assumed, not measured"
                                                  : "the JVM's CPU time is unknown")
            << (r.paid_ns_per_event || r.likely_from == CostSource::Windows
                    ? ")"
                    : "; what the JVM paid per event was not measured, see above)");
    out << "\n";
}

// What the cost taken out rests on: what the JVM paid per event, or, with why
// it was not measured, the gaps' edge plus the refill share, or the calibration.
void write_likely_source(std::ostream &out, const Profile &profile)
{
    const CostRange &r = profile.cost_range;
    const JvmWork &before = profile.untraced_work, &during = profile.traced_work;
    if (profile.cost_source == CostSource::Paid && before.io_calls && during.io_calls) {
        out << "what the JVM paid per event (" << format_duration(r.paid_ns_per_event)
            << " on average): its CPU per I/O call, " << format_duration(static_cast<uint64_t>(cpu_per_io_call(during)))
            << " traced against " << format_duration(static_cast<uint64_t>(cpu_per_io_call(before))) << " in "
            << format_duration(before.duration_ns) << " before the probes went on";
        if (r.paid_capped)
            out << ", lowered so that the widest method keeps a third of the JVM's untraced CPU per I/O call (the rise "
                   "also holds code the switch left slower)";
        return;
    }
    if (profile.cost_source == CostSource::Windows) {
        const ProbeWindowsCost &w = profile.probe_windows;
        out << "what the JVM paid per event (" << format_duration(r.paid_ns_per_event)
            << " on average: " << format_duration(w.entry_ns) << " per entry, " << format_duration(w.return_ns)
            << " per return), measured in its own code " << (w.before_trace ? "before" : "after")
            << " the trace: " << w.windows << " windows in " << format_duration(w.duration_ns)
            << " with both probes, or one of them detached";
        if (w.trace_gaps_edge_ns && w.gaps_edge_ns && w.trace_gaps_edge_ns != w.gaps_edge_ns)
            out << ", on the trace's gaps' edge (" << format_duration(w.trace_gaps_edge_ns) << "; "
                << format_duration(w.gaps_edge_ns) << " in the windows)";
        return;
    }
    if (profile.cost_source == CostSource::Gaps)
        out << "the gaps' edge plus " << format_duration(edge_plus_refill(profile.gaps.edge_ns) - profile.gaps.edge_ns)
            << " for the refill after each trap";
    else
        out << "the calibration";
    if (!r.paid_why.empty())
        out << " (what the JVM paid is not measured: " << r.paid_why << ")";
}

}  // namespace

// The probe cost behind the times: taken out, or left in with --raw.
void write_probe_cost(std::ostream &out, const Profile &profile)
{
    const ProbeCost &c = profile.probe_cost, &cal = profile.calibrated_cost;
    const std::string when = profile.cost_samples > 1
                                 ? "during the trace (" + std::to_string(profile.cost_samples) + " samples)"
                                 : "at start-up";
    if (profile.corrected) {
        out << "Times exclude the probes' own cost: " << format_duration(c.traced_event_ns) << " per traced event, "
            << format_duration(c.rejected_event_ns) << " per filtered-out event (--raw to keep it), ";
        write_likely_source(out, profile);
        out << "; calibrated " << when << " at " << format_duration(cal.traced_event_ns) << " and "
            << format_duration(cal.rejected_event_ns) << "\n";
    } else
        out << "Times as measured (--raw): each probe event inside a call adds its cost to it\n";
    write_cost_range(out, profile);
}

}  // namespace jmt
