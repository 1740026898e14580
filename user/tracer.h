// Tracer lifecycle: open -> set rodata -> load -> attach -> snapshot -> detach.
// RAII: destroying the Tracer detaches every probe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profile.h"

struct jmethodtime_bpf;
struct bpf_link;
struct bpf_program;

namespace jmt {

struct SkeletonDeleter {
    void operator()(jmethodtime_bpf *skel) const;
};
struct LinkDeleter {
    void operator()(bpf_link *link) const;
};
using SkeletonPtr = std::unique_ptr<jmethodtime_bpf, SkeletonDeleter>;
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

// What the BPF programs are told before load (rodata).
struct ProgramConfig {
    int pid = 0;                                    // threads of this process are traced
    std::vector<std::string> packages;              // JVM form; empty = all
    std::optional<std::array<uint8_t, 7>> arg_regs; // fast argument registers, if plain
    bool verbose = false;                           // libbpf's log on stderr
};
// The kernel's preemption model (user/preemption.h) picks atomic or plain adds
// for the per-CPU totals at load time.

// Opens and loads the programs (nothing attached); throws jmt::Error.
SkeletonPtr load_programs(const ProgramConfig &config);

// Attaches prog to provider:probe of binary for pid; throws jmt::Error.
LinkPtr attach_usdt(bpf_program *prog, int pid, const std::string &binary, const char *provider,
                    const char *probe);

struct TracerConfig {
    ProgramConfig programs;  // programs.pid is the JVM
    std::string libjvm;      // path usable from here
};

struct Snapshot {
    std::vector<MethodRow> methods;  // calls > 0
    Diagnostics diag;
};

class Tracer {
public:
    // Loads and attaches; throws jmt::Error naming the cause and the fix.
    explicit Tracer(const TracerConfig &config);
    ~Tracer();
    Tracer(const Tracer &) = delete;
    Tracer &operator=(const Tracer &) = delete;

    // Totals since attach, read from the kernel maps.
    Snapshot snapshot() const;

private:
    TracerConfig config_;
    SkeletonPtr skel_;
    std::vector<LinkPtr> links_;
};

}  // namespace jmt
