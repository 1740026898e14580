// Formatters: Profile -> text. They never touch BPF.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "profile.h"

namespace jmt {

struct TableOptions {
    size_t top = 20;
    SortKey sort = SortKey::Excl;
};

// "950 ns", "12.3 us", "4.56 ms", "1.23 s": three significant digits.
std::string format_duration(uint64_t ns);

// The seed-style table: header with total elapsed time, aligned columns,
// top N rows by the sort key, then the diagnostic lines that are non-zero.
void write_table(std::ostream &out, const Profile &profile, const TableOptions &opts);

// One JSON document with every method (not just the top N).
void write_json(std::ostream &out, const Profile &profile);

// RFC 4180 CSV: a header, then every method sorted by sort (columns named
// like the JSON keys).
void write_csv(std::ostream &out, const Profile &profile, SortKey sort);

// One line per non-zero diagnostic counter, in words a user understands.
std::vector<std::string> diagnostic_lines(const Diagnostics &diag);

}  // namespace jmt
