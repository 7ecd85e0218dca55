#include "validate_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cross_validation.hpp"
#include "interval_fit.hpp"
#include "rapid/io/output_check.hpp"
#include "ultrascale.hpp"

namespace rapid {

void add_validate_options(CLI::App& cmd, ValidateOptions& o) {
  cmd.add_option("--reference-dir", o.reference_dir,
                 "directory of the published tables and their descriptions (default: the "
                 "project's data/reference)");
  cmd.add_flag("--hf-ultrascale", o.hf_ultrascale,
               "the Hugging Face nanotron sweep: tokens/s/GPU, reserved memory, OOM accuracy");
  cmd.add_flag("--fit-end-to-end", o.fit,
               "refit the end-to-end factors per GPU type (and nanotron's) and print them");
  cmd.add_flag("--cross-validate", o.cross_validate,
               "predict each source's training tables with factors fitted on the other sources' "
               "tables of its GPU type (or of its stack_factors_from chip); print in-sample and "
               "leave-one-source-out MAPE per table and per source");
  cmd.add_option("--fit-intervals", o.fit_intervals,
                 "write the prediction intervals' out-of-sample residuals to FILE "
                 "(configs/calibration/intervals.yaml) and print their nested coverage per table")
      ->type_name("FILE");
  cmd.add_option("--max-rows", o.max_rows, "rows printed per table, worst first beyond it")
      ->check(CLI::Range(1, 100000));
}

namespace {

// Prints a table (worst rows first when it has more than `max_rows`).
void print_table(const ValidationTable& t, int max_rows, const std::string& note = "") {
  fmt::print("== {} ({}){}\n", t.file, t.metric, note.empty() ? "" : ", " + note);
  if (!t.searched.empty())
    fmt::print("  not published: {}; predicted at the fastest feasible setting (shown in [ ])\n",
               fmt::join(t.searched, ", "));
  fmt::print("  {:<64} {:>12} {:>12} {:>8}\n", "row", "predicted", "measured", "error");
  std::vector<ValidationRow> rows = t.rows;
  const bool worst_only = static_cast<int>(rows.size()) > max_rows;
  if (worst_only) {
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.abs_pct_error() > b.abs_pct_error(); });
    rows.resize(static_cast<size_t>(max_rows));
  }
  for (const ValidationRow& r : rows)
    fmt::print("  {:<64} {:>12.3f} {:>12.3f} {:>7.1f}%\n", r.label, r.predicted, r.measured,
               r.abs_pct_error());
  if (worst_only) fmt::print("  ... {} worst of {} rows shown\n", max_rows, t.rows.size());
  for (const std::string& s : t.infeasible) fmt::print("  infeasible in the model: {}\n", s);
  std::vector<double> errors;
  for (const ValidationRow& r : t.rows) errors.push_back(r.abs_pct_error());
  std::sort(errors.begin(), errors.end());
  const double median = errors.empty() ? 0.0 : errors[errors.size() / 2];
  fmt::print("  MAPE: {:.1f}% over {} rows (median {:.1f}%)\n\n", t.mape(), t.rows.size(), median);
}

int run_hf(const std::vector<TableSpec>& specs, const ReferenceContext& ctx, int max_rows) {
  const UltrascaleResult u = validate_ultrascale(prepare_ultrascale(specs, ctx));
  for (const ValidationTable* t :
       {&u.throughput, &u.throughput_pp1, &u.throughput_pp_suspect, &u.memory})
    print_table(*t, max_rows);
  fmt::print(
      "OOM classification: {:.1f}% of {} rows right ({} predicted to fit that ran out of "
      "memory, {} predicted out of memory that ran)\n",
      u.oom_accuracy(), u.oom_rows, u.oom_false_fit, u.oom_false_oom);
  fmt::print("overall MAPE: {:.1f}%\n", u.throughput.mape());
  return 0;
}

int run_fit(const std::vector<TableSpec>& specs, const ReferenceContext& ctx) {
  for (const EndToEndFit& f : fit_end_to_end(prepare_fit_tables(specs, ctx))) {
    fmt::print("{} on {}: MAPE {:.1f}% -> {:.1f}% over {} rows (in-sample)\n", f.gpu,
               fmt::join(f.tables, " + "), f.mape_before, f.mape_after, f.rows);
    fmt::print("  step: {:.3f} -> {:.3f}, elementwise: {:.3f} -> {:.3f}\n", f.before.step,
               f.after.step, f.before.elementwise, f.after.elementwise);
  }
  const NanotronFit n = fit_ultrascale(prepare_ultrascale(specs, ctx));
  fmt::print("nanotron on hf-ultrascale-cluster (Success rows, pp = 1): MAPE {:.1f}% -> {:.1f}%\n",
             n.mape_before, n.mape_after);
  fmt::print("  compute_efficiency: {:.3f}, network_efficiency: {:.3f}, fragmentation: {:.3f}\n",
             n.compute_efficiency, n.network_efficiency, n.fragmentation);
  return 0;
}

// The factors a held-out table was predicted with, and where they were fitted.
std::string held_out_note(const HeldOut& h) {
  std::string note =
      fmt::format("out-of-sample: factors step {:.3f}, elementwise {:.3f} fitted on {}",
                  h.fitted.step, h.fitted.elementwise, fmt::join(h.trained_on, " + "));
  if (h.factors_gpu != h.gpu)
    note += fmt::format(" (no other source on {}: the factors of {}, its stack_factors_from)",
                        h.gpu, h.factors_gpu);
  return note;
}

int run_cross_validation(const std::vector<TableSpec>& specs, const ReferenceContext& ctx,
                         int max_rows) {
  const CrossValidation cv =
      cross_validate(prepare_fit_tables(specs, ctx), prepare_check_tables(specs, ctx));
  for (const HeldOut& h : cv.tables) {
    if (h.trained_on.empty()) {
      print_table(h.in_sample, max_rows,
                  "in-sample only: no other source on " + h.gpu + " nor a stack_factors_from");
      continue;
    }
    print_table(h.out_of_sample, max_rows, held_out_note(h));
  }
  // A table never fitted on (end_to_end: false) has no in-sample figure of its own: its
  // "in-sample" column is its prediction with the factors fitted on every fitted table.
  fmt::print("{:<38} {:>18} {:>6} {:>5} {:>10} {:>14}\n", "table", "gpu", "fitted", "rows",
             "in-sample", "out-of-sample");
  for (const HeldOut& h : cv.tables)
    fmt::print(
        "{:<38} {:>18} {:>6} {:>5} {:>9.1f}% {:>13}\n", h.table, h.gpu, h.fitted_on ? "yes" : "no",
        h.in_sample.rows.size(), h.in_sample.mape(),
        h.trained_on.empty() ? std::string("-") : fmt::format("{:.1f}%", h.out_of_sample.mape()));
  fmt::print("\n{:<40} {:>6} {:>12} {:>14}\n", "source (held out together)", "rows", "in-sample",
             "leave-out");
  for (const SourceFigures& s : cv.sources)
    fmt::print("{:<40} {:>6} {:>11.1f}% {:>13}\n", s.source, s.rows, s.in_sample_mape,
               s.held_out ? fmt::format("{:.1f}%", s.out_of_sample_mape) : std::string("-"));
  fmt::print("in-sample MAPE: {:.1f}% (factors fitted on every table of the GPU type)\n",
             cv.in_sample_mape);
  if (!cv.worst_source.empty())
    fmt::print("worst source: {} ({:.1f}% leave-one-source-out)\n", cv.worst_source,
               cv.worst_source_mape);
  fmt::print("cross-validated MAPE: {:.1f}% (leave-one-source-out, {} rows)\n",
             cv.out_of_sample_mape, cv.rows);
  return 0;
}

int run_fit_intervals(const std::vector<TableSpec>& specs, const ReferenceContext& ctx,
                      const std::string& path) {
  check_output_file(path, "--fit-intervals");
  const IntervalFit fit = fit_intervals(specs, ctx);
  write_file_atomically(path, interval_yaml(fit), "--fit-intervals");
  fmt::print("{}{} training and {} serving residual rows written to {}\n", interval_summary(fit),
             fit.spec.training.size(), fit.spec.serving.size(), path);
  return 0;
}

}  // namespace

int run_validate(const ValidateOptions& o) {
  ReferenceContext ctx;
  ctx.reference_dir = o.reference_dir.empty() ? default_reference_dir() : o.reference_dir;
  const std::vector<TableSpec> specs = load_table_specs(ctx.reference_dir);
  if (o.fit) return run_fit(specs, ctx);
  if (!o.fit_intervals.empty()) return run_fit_intervals(specs, ctx, o.fit_intervals);
  if (o.cross_validate) return run_cross_validation(specs, ctx, o.max_rows);
  if (o.hf_ultrascale) return run_hf(specs, ctx, o.max_rows);
  std::vector<ValidationTable> all;
  for (const TableSpec& s : specs) {
    if (s.suite != "default") continue;
    for (ValidationTable& t : run_table(s, ctx)) {
      print_table(t, o.max_rows,
                  s.end_to_end ? "in-sample: the end-to-end factors were fitted on it" : "");
      all.push_back(std::move(t));
    }
  }
  fmt::print(
      "overall MAPE: {:.1f}% (in-sample for the end-to-end tables; --cross-validate "
      "for out-of-sample)\n",
      pooled_mape(all, nullptr));
  return 0;
}

}  // namespace rapid
