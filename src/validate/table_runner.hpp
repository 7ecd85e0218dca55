// The one loop over described tables (table_spec.hpp): every row predicted by the model
// and compared with its measurement. `rapid validate`, the end-to-end fit and the
// cross-validation all run through it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rapid/core/eval_result.hpp"
#include "table_rows.hpp"
#include "validation_table.hpp"

namespace rapid {

/// The model's answer for one prepared row.
struct RowResult {
  bool feasible = false;  ///< some candidate layout fits in memory and runs
  bool searched = false;  ///< more than one candidate: the fastest feasible was taken
  ParallelConfig par;     ///< the layout taken (least memory when none fits)
  EvalResult result;
  std::vector<double> predicted;  ///< per measure
  /// The DES's step time of the layout taken (evaluate_rows with `simulate`); NaN otherwise.
  double des_step_time_s = EvalResult::kNaN;
};

/// Evaluates rows with `factors` (end-to-end factors by hardware name) in place of the
/// stacks' own. Training rows: the fastest feasible candidate by the analytical model (and,
/// with `simulate`, that layout by the DES too); memory rows: each measure's layout.
std::vector<RowResult> evaluate_rows(const TableSpec& spec, const std::vector<PreparedRow>& rows,
                                     const std::map<std::string, EndToEndFactors>& factors = {},
                                     bool simulate = false);

/// An empty table of `spec`'s measure `m` (its name and unit), listing the searched knobs.
ValidationTable measure_table(const TableSpec& spec, const Measure& m);

/// One table per measure: the rows whose run succeeded and whose measurement and
/// prediction both exist; labels name the searched layout.
std::vector<ValidationTable> summarize(const TableSpec& spec, const std::vector<PreparedRow>& rows,
                                       const std::vector<RowResult>& results);

/// Prepares, evaluates and summarizes a training or memory table, or predicts a kernel
/// table (gemm, collective, attention) or an inference table.
std::vector<ValidationTable> run_table(const TableSpec& spec, const ReferenceContext& ctx);

/// Kernel tables (kernel_tables.cpp).
std::vector<ValidationTable> run_kernel_table(const TableSpec& spec, const ReferenceContext& ctx);

/// Inference tables (inference_tables.cpp): each row a serving job at one layout and load,
/// predicted by the analytical serving model (`simulate`: by the serving DES).
std::vector<ValidationTable> run_inference_table(const TableSpec& spec, const ReferenceContext& ctx,
                                                 bool simulate = false);

}  // namespace rapid
