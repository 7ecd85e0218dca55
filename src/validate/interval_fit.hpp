// `rapid validate --fit-intervals FILE` (docs/validation.md "Prediction intervals"): the
// model's out-of-sample residuals on the published tables, written as
// configs/calibration/intervals.yaml, and the nested check of the intervals they give: each
// table's rows against the interval built from the other tables' residuals.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rapid/spec/interval_spec.hpp"
#include "reference_context.hpp"
#include "table_spec.hpp"

namespace rapid {

/// +1: quantity `q` is a time (r = ln(measured / predicted)); -1: a rate of a step's or a
/// request's work (tokens/s, TFLOP/s, MFU: r = ln(predicted / measured), the time's residual);
/// 0: neither (memory, kernels).
int time_sign(const std::string& q);

/// One table's rows against the interval of the other tables' residuals.
struct HeldOutCoverage {
  std::string table, hardware, basis;
  bool serving = false;
  bool extrapolated = false;  ///< without it, no table covers its GPU type x stack family
  size_t rows = 0;
  size_t covered_analytical = 0, covered_des = 0;
  size_t rows_des = 0;                         ///< rows with a DES residual
  double width_analytical = 0, width_des = 0;  ///< median relative width of its rows' intervals
};

/// The same for rows predicted with another GPU type's factors (the extrapolated rule): each
/// GPU type's rows against the extrapolated band built from the other GPU types' rows.
struct TransferCoverage {
  std::string hardware;
  size_t rows = 0, covered = 0;
  double width = 0;
};

struct IntervalFit {
  IntervalSpec spec;  ///< the residuals (what the file holds)
  /// The tables each training table's factors were fitted on (its GPU type's others).
  /// Keyed by table and GPU (`table` + '\t' + `hardware`): a table's rows are split by GPU.
  std::map<std::string, std::vector<std::string>> fitted_on;
  std::vector<HeldOutCoverage> held_out;  ///< training tables, then serving
  std::vector<TransferCoverage> transfer;
  /// In-sample coverage of the serving rows by the interval built from them.
  size_t serving_rows = 0, serving_covered = 0;
};

/// Residuals from the model (leave-one-table-out factors, the DES at the layouts taken, the
/// factors moved between GPU types and stack families, the serving tables) and the nested
/// coverage, with `settings`' coverage and family thresholds.
IntervalFit fit_intervals(const std::vector<TableSpec>& specs, const ReferenceContext& ctx,
                          const IntervalSpec& settings = {});

/// Each held-out table's coverage and widths (`fit.held_out`, `fit.transfer`) from
/// `fit.spec`'s residuals: the interval of a table's rows is resolve_band() over the other
/// tables' rows.
void nested_coverage(IntervalFit& fit);

/// The bands of every GPU type x stack family the residuals cover, the transfer penalties,
/// the nested coverage and median relative width per table (interval_yaml.cpp; printed by
/// `rapid validate --fit-intervals` and kept as comments in the file).
std::string interval_summary(const IntervalFit& fit);

/// The file's text (configs/calibration/intervals.yaml; interval_yaml.cpp): the residuals by
/// table with the tables their factors were fitted on, the summary as comments.
std::string interval_yaml(const IntervalFit& fit);

}  // namespace rapid
