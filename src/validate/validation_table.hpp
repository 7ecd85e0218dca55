// Predicted vs measured values of one published table and their error.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rapid {

struct ValidationRow {
  std::string label;
  double predicted = 0;
  double measured = 0;
  size_t source = 0;             ///< the table's row it comes from (index of the prepared rows)
  double abs_pct_error() const;  ///< |predicted - measured| / measured * 100
};

struct ValidationTable {
  ValidationTable() = default;
  ValidationTable(std::string file_name, std::string what)
      : file(std::move(file_name)), metric(std::move(what)) {}
  std::string file;    ///< reference file name
  std::string metric;  ///< what is compared, with unit
  std::vector<ValidationRow> rows;
  /// Rows the publisher ran that the model finds infeasible (out of memory, no legal
  /// layout): not in `rows`, printed and counted apart.
  std::vector<std::string> infeasible;
  /// Knobs the table does not publish, searched for the fastest feasible setting (as the
  /// publishers tuned their runs); the setting taken is shown in each row's label.
  std::vector<std::string> searched;
  double mape() const;  ///< mean absolute percentage error over rows, %
  /// Sum over rows of log(predicted / measured)^2: the calibrations' objective (symmetric
  /// in over- and under-prediction).
  double squared_log_error() const;
};

/// Mean absolute percentage error over the rows of all `tables` (row-weighted), %.
double pooled_mape(const std::vector<ValidationTable>& tables, size_t* rows = nullptr);

}  // namespace rapid
