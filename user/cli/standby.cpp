#include "cli/standby.h"

#include <iostream>
#include <string>
#include <vector>

#include "cli/option_checks.h"
#include "cli/subcommand.h"
#include "jmethodtime.h"
#include "kernel/probe_holders.h"
#include "target/jvm.h"
#include "target/probe_switch.h"
#include "util/error.h"

namespace jmt {

namespace {

// One JVM: what standby did or why it did nothing; throws jmt::Error when it cannot.
std::string standby_one(int pid)
{
    TargetStatus st = examine_target(pid);
    JvmTarget &t = st.target;
    if (st.problem != TargetProblem::None && st.problem != TargetProblem::ProbesOff)
        throw Error(st.message, st.err);
    const std::string who = "pid " + std::to_string(pid);
    switch (t.access) {
    case ProbeAccess::Standby:
        return who + " is on standby already";
    case ProbeAccess::Switchable:
        return who + " was started without -XX:+DTraceMethodProbes: its compiled code has no probe calls, and "
                     "each trace switches them on for its classes and off again";
    case ProbeAccess::Off:
        throw Error(who + " was started without -XX:+DTraceMethodProbes, so there is nothing to put on standby; " +
                        t.off_reason.substr(t.off_reason.find(": ") + 2),
                    ENOTSUP);
    case ProbeAccess::LeftOn:
        return recover_switch(t);
    case ProbeAccess::AtStart:
        for (uint64_t addr : t.probe_addrs)
            if (breakpoint_at(pid, addr))
                throw Error("the method probes of " + who +
                                " are in use by a tracer: on standby it would see only interpreted calls; stop it "
                                "first",
                            EBUSY);
        return put_on_standby(t);
    case ProbeAccess::Missing:
    case ProbeAccess::Switched:
        break;
    }
    throw Error(st.message.empty() ? who + " cannot be put on standby" : st.message, EBUSY);
}

}  // namespace

bool is_standby_command(int argc, const char *const argv[])
{
    return argc >= 2 && std::string(argv[1]) == "standby";
}

int run_standby(int argc, const char *const argv[])
{
    CLI::App app{"jmethodtime standby: a JVM started with -XX:+DTraceMethodProbes, left as cheap as one started\n"
                 "without it: the flag is switched off and the compiled code that calls the probes is\n"
                 "deoptimized once (it compiles again without the calls). Each later trace switches the\n"
                 "probes on for its classes only, and the JVM goes back on standby at its end.\n\n"
                 "  jmethodtime standby -p PID\n"
                 "  jmethodtime standby --match REGEX\n",
                 "jmethodtime standby"};
    std::string pid_s, match;
    auto *pid_opt = app.add_option("-p,--pid", pid_s, "Process id of the JVM")->type_name("PID");
    app.add_option("--match", match, "Every JVM whose command line matches this regular expression")
        ->type_name("REGEX")
        ->excludes(pid_opt);
    if (std::optional<int> done = parse_subcommand(app, argc, argv, "standby"))
        return *done;
    std::vector<int> pids;
    try {
        if (!pid_s.empty())
            pids.push_back(static_cast<int>(checked_integer(kPidRule, pid_s)));
    } catch (const std::exception &e) {
        return usage_error("standby", e.what());
    }
    if (pid_s.empty() && match.empty())
        return usage_error("standby", "no JVM: give -p PID or --match REGEX");
    int status = 0;
    try {
        if (!match.empty())
            pids = pick_jvms(list_jvms(), match, JMT_MAX_TARGETS);
    } catch (const Error &e) {
        std::cerr << "jmethodtime standby: " << e.what() << std::endl;
        return 1;
    }
    for (int pid : pids) {
        try {
            std::cout << standby_one(pid) << std::endl;
        } catch (const Error &e) {
            std::cerr << "jmethodtime standby: " << e.what() << std::endl;
            status = 1;
        }
    }
    return status;
}

}  // namespace jmt
