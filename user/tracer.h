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

namespace jmt {

struct TracerConfig {
    int pid = 0;
    std::string libjvm;                             // path usable from here
    std::vector<std::string> packages;              // JVM form
    std::optional<std::array<uint8_t, 7>> arg_regs; // fast argument registers, if plain
    bool verbose = false;
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
    struct SkelDeleter {
        void operator()(jmethodtime_bpf *skel) const;
    };
    struct LinkDeleter {
        void operator()(bpf_link *link) const;
    };
    void attach_usdt(const char *probe, int prog_index);

    TracerConfig config_;
    std::unique_ptr<jmethodtime_bpf, SkelDeleter> skel_;
    std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links_;
};

}  // namespace jmt
