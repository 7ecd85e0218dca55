// The Hugging Face nanotron "Ultra-Scale Playbook" sweep (data/reference/
// hf_ultrascale_h100_train.yaml, suite hf-ultrascale): which runs went out of memory, and
// the throughput and reserved memory of those that ran.
#pragma once

#include "cross_validation.hpp"

namespace rapid {

struct UltrascaleResult {
  ValidationTable throughput;             ///< tokens/s/GPU, Success rows trusted for pp
  ValidationTable throughput_pp1;         ///< the rows of `throughput` without pipelining
  ValidationTable throughput_pp_suspect;  ///< Success rows with pp > 1 and after_pp_fix False
  ValidationTable memory;                 ///< peak reserved GB, Success rows
  int oom_rows = 0, oom_correct = 0;      ///< rows, rows whose OOM status we predict right
  int oom_false_fit = 0, oom_false_oom = 0;
  double oom_accuracy() const { return oom_rows ? 100.0 * oom_correct / oom_rows : 0.0; }
};

/// The sweep's rows prepared once, and which runs predate nanotron's pipeline fix.
struct UltrascaleSweep {
  FitTable table;
  std::vector<bool> before_pp_fix;  ///< per row: after_pp_fix is False
};
/// The hf-ultrascale suite's table of `specs`, prepared.
UltrascaleSweep prepare_ultrascale(const std::vector<TableSpec>& specs,
                                   const ReferenceContext& ctx);

/// Predicts every run: tokens/s/GPU and reserved memory of Success rows, out of memory or
/// not for all rows (a layout no framework can run counts as a predicted failure).
UltrascaleResult validate_ultrascale(const UltrascaleSweep& sweep);

struct NanotronFit {
  double compute_efficiency = 0, network_efficiency = 0, fragmentation = 0;
  double mape_before = 0, mape_after = 0;  ///< pp = 1 throughput MAPE
};
/// The nanotron stack's compute efficiency and the HF cluster's network efficiency fitted
/// to the Success rows without pipelining (squared log error of tokens/s/GPU), then the
/// fragmentation to the reserved memory, by bounded Nelder-Mead.
NanotronFit fit_ultrascale(const UltrascaleSweep& sweep);

}  // namespace rapid
