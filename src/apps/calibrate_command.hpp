// `rapid calibrate`: fit the model's efficiency parameters to measured GEMMs and
// collectives and write calibrated hardware (and network) files (docs/collectives.md,
// "Calibration").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace rapid {

struct CalibrateOptions {
  std::string hardware;             ///< hardware YAML to start from
  std::string network;              ///< network YAML (needed for collective rows)
  std::string measurements;         ///< measurements CSV (cost/calibration.hpp)
  std::string output;               ///< calibrated hardware YAML
  std::string network_output;       ///< calibrated network YAML; default: next to `output`,
                                    ///< named <network file stem>.calibrated.yaml
  std::vector<std::string> params;  ///< parameter names to fit; empty: all the rows inform
};

void add_calibrate_options(CLI::App& cmd, CalibrateOptions& o);

/// Fits, prints the parameters before and after and the MAPE per op kind before and after,
/// and writes the calibrated files (each whole or not at all). Returns 0; bad input throws
/// InputError (exit 2 at the application boundary), before any file is written.
int run_calibrate(const CalibrateOptions& o);

}  // namespace rapid
