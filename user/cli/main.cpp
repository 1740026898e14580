// jmethodtime: options -> run -> exit code.
#include <iostream>

#include "cli/fleet.h"
#include "cli/options.h"
#include "cli/run.h"
#include "cli/standby.h"

int main(int argc, char **argv)
{
    if (jmt::is_fleet_command(argc, argv))  // jmethodtime merge / diff
        return jmt::run_fleet(argc, argv);
    if (jmt::is_standby_command(argc, argv))
        return jmt::run_standby(argc, argv);
    jmt::ParseOutcome parsed = jmt::parse_options(argc, argv);
    if (parsed.exit_now) {
        (parsed.exit_code ? std::cerr : std::cout) << parsed.message;
        return parsed.exit_code;
    }
    return jmt::run(parsed.options);
}
