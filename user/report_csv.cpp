#include <sstream>

#include "report.h"

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

// Column names match the JSON keys (README); times in ns.
void write_csv(std::ostream &out, const Profile &profile, SortKey sort)
{
    out << "class,method,signature,calls,wall_incl_ns,wall_excl_ns,cpu_incl_ns,cpu_excl_ns,unreturned,"
           "events_incl,events_excl,traced_events_incl,traced_events_excl\r\n";
    for (const MethodRow &m : sorted_rows(profile.methods, sort)) {
        const MethodStats &s = m.stats;
        out << csv_field(m.klass) << ',' << csv_field(m.method) << ',' << csv_field(m.signature) << ','
            << s.calls << ',' << s.wall_incl_ns << ',' << s.wall_excl_ns << ',' << s.cpu_incl_ns << ','
            << s.cpu_excl_ns << ',' << s.unreturned << ',' << s.events_incl << ',' << s.events_excl << ','
            << s.traced_incl << ',' << s.traced_excl << "\r\n";
    }
}

}  // namespace jmt
