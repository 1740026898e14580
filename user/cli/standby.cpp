#include "cli/standby.h"

#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/option_checks.h"
#include "cli/subcommand.h"
#include "jmethodtime.h"
#include "loader/probe_holders.h"
#include "jvm/jvm.h"
#include "util/lifecycle.h"
#include "control/probe_switch.h"
#include "util/error.h"

namespace jmt {

namespace {

// The wait for a JVM's code to compile again: a status line each second on a terminal.
SwitchHooks standby_hooks()
{
    SwitchHooks hooks;
    if (isatty(STDERR_FILENO))
        hooks.progress = [](const std::string &line) { std::cerr << "\r" << line << "\033[K" << std::flush; };
    hooks.wait = [](uint64_t deadline) {
        const uint64_t now = monotonic_ns();
        if (deadline > now)
            usleep(static_cast<useconds_t>((deadline - now) / 1000));
        return true;
    };
    return hooks;
}

// One JVM: what standby did or why it did nothing; throws jmt::Error when it cannot.
std::string standby_one(int pid, double settle_s)
{
    TargetStatus st = examine_target(pid);
    JvmTarget &t = st.target;
    if (st.problem != TargetProblem::None && st.problem != TargetProblem::ProbesOff)
        throw Error(st.message, st.err);
    const std::string who = "pid " + std::to_string(pid);
    switch (t.access) {
    case ProbeAccess::Standby:
        if (const std::optional<LoadedAgent> agent = find_agent(pid);
            agent && agent->state.hot_back < agent->state.hot) {
            const CompileWait w = wait_for_compiles(pid, standby_hooks(), settle_s, "after it");
            return who + " is on standby already; " + std::to_string(w.hot.back) + " of its " +
                   std::to_string(w.hot.methods) + " hot methods compiled again since " + w.hot.cause_text() +
                   (w.hot.cold() ? ": a trace before the rest do traps about as widely as the flag at start" : "");
        }
        return who + " is on standby already";
    case ProbeAccess::Switchable: return put_on_standby(t, standby_hooks(), settle_s);
    case ProbeAccess::Off:
        throw Error(who + " was started without -XX:+DTraceMethodProbes, so there is nothing to put on standby; " +
                        t.off_reason.substr(t.off_reason.find(": ") + 2),
                    ENOTSUP);
    case ProbeAccess::LeftOn: return recover_switch(t);
    case ProbeAccess::AtStart:
        for (uint64_t addr : t.probe_addrs)
            if (breakpoint_at(pid, addr))
                throw Error("the method probes of " + who +
                                " are in use by a tracer: on standby it would see only interpreted calls; stop it "
                                "first",
                            EBUSY);
        return put_on_standby(t, standby_hooks(), settle_s);
    case ProbeAccess::Missing:
    case ProbeAccess::Switched: break;
    }
    throw Error(st.message.empty() ? who + " cannot be put on standby" : st.message, EBUSY);
}

}  // namespace

bool is_standby_command(int argc, const char *const argv[]) { return argc >= 2 && std::string(argv[1]) == "standby"; }

int run_standby(int argc, const char *const argv[])
{
    CLI::App app{"jmethodtime standby: a JVM started with -XX:+DTraceMethodProbes, left as cheap as one started\n"
                 "without it: the flag is switched off and the compiled code that calls the probes is\n"
                 "deoptimized once (it compiles again without the calls). Each later trace switches the\n"
                 "probes on for its classes only, and the JVM goes back on standby at its end. A JVM\n"
                 "started without the flag (JDK 8 to 22) takes the one-time deoptimization of all its\n"
                 "compiled code that the first switch would take. Either way standby then waits, under\n"
                 "the traffic of the moment, for the JVM's hot code to compile again, and says when the\n"
                 "JVM is ready: later traces deoptimize only their own classes, quiet or not.\n\n"
                 "  jmethodtime standby -p PID [--settle S]\n"
                 "  jmethodtime standby --match REGEX [--settle S]\n",
                 "jmethodtime standby"};
    std::string pid_s, match, settle;
    auto *pid_opt = app.add_option("-p,--pid", pid_s, "Process id of the JVM")->type_name("PID");
    app.add_option("--settle", settle,
                   "Wait at most S seconds for the JVM's hot code to compile again (default 60; 0: not at all)")
        ->type_name("S");
    app.add_option("--match", match, "Every JVM whose command line matches this regular expression")
        ->type_name("REGEX")
        ->excludes(pid_opt);
    if (std::optional<int> done = parse_subcommand(app, argc, argv, "standby"))
        return *done;
    std::vector<int> pids;
    double settle_s = 60;
    try {
        if (!pid_s.empty())
            pids.push_back(static_cast<int>(checked_integer(kPidRule, pid_s)));
        if (!settle.empty())
            settle_s = checked_number(kSettleRule, settle);
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
            const std::string said = standby_one(pid, settle_s);
            if (isatty(STDERR_FILENO))
                std::cerr << "\r\033[K" << std::flush;
            std::cout << said << std::endl;
        } catch (const Error &e) {
            std::cerr << "jmethodtime standby: " << e.what() << std::endl;
            status = 1;
        }
    }
    return status;
}

}  // namespace jmt
