#include "target/jvm_list.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace jmt {

namespace {

constexpr size_t kCommandWidth = 100;  // bytes of the command shown in the table

}  // namespace

const char *probe_state(const JvmTarget &jvm)
{
    if (!jvm.has_probes)
        return "missing";
    return jvm.probes_on ? "enabled" : "off";
}

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
        rows.push_back({std::to_string(j.pid), j.jdk_version.empty() ? "?" : j.jdk_version, probe_state(j),
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
    bool off = std::any_of(jvms.begin(), jvms.end(), [](const JvmTarget &j) { return j.has_probes && !j.probes_on; });
    bool missing = std::any_of(jvms.begin(), jvms.end(), [](const JvmTarget &j) { return !j.has_probes; });
    if (off)
        out << "\noff: restart that JVM with -XX:+DTraceMethodProbes, or start it with jmethodtime -- java ...\n";
    if (missing)
        out << (off ? "" : "\n") << "missing: that JDK was built without DTrace probes; use Debian's or Temurin's\n";
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
                       {"probes", probe_state(j)}});
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace jmt
