// `rapid validate`: predictions vs published measurements, MAPE per table and overall.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rapid {

struct ValidateOptions {
  std::string reference_dir;  ///< empty: default_reference_dir()
};

void add_validate_options(CLI::App& cmd, ValidateOptions& o);

/// Prints each table's rows (predicted, measured, error), its MAPE, and as the last line
/// "overall MAPE: X%" over all rows. Returns the exit code (0; InputError propagates).
int run_validate(const ValidateOptions& o);

}  // namespace rapid
