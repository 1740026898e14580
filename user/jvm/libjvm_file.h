// A libjvm.so file as jmethodtime reads it, once per file version: its probes
// (USDT notes), the HotSpot symbols of hotspot::kLibjvmSymbols, and the
// continuation functions the virtual-thread hooks attach to; and what they
// say it can do.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jvm/usdt_args.h"
#include "jvm/usdt_notes.h"
#include "util/mapped_path.h"

namespace jmt {

// One function of libjvm: its address in the file's image and its file offset
// (what a uprobe is attached at).
struct LibjvmFunction {
    uint64_t vaddr = 0;
    uint64_t file_offset = 0;
};

// A libjvm's continuation functions (JDK 21+), from its .symtab; empty lists
// for a JDK without virtual threads or a libjvm whose .symtab is stripped.
struct ContinuationHooks {
    // freeze<Config>(JavaThread*, intptr_t* sp) and, from JDK 24,
    // Config::freeze_preempt(JavaThread*, intptr_t* sp): 0 when the mounted
    // virtual thread's frames were frozen (unmounted), another freeze_result
    // when it stays (pinned). Every instantiation (one per GC barrier set and oop kind).
    std::vector<LibjvmFunction> freeze;
    // thaw<Config>(JavaThread*, int kind): kind 0 mounts a virtual thread's frames.
    std::vector<LibjvmFunction> thaw;

    bool found() const { return !freeze.empty() && !thaw.empty(); }
};

struct LibjvmInfo {
    std::vector<UsdtNote> notes;    // of the requested provider only
    uint16_t machine = 0;           // e_machine: kMachineX86_64, kMachineAarch64, ...
    uint64_t first_load_vaddr = 0;  // p_vaddr of the first PT_LOAD
    FileId file;                    // the file read (its descriptor's identity)
    // st_value of the symbols of hotspot::kLibjvmSymbols that the file has
    // (.symtab, which a stripped libjvm lacks, or .dynsym, which it keeps).
    std::map<std::string, uint64_t> symbols;
    ContinuationHooks continuation;
};

// Reads the stapsdt notes of provider, the symbols of hotspot::kLibjvmSymbols and the
// continuation functions of a libjvm.so, or of any ELF file with probes (throws
// jmt::Error), in one walk of its symbol tables; once per file version (device, inode,
// size, modification time) and provider, later calls copy that read.
LibjvmInfo inspect_libjvm(const std::string &path, const std::string &provider = "hotspot");

// True when info has hotspot method__entry and method__return notes; regs gets
// their argument registers (for info.machine) when both share one plain-register layout.
// Every site of both probes must share that layout: a plain uprobe at each
// site then reads them as the USDT spec would.
bool has_method_probes(const LibjvmInfo &info, std::optional<std::array<uint8_t, 7>> *regs);

// The registers of class__unloaded's name and its length when every site passes
// them in plain registers (the name whole 8 bytes, the length at least 2), or nullopt.
std::optional<std::array<uint8_t, 2>> class_unloaded_registers(const LibjvmInfo &info);

}  // namespace jmt
