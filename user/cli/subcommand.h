// What jmethodtime's subcommands (merge, diff, standby) share: argument parsing
// with one-line usage errors.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace jmt {

// "jmethodtime CMD: WHAT (jmethodtime CMD --help lists the options)" on stderr; returns 2.
int usage_error(const std::string &cmd, const std::string &what);

// Parses a subcommand's arguments (argv[1] is its name); an exit code when it
// is done already (--help: 0, a usage error: 2, with its one line).
std::optional<int> parse_subcommand(CLI::App &app, int argc, const char *const argv[], const char *cmd);

}  // namespace jmt
