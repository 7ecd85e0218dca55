// "Did you mean" for a command line CLI11 refused (an unknown flag or subcommand): the
// options and subcommands of the (sub)command the words were given to, nearest first.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace rapid {

/// The subcommand the command line reached (the deepest parsed one; `app` itself when none).
const CLI::App& reached_command(const CLI::App& app);

/// Long option names of `cmd` and of the commands above it (their options apply too:
/// help, version), without their dashes.
std::vector<std::string> long_option_names(const CLI::App& cmd);

/// Names of the subcommands of `cmd`.
std::vector<std::string> subcommand_names(const CLI::App& cmd);

/// "did you mean --threads?" for the words of `unexpected` that look like typos of the
/// long options of `cmd` (a word starting with '-'; "--thredas=4" as "--thredas") or of its
/// subcommands (any other word); several joined by "; ", "" when none does.
std::string flag_suggestions(const CLI::App& cmd, const std::vector<std::string>& unexpected);

/// What to add to CLI11's message for parse error `e` of `app` (after app.parse threw):
/// flag_suggestions of the unexpected words of an ExtrasError, "" for any other error.
std::string parse_error_hint(const CLI::App& app, const CLI::ParseError& e);

}  // namespace rapid
