// Cost of one probe event as the traced thread feels it, measured on the
// running kernel with the tool's own programs, so it can be taken out of the
// frames' times.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "profile.h"

namespace jmt {

// The tool's own jmethodtime:method__entry/method__return probes: the same
// 7 arguments as HotSpot's (thread id, class, length, method, length,
// signature, length), every one in a register.
namespace self_probe {

constexpr char kProvider[] = "jmethodtime";
constexpr char kBinary[] = "/proc/self/exe";
// The package whose class the traced calibration method has; the rejected
// calibration method is outside it.
constexpr char kTracedPackage[] = "jmtcal/traced";

// The probes' argument registers (enum jmt_reg); throws jmt::Error when the
// notes are missing or not plain registers (a build problem).
std::array<uint8_t, 7> arg_regs();

// ns per entry+return pair of the traced (or rejected) calibration method on
// this thread: the median of `batches` batches of 2000 pairs, inside an open
// traced frame and, with nested, inside an untraced call within it.
double pair_ns(bool traced_class, int batches, bool nested = false);

}  // namespace self_probe

// Fires the tool's own probes under a private instance of the same programs
// and times them against the bare probe sites: ns per event of a traced
// method and of a method the package filter rejects. per_thread: with the
// programs' --per-thread accounting (a traced return costs one more hash
// update). Throws jmt::Error when the programs cannot load or attach.
// call_paths: with per-path totals (a traced entry costs one more hash lookup).
// foreign: with --foreign's accounting; the filtered-out events are then timed
// nested inside an untraced call, as most of a JVM's are (the first and last
// of a run of untraced calls also read the clock: about 50 ns more each).
ProbeCost calibrate_probe_cost(bool verbose, bool per_thread = false, bool call_paths = false,
                               bool foreign = false);

}  // namespace jmt
