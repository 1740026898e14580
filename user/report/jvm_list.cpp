#include "report/jvm_list.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace jmt {

namespace {

constexpr size_t kCommandWidth = 100;  // bytes of the command shown in the table

}  // namespace

const char *probe_state(const JvmTarget &jvm)
{
    return access_name(jvm.has_probes ? jvm.access : ProbeAccess::Missing);
}

namespace {

// The table's PROBES cell: the state, and "+N deferred" while the last trace's compiled code waits
// for traffic to be restored.
std::string probes_cell(const JvmTarget &jvm)
{
    std::string cell = probe_state(jvm);
    if (jvm.deferred_methods)
        cell += " +" + std::to_string(jvm.deferred_methods) + " deferred";
    return cell;
}

}  // namespace

void write_jvm_table(std::ostream &out, const std::vector<JvmTarget> &jvms)
{
    if (jvms.empty()) {
        out << "No JVM on this host (no process has libjvm.so mapped).\n";
        return;
    }
    using Row = std::array<std::string, 5>;
    std::vector<Row> rows = {{"PID", "JDK", "PROBES", "LIBJVM", "COMMAND"}};
    for (const JvmTarget &j : jvms) {
        std::string command = j.command.empty() ? j.comm : j.command;
        if (command.size() > kCommandWidth)
            command = command.substr(0, kCommandWidth - 3) + "...";
        rows.push_back({std::to_string(j.pid), j.jdk_version.empty() ? "?" : j.jdk_version, probes_cell(j),
                        j.libjvm_seen, command});
    }
    std::array<size_t, 4> width{};
    for (const Row &r : rows)
        for (size_t c = 0; c < width.size(); c++)
            width[c] = std::max(width[c], r[c].size());
    for (const Row &r : rows) {
        out << std::string(width[0] - r[0].size(), ' ') << r[0];
        for (size_t c = 1; c < width.size(); c++)
            out << "  " << r[c] << std::string(width[c] - r[c].size(), ' ');
        out << "  " << r[4] << "\n";
    }
    // A footnote for each state shown.
    static const std::pair<ProbeAccess, const char *> notes[] = {
        {ProbeAccess::AtStart,
         "enabled: started with -XX:+DTraceMethodProbes, every compiled method calls the probes, traced or not; "
         "`jmethodtime standby -p PID` leaves it as cheap as without the flag until a trace switches on its classes"},
        {ProbeAccess::Standby,
         "standby: started with the flag and on standby: a trace switches on only its classes' code; another "
         "tracer (bpftrace, bcc) sees only the interpreted calls there"},
        {ProbeAccess::Switchable,
         "switchable: started without the flag (JDK 8 to 23): a trace switches the probes on for its classes and "
         "off at the end"},
        {ProbeAccess::Switched, "traced: switched on now for a jmethodtime that runs"},
        {ProbeAccess::LeftOn,
         "left on: switched on by a jmethodtime that ended without switching off; the next jmethodtime on it "
         "(a trace, or standby) switches it off"},
        {ProbeAccess::Off,
         "off: restart that JVM with -XX:+DTraceMethodProbes, or start it with jmethodtime -- java ... "
         "(jmethodtime -p PID says why it cannot be switched on)"},
        {ProbeAccess::Missing, "missing: that JDK was built without DTrace probes; use Debian's or Temurin's"},
    };
    bool first = true;
    for (const auto &[access, note] : notes) {
        const bool shown = std::any_of(jvms.begin(), jvms.end(), [access = access](const JvmTarget &j) {
            return (j.has_probes ? j.access : ProbeAccess::Missing) == access;
        });
        if (shown) {
            out << (first ? "\n" : "") << note << "\n";
            first = false;
        }
    }
    if (std::any_of(jvms.begin(), jvms.end(), [](const JvmTarget &j) { return j.deferred_methods > 0; }))
        out << (first ? "\n" : "")
            << "+N deferred: the last trace left N methods compiled with their probe calls (about 9 ns each call) "
               "in a quiet JVM, so that the next trace's traps stay narrow; they are restored once traffic comes back "
               "(10% of a CPU over 1 s)\n";
}

void write_jvm_json(std::ostream &out, const std::vector<JvmTarget> &jvms)
{
    nlohmann::json doc = nlohmann::json::array();
    for (const JvmTarget &j : jvms)
        doc.push_back({{"pid", j.pid},
                       {"comm", j.comm},
                       {"command", j.command},
                       {"jdk_version", j.jdk_version},
                       {"libjvm", j.libjvm_seen},
                       {"probes", probe_state(j)},
                       {"deferred_methods", j.deferred_methods},
                       {"off_reason", j.off_reason}});
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace jmt
