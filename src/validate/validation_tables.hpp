// Predictions of published measurements (../shared/reference), one table per file.
#pragma once

#include <string>
#include <vector>

#include "reference_point.hpp"

namespace rapid {

struct ValidationRow {
  std::string label;
  double predicted = 0;
  double measured = 0;
  double abs_pct_error() const;  ///< |predicted - measured| / measured * 100
};

struct ValidationTable {
  std::string file;    ///< reference file name
  std::string metric;  ///< what is compared, with unit
  std::vector<ValidationRow> rows;
  double mape() const;  ///< mean absolute percentage error over rows, %
};

/// megatron_sc21_table1_a100.csv: model TFLOP/s per GPU (Megatron's formula with full
/// recompute) on A100 / DGX A100 SuperPOD, run settings from configs/validation.
ValidationTable validate_sc21_table1(const ReferenceContext& ctx);

/// korthikanti_2022_table5_a100.csv: iteration time, full recompute vs SP + selective.
ValidationTable validate_korthikanti_table5(const ReferenceContext& ctx);

/// korthikanti_2022_memory_a100.csv: per-GPU parameters+optimizer and first-stage
/// transformer-layer activations (no recompute; SP + selective), GiB.
ValidationTable validate_korthikanti_memory(const ReferenceContext& ctx);

/// Every table above plus the Megatron-Core, GEMM and NCCL tables, in order (the nanotron
/// sweep is its own mode: validate_hf_ultrascale).
std::vector<ValidationTable> validate_all(const ReferenceContext& ctx);

}  // namespace rapid
