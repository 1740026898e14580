// --pprof FILE.pb.gz: the call paths as a gzipped pprof profile
// (perftools.profiles.Profile, github.com/google/pprof proto/profile.proto),
// for go tool pprof, Pyroscope, Parca and other pprof readers.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "model/paths.h"

namespace jmt {

// Writes tree as gzip-framed pprof bytes to out (open it in binary mode).
//  - sample types, in order: calls/count, wall/nanoseconds, cpu/nanoseconds;
//    default_sample_type "wall"; period_type calls/count with period 1
//    (every call counted, nothing sampled);
//  - one Sample per path with a non-zero exclusive value: location_id the
//    path's frames leaf first, value {calls, wall_excl_ns, cpu_excl_ns}.
//    Exclusive per path, so pprof's "flat" of a method is its exclusive total
//    and its "cum" its inclusive total (what a flame graph's widths show);
//  - one Function and one Location (line 0) per distinct (class, method,
//    signature): name frame_label(), system_name "class.method+signature" in
//    JVM form, filename the outer class's guessed source path
//    ("org/postgresql/jdbc/PgResultSet.java"). The truncated node is "[truncated]".
// Values above INT64_MAX are clamped to it. Throws jmt::Error when zlib fails;
// out's state reports write errors.
//
// time_nanos is the trace's start (ns since the epoch), as Go's runtime/pprof
// records it: the first overload takes now - duration_ns.
void write_pprof(std::ostream &out, const CallTree &tree, uint64_t duration_ns);
void write_pprof(std::ostream &out, const CallTree &tree, uint64_t duration_ns, int64_t time_nanos);

// Several trees in one profile, each sample labelled with its tree's
// string labels (key, value), e.g. {"host", "web17"}, {"pid", "4242"}: go tool
// pprof merges such files and -tagfocus=host=web17 shows one host.
struct PprofSource {
    const CallTree *tree = nullptr;
    std::vector<std::pair<std::string, std::string>> labels;
};
void write_pprof(std::ostream &out, const std::vector<PprofSource> &sources, uint64_t duration_ns, int64_t time_nanos);
// The same with time_nanos now - duration_ns.
void write_pprof(std::ostream &out, const std::vector<PprofSource> &sources, uint64_t duration_ns);

}  // namespace jmt
