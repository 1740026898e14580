// Profiles with known rows for the report writers' unit tests, and helpers
// that read what the writers print.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cost/correction.h"
#include "cost/overhead.h"
#include "report/report.h"

namespace report_fixture {

inline void add_method(jmt::Profile &p, const std::string &k, const std::string &m, const std::string &s,
                       uint64_t calls, uint64_t incl, uint64_t excl)
{
    jmt::MethodRow r;
    r.klass = k;
    r.method = m;
    r.signature = s;
    r.stats.calls = calls;
    r.stats.wall_incl_ns = incl;
    r.stats.wall_excl_ns = excl;
    r.stats.cpu_incl_ns = incl / 2;
    r.stats.cpu_excl_ns = excl / 2;
    r.stats.unreturned = calls / 100;
    p.methods.push_back(r);
}

// Three methods, deliberately not in exclusive-time order.
inline jmt::Profile sample()
{
    jmt::Profile p;
    p.pid = 4242;
    p.duration_ns = 2'500'000'000ULL;
    p.packages = {"org/postgresql"};
    add_method(p, "org/postgresql/core/Utils", "toInt", "(Ljava/lang/String;)I", 532551, 23311000, 23311000);
    add_method(p, "org/postgresql/jdbc/PgResultSet", "getString", "(I)Ljava/lang/String;", 1145565, 263167000,
               213991000);
    add_method(p, "org/postgresql/jdbc/PgConnection", "prepareStatement",
               "(Ljava/lang/String;)Ljava/sql/PreparedStatement;", 134422, 144412000, 41973000);
    return p;
}

inline std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        out.push_back(line);
    return out;
}

inline std::string table_of(const jmt::Profile &p, const jmt::TableOptions &opts = {})
{
    std::ostringstream out;
    jmt::write_table(out, p, opts);
    return out.str();
}

// Offset of the Method column text in a table line (npos when absent).
inline size_t method_offset(const std::string &line, const std::string &method) { return line.find(method); }

// Offset one past the end of `cell` in `line`, searching from `from`.
inline size_t end_of(const std::string &line, const std::string &cell, size_t from = 0)
{
    size_t at = line.find(cell, from);
    return at == std::string::npos ? std::string::npos : at + cell.size();
}

// Splits one CSV record (RFC 4180 quoting), without its line end.
inline std::vector<std::string> csv_fields(const std::string &line)
{
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); i++) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
            out.back() += '"', i++;
        else if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}

// --per-thread: the sample's methods split over two threads, plus one row of
// calls the kernel could not split (tid 0).
inline jmt::Profile per_thread_sample()
{
    jmt::Profile p;
    p.pid = 4242;
    p.duration_ns = 2'500'000'000ULL;
    add_method(p, "demo/Work", "run", "()V", 3000, 9000000, 6000000);
    add_method(p, "demo/Work", "run", "()V", 1000, 3000000, 2000000);
    add_method(p, "demo/Work", "step", "(I)I", 2000, 4000000, 4000000);
    add_method(p, "demo/Work", "step", "(I)I", 2000, 4000000, 4000000);
    p.methods[0].tid = 301, p.methods[0].thread = "worker-3";
    p.methods[1].tid = 101, p.methods[1].thread = "worker-1";
    p.methods[2].tid = 301, p.methods[2].thread = "worker-3";
    p.methods[3].tid = 0, p.methods[3].thread = "[not split: thread table full]";
    return p;
}

// sample() with --foreign values: getString spends 150 ms (40 ms on a CPU) of its
// exclusive time in untraced callees, prepareStatement 30 ms (29 ms), toInt none.
inline jmt::Profile foreign_sample()
{
    jmt::Profile p = sample();
    p.foreign = true;
    p.methods[1].stats.wall_foreign_ns = 150'000'000;
    p.methods[1].stats.cpu_foreign_ns = 40'000'000;
    p.methods[1].stats.events_foreign = 321;
    p.methods[1].stats.traced_foreign = 12;
    p.methods[2].stats.wall_foreign_ns = 30'000'000;
    p.methods[2].stats.cpu_foreign_ns = 29'000'000;
    return p;
}

// A CPU-bound row (elapsed = on-CPU) and one that waited: 30 ms for a CPU, 50 ms blocked.
inline jmt::Profile offcpu_sample(bool waits)
{
    jmt::Profile p;
    p.pid = 5;
    add_method(p, "a/B", "spin", "()V", 10, 100'000'000, 100'000'000);
    p.methods[0].stats.cpu_incl_ns = p.methods[0].stats.cpu_excl_ns = 100'000'000;
    if (waits) {
        add_method(p, "a/B", "flush", "()V", 10, 100'000'000, 90'000'000);
        jmt::MethodStats &s = p.methods[1].stats;
        s.cpu_incl_ns = 20'000'000;
        s.cpu_excl_ns = 10'000'000;
        s.runq_incl_ns = s.runq_excl_ns = 30'000'000;
    }
    return p;
}

}  // namespace report_fixture
