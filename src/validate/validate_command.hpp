// `rapid validate`: predictions vs published measurements, MAPE per table and overall.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rapid {

struct ValidateOptions {
  std::string reference_dir;   ///< empty: default_reference_dir()
  bool hf_ultrascale = false;  ///< the nanotron sweep instead of the default tables
  bool fit = false;            ///< refit the end-to-end efficiency factors and print them
  int max_rows = 40;           ///< rows printed per table (worst first beyond this)
};

void add_validate_options(CLI::App& cmd, ValidateOptions& o);

/// Default: prints each reference table's rows (predicted, measured, error), its MAPE, and
/// as the last line "overall MAPE: X%" over all rows. --hf-ultrascale: the nanotron sweep's
/// throughput MAPE (trusted rows, pp = 1 rows, pre-fix pipeline rows apart), peak-memory
/// MAPE and OOM classification accuracy. --fit-end-to-end: the fitted efficiency factors.
/// Returns the exit code (0; InputError propagates).
int run_validate(const ValidateOptions& o);

}  // namespace rapid
