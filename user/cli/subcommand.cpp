#include "cli/subcommand.h"

#include <iostream>

namespace jmt {

int usage_error(const std::string &cmd, const std::string &what)
{
    std::string m = what;
    for (char &c : m)
        if (c == '\n')
            c = ' ';
    std::cerr << "jmethodtime " << cmd << ": " << m << " (jmethodtime " << cmd << " --help lists the options)\n";
    return 2;
}

std::optional<int> parse_subcommand(CLI::App &app, int argc, const char *const argv[], const char *cmd)
{
    try {
        app.parse(argc - 1, argv + 1);
    } catch (const CLI::ParseError &e) {
        if (e.get_exit_code() == 0) {
            app.exit(e, std::cout, std::cerr);
            return 0;
        }
        return usage_error(cmd, e.what());
    }
    return std::nullopt;
}

}  // namespace jmt
