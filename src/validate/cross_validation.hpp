// End-to-end calibration and its honest check (docs/validation.md): the stacks' two
// end-to-end factors of a GPU type (step efficiency, elementwise efficiency) fitted on the
// training tables measured on that GPU type, and each source (a table, or the tables that
// share a `source_id`) predicted with factors fitted on the other sources' tables of its
// GPU type only (leave-one-source-out cross-validation); a GPU type with no other source
// takes the factors of the chip its hardware file names in `stack_factors_from`.
#pragma once

#include <string>
#include <vector>

#include "reference_context.hpp"
#include "table_runner.hpp"

namespace rapid {

/// A training table ready for repeated evaluation with trial factors.
struct FitTable {
  const TableSpec* spec = nullptr;
  std::string gpu;           ///< its hardware name (the GPU type its factors belong to)
  std::string source;        ///< the source it belongs to (TableSpec::source_id)
  std::string factors_from;  ///< its hardware file's `stack_factors_from` (empty: none)
  bool fits = true;          ///< an end_to_end table: its rows enter the factors' fit
  std::vector<PreparedRow> rows;
};

/// Table `s`'s rows prepared once, its GPU type named.
FitTable prepare_fit_table(const TableSpec& s, const ReferenceContext& ctx);

/// Every end_to_end table of `specs` (kind training, suite default), prepared once, one
/// FitTable per GPU its rows ran on.
std::vector<FitTable> prepare_fit_tables(const std::vector<TableSpec>& specs,
                                         const ReferenceContext& ctx);

/// Every other training table of the default suite (end_to_end: false), split by GPU as
/// above: predicted, never fitted on (accuracy on sources the factors never saw).
std::vector<FitTable> prepare_check_tables(const std::vector<TableSpec>& specs,
                                           const ReferenceContext& ctx);

/// The tables of `tables` predicted with factors `f` for each table's GPU type.
std::vector<ValidationTable> predict_tables(const std::vector<const FitTable*>& tables,
                                            const EndToEndFactors& f);

struct EndToEndFit {
  std::string gpu;
  std::vector<std::string> tables;
  EndToEndFactors before, after;
  double mape_before = 0, mape_after = 0;
  size_t rows = 0;
};

/// Fits the factors of `gpu` on `tables` (of that GPU type; of others too when one pair of
/// factors is to serve them all, as `rapid validate --fit-intervals` moves factors between GPU
/// types) by bounded Nelder-Mead on the sum of squared log errors; starts from the stacks'
/// shipped values of the first table's GPU type. Bounds: what the hardware can sustain (step
/// 0.5-1, elementwise 0.5-0.95 of HBM bandwidth).
EndToEndFit fit_factors(const std::vector<const FitTable*>& tables, const std::string& gpu);

/// One fit per GPU type over all its tables (in-sample).
std::vector<EndToEndFit> fit_end_to_end(const std::vector<FitTable>& tables);

struct HeldOut {
  std::string table, gpu, source;
  std::string factors_gpu;  ///< whose tables the factors were fitted on: gpu, or the chip
                            ///< its hardware names in stack_factors_from
  bool fitted_on = true;    ///< an end_to_end table (else never part of any fit)
  std::vector<std::string> trained_on;
  EndToEndFactors fitted;  ///< on the other sources' tables
  ValidationTable in_sample, out_of_sample;
};

/// One source's figures: its tables pooled, row-weighted.
struct SourceFigures {
  std::string source;
  std::vector<std::string> tables;
  size_t rows = 0;
  bool held_out = false;  ///< some table of it had factors fitted without it
  double in_sample_mape = 0, out_of_sample_mape = 0;
};

struct CrossValidation {
  std::vector<HeldOut> tables;
  std::vector<SourceFigures> sources;
  double in_sample_mape = 0, out_of_sample_mape = 0;  ///< pooled over all rows
  size_t rows = 0;
  std::string worst_source;  ///< the held-out source with the largest out-of-sample MAPE
  double worst_source_mape = 0;
};

/// Leave-one-source-out: the tables of each source predicted with factors fitted on the
/// other sources' tables of their GPU type; where that GPU type has none, on those of the
/// GPU its hardware file names in `stack_factors_from` (as a job on that GPU would run);
/// neither: the table is reported in-sample only and left out of the pooled MAPE.
/// `checks` (tables never fitted on) are predicted the same way, without their source.
CrossValidation cross_validate(const std::vector<FitTable>& tables,
                               const std::vector<FitTable>& checks = {});

}  // namespace rapid
