#include <sstream>

#include "model/stat_keys.h"
#include "report/report.h"

namespace jmt {

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string &s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace

// Column names match the JSON keys (model/stat_keys.h); times in ns. With
// --foreign, the foreign columns follow probe_dominated; split by thread, the
// thread's tid and name follow; corrected times end with <key>_lo and
// <key>_hi, the bounds; then with histograms the latency percentiles (p50_ns ... max_ns).
void write_csv(std::ostream &out, const Profile &profile, SortKey sort)
{
    const bool per_thread = per_thread_profile(profile);
    const bool per_jvm = profile.per_jvm || per_jvm_rows(profile.methods);
    const std::string interval =
        profile.interval ? std::to_string(profile.interval) + "," + format_utc(profile.end_unix_ns) + "," : "";
    auto keys = [&](bool foreign, auto &&each) {
        for (const StatKey &k : kStatKeys)
            if (k.foreign == foreign)
                each(k);
    };
    if (profile.interval <= 1) {
        out << (profile.interval ? "interval,end_time," : "") << "class,method,signature";
        keys(false, [&](const StatKey &k) { out << ',' << k.key; });
        out << ",probe_dominated";
        if (profile.foreign)
            keys(true, [&](const StatKey &k) { out << ',' << k.key; });
        out << (per_thread ? ",tid,thread" : "") << (per_jvm ? ",pid" : "");
    }
    if (profile.interval <= 1 && profile.corrected) {
        for (const BoundKey &k : kBoundKeys)
            if (profile.foreign || !k.foreign)
                out << ',' << k.key << "_lo," << k.key << "_hi";
    }
    if (profile.interval <= 1)
        out << (profile.latency ? ",p50_ns,p90_ns,p99_ns,p999_ns,min_ns,max_ns" : "") << "\r\n";
    for (const MethodRow &m : sorted_rows(profile.methods, sort)) {
        const MethodStats &s = m.stats;
        out << interval << csv_field(m.klass) << ',' << csv_field(m.method) << ',' << csv_field(m.signature);
        keys(false, [&](const StatKey &k) { out << ',' << stat_value(s, k); });
        out << ',' << (m.probe_dominated ? 1 : 0);
        if (profile.foreign)
            keys(true, [&](const StatKey &k) { out << ',' << stat_value(s, k); });
        if (per_thread)
            out << ',' << m.tid << ',' << csv_field(m.thread);
        if (per_jvm)
            out << ',' << m.pid;
        if (profile.corrected) {
            for (const BoundKey &k : kBoundKeys)
                if (profile.foreign || !k.foreign)
                    out << ',' << (m.bounds.*k.field)[0] << ',' << (m.bounds.*k.field)[1];
        }
        // The latency columns, empty for a row without a histogram (--no-latency).
        if (profile.latency) {
            const LatencySummary p = summarize(s.latency);
            if (s.latency.empty())
                out << ",,,,,,";
            else
                out << ',' << p.p50_ns << ',' << p.p90_ns << ',' << p.p99_ns << ',' << p.p999_ns << ',' << p.min_ns
                    << ',' << p.max_ns;
        }
        out << "\r\n";
    }
}

}  // namespace jmt
