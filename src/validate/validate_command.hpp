// `rapid validate`: predictions vs published measurements, MAPE per table and overall.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rapid {

struct ValidateOptions {
  std::string reference_dir;    ///< empty: default_reference_dir()
  bool hf_ultrascale = false;   ///< the nanotron sweep instead of the default tables
  bool fit = false;             ///< refit the end-to-end efficiency factors and print them
  bool cross_validate = false;  ///< leave-one-table-out check of the end-to-end factors
  int max_rows = 40;            ///< rows printed per table (worst first beyond this)
  std::string fit_intervals;    ///< write the prediction intervals' residuals to this file
};

void add_validate_options(CLI::App& cmd, ValidateOptions& o);

/// Default: every table of the default suite (data/reference/*.yaml): rows (predicted,
/// measured, error), MAPE, and as the last line "overall MAPE: X%" (in-sample for the
/// tables the end-to-end factors were fitted on, so labeled). --cross-validate: each
/// training table in-sample and out-of-sample side by side, last line "cross-validated
/// MAPE: X%". --hf-ultrascale: the nanotron sweep's throughput MAPE (trusted rows, pp = 1
/// rows, pre-fix pipeline rows apart), reserved-memory MAPE and OOM classification.
/// --fit-end-to-end: the fitted factors. --fit-intervals FILE: the out-of-sample residuals
/// written to FILE (configs/calibration/intervals.yaml), the bands and their nested coverage
/// per table printed (docs/validation.md "Prediction intervals"). Returns the exit code (0;
/// InputError propagates).
int run_validate(const ValidateOptions& o);

}  // namespace rapid
