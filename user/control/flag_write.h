// Writing HotSpot's DTraceMethodProbes byte into a running JVM, only where it can be that flag:
// inside a writable mapping of the JVM's own libjvm.so, holding 0 or 1 now. The write goes
// through process_vm_writev, which respects the page's protection (/proc/PID/mem would write
// code or read-only data as well).
#pragma once

#include <cstdint>
#include <string>

namespace jmt {

class ProcessHandle;

// Why addr cannot be the flag in a process whose /proc/PID/maps is maps_text; "" when it can: it
// lies in a writable mapping of a libjvm.so (its data), or in the anonymous writable mapping
// right after one (the rest of its .bss).
std::string flag_address_problem(const std::string &maps_text, uint64_t addr);

// Writes value (0 or 1) at addr in jvm after flag_address_problem and a read of the byte (0 or 1)
// pass, and checks jvm was alive after the write's way in was open. Throws jmt::Error in one line
// naming the cause (nothing is written then).
void write_flag(const ProcessHandle &jvm, uint64_t addr, uint8_t value);

}  // namespace jmt
