// Reading /proc and files: whole files, a process's CPU time, its memory,
// and this process's capabilities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jmt {

// Capability bits from the CapEff line of /proc/self/status text.
uint64_t effective_capabilities(const std::string &status_text);

// "pid 1234": a process, named in a message.
std::string who(int pid);

// Reads len bytes of the target's memory at addr; empty on failure.
std::string read_target_memory(int pid, uint64_t addr, size_t len);

// The whole file at path; empty when it cannot be read.
std::string read_file(const std::string &path);

// The fields of a /proc/PID/stat text after the command (comm, field 2), which may
// hold spaces and parentheses: they count from its last ')', so that field n, as
// proc(5) numbers them from 1, is at [n - 3] (the state at [0]). Empty when the
// text has no ')'.
std::vector<std::string> stat_fields(const std::string &stat_text);

// utime + stime (clock ticks) of a /proc/PID/stat text: every thread of the
// process, the dead ones included; nullopt when the text does not parse.
std::optional<uint64_t> stat_cpu_ticks(const std::string &stat_text);

// CPU time (ns, user and system, every thread) of pid so far; nullopt when
// /proc/PID/stat cannot be read (the process is gone). Tick resolution
// (10 ms at USER_HZ 100). Also readable for a zombie: its final total.
std::optional<uint64_t> process_cpu_ns(int pid);

// Field 22 of /proc/PID/stat: pid's start time in clock ticks after boot; nullopt
// when there is no such process, or only its zombie (it has ended).
std::optional<uint64_t> process_start_ticks(int pid);

// One line of /proc/PID/maps: "start-end perms offset dev inode path".
struct MapsEntry {
    uint64_t start = 0, end = 0;
    std::string perms;
    uint64_t offset = 0;  // in the file
    std::string dev;      // "fe:01"
    uint64_t inode = 0;
    std::string path;      // without " (deleted)"; empty for anonymous memory
    bool deleted = false;  // the file was removed since it was mapped
};

// The lines of a /proc/PID/maps text that parse (paths may hold spaces).
std::vector<MapsEntry> parse_maps(const std::string &maps_text);

}  // namespace jmt
