// Virtual-thread workloads (demo.vt) run under jmethodtime on a JDK of the
// tests (JDK 25: Temurin's or Debian's; JDK 21 from the root), and what every
// followed run must show: exact counts, times within 10% of the JVM's own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness.h"

namespace jmt_it {

// A JDK the workloads run on: its JVMs launched (after jmethodtime's --) and started to be attached to.
struct VtJdk {
    std::function<JavaCommand(JavaCommand)> launched, attached;
};
// jdk25(): Temurin's, or Debian's from the root.
VtJdk vt_jdk25();
// One of the root's JDKs (it must outlive the runs).
VtJdk vt_jdk(const RootJdk &root);

// demo.vt.VirtualTasks: MODE THREADS ROUNDS BLOCK_MS WORK_US.
struct Tasks {
    std::string mode;
    uint64_t threads = 8, rounds = 5, block_ms = 20, work_us = 500;
    std::vector<std::string> args(bool early) const;
    uint64_t steps() const { return threads * rounds; }
};

struct VtRun {
    nlohmann::json report;
    std::string done;
};

// jmethodtime --json --raw --package demo/vt [MORE] -o REPORT -- java [JVM_FLAGS] MAIN ARGS (launch mode).
VtRun launch_main(const VtJdk &jdk, const std::string &main, const std::vector<std::string> &args,
                  const std::vector<std::string> &more, const std::vector<std::string> &jvm_flags);
VtRun launch(const VtJdk &jdk, const Tasks &t, const std::vector<std::string> &more = {},
             const std::vector<std::string> &jvm_flags = {});
// The JVM runs with its virtual threads started and waiting inside task(); jmethodtime -p
// attaches at READY (a mid-run attach).
VtRun attach(const VtJdk &jdk, const Tasks &t, const std::vector<std::string> &jvm_flags = {});

uint64_t u64(const nlohmann::json &row, const char *key);

// What every run must show; task(): entered by every thread (launched), or before the attach.
// unmounts: each step() unmounts (false: the JDK pins it, e.g. Object.wait on JDK 21 to 23).
void expect_followed(const VtRun &r, const Tasks &t, bool launched, bool unmounts = true);

}  // namespace jmt_it
