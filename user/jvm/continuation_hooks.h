// Where a libjvm.so freezes and thaws virtual threads' continuations (JDK 21+),
// read from the file: the functions the tracer hooks. (What the hooks read a
// virtual thread's id through is the running JVM's: vthread_layout.h.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Reads them from libjvm's file; throws jmt::Error when it is not an ELF file.
ContinuationHooks find_continuation_hooks(const std::string &libjvm);

}  // namespace jmt
