// Where several JVMs' probes attach.
#pragma once

#include <vector>

#include "loader/tracer.h"
#include "jvm/jvm.h"

namespace jmt {

// Where several JVMs' probes attach: their libjvms, grouped by file (device
// and inode). A group attaches once for every process that maps it (whole)
// when every JVM of all_jvms with the probes on that maps the same file is a
// target, so no other JVM pays traps; otherwise once per pid.
std::vector<TracedLibjvm> attach_plan(const std::vector<JvmTarget> &targets, const std::vector<JvmTarget> &all_jvms);

}  // namespace jmt
