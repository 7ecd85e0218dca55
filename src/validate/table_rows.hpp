// A described table's rows turned into what the model evaluates (table_spec.hpp): the
// value of every reference for a row, the row's model, training settings and candidate
// layouts. Internal to src/validate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rapid/spec/csv_table.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "reference_context.hpp"
#include "table_spec.hpp"

namespace rapid {

/// The values of one row: table fields, its run-settings row, a row to fill empty model
/// fields from.
class RowValues {
 public:
  RowValues(const TableSpec& spec, const CsvTable& table, const CsvTable* settings);
  void select(size_t row);

  /// The text of `ref` for this row (nullopt: not given). `fill`: an empty field is taken
  /// from the fill row when there is one.
  std::optional<std::string> get(const ValueRef& ref, bool fill = false) const;
  /// The label template with {column} replaced.
  std::string label() const;
  /// The table file and this row's line, for messages.
  std::string where() const;

  int64_t integer(const std::string& key, const std::string& text) const;
  double number(const std::string& key, const std::string& text) const;
  bool boolean(const std::string& key, const std::string& text) const;

 private:
  const TableSpec& spec_;
  const CsvTable& t_;
  const CsvTable* settings_;
  size_t row_ = 0;
  std::optional<size_t> settings_row_, fill_row_;
};

/// One row ready to evaluate.
struct PreparedRow {
  size_t csv_row = 0;
  std::string label;
  SweepSpec spec;                          ///< model, hardware[0], network, training, search flags
  std::vector<ParallelConfig> candidates;  ///< legal layouts (empty: none can run)
  /// Memory tables: the layouts of each measure (its knob overrides applied).
  std::vector<std::vector<ParallelConfig>> measure_candidates;
  bool run_ok = true;            ///< the publisher's run succeeded (status column)
  std::vector<double> measured;  ///< per measure; NaN where the field is empty
};

/// The row's named model (configs/models, `model: {name: ...}`), read once per context.
ModelSpec named_model(const TableSpec& spec, const RowValues& v, const ReferenceContext& ctx);

/// Builds every row of a training or memory table. Throws InputError naming the table
/// file, row and column, or the description and key.
std::vector<PreparedRow> prepare_rows(const TableSpec& spec, const ReferenceContext& ctx);

/// Applies knob `key` (a layout or search knob: tp, pp, dp, cp, ep, etp, vpp, mbs, sp,
/// zero_stage, recompute, gpus) with value `text` to `c`.
void set_knob(ParallelConfig& c, const std::string& key, const std::string& text,
              const RowValues& at);

}  // namespace rapid
