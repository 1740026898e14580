// --list: the JVMs of the host as a table or JSON.
#pragma once

#include <ostream>
#include <vector>

#include "jvm/jvm.h"

namespace jmt {

// How a JVM's probes can be had (access_name): "enabled", "standby",
// "switchable", "traced", "left on", "off" or "missing".
const char *probe_state(const JvmTarget &jvm);

// One line per JVM: PID, JDK, PROBES, LIBJVM, COMMAND (the command cut at
// 100 bytes), or a sentence when there is none.
void write_jvm_table(std::ostream &out, const std::vector<JvmTarget> &jvms);

// A JSON array of objects: pid, comm, command, jdk_version, libjvm, probes (probe_state), and
// off_reason for "off".
void write_jvm_json(std::ostream &out, const std::vector<JvmTarget> &jvms);

}  // namespace jmt
