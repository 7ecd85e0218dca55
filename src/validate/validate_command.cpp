#include "validate_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "end_to_end_fit.hpp"
#include "framework_tables.hpp"
#include "validation_tables.hpp"

namespace rapid {

void add_validate_options(CLI::App& cmd, ValidateOptions& o) {
  cmd.add_option("--reference-dir", o.reference_dir,
                 "directory of the published tables (default: ../shared/reference)");
  cmd.add_flag("--hf-ultrascale", o.hf_ultrascale,
               "the Hugging Face nanotron sweep: tokens/s/GPU, peak memory, OOM accuracy");
  cmd.add_flag("--fit-end-to-end", o.fit,
               "refit the per-GPU-type end-to-end efficiency factors and print them");
  cmd.add_option("--max-rows", o.max_rows, "rows printed per table, worst first beyond it")
      ->check(CLI::Range(1, 100000));
}

namespace {

// Prints a table (worst rows first when it has more than `max_rows`); returns its rows'
// summed absolute percentage error.
double print_table(const ValidationTable& t, int max_rows) {
  fmt::print("== {} ({})\n", t.file, t.metric);
  fmt::print("  {:<52} {:>12} {:>12} {:>8}\n", "row", "predicted", "measured", "error");
  std::vector<ValidationRow> rows = t.rows;
  const bool worst_only = static_cast<int>(rows.size()) > max_rows;
  if (worst_only) {
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.abs_pct_error() > b.abs_pct_error(); });
    rows.resize(static_cast<size_t>(max_rows));
  }
  for (const ValidationRow& r : rows)
    fmt::print("  {:<52} {:>12.3f} {:>12.3f} {:>7.1f}%\n", r.label, r.predicted, r.measured,
               r.abs_pct_error());
  if (worst_only) fmt::print("  ... {} worst of {} rows shown\n", max_rows, t.rows.size());
  std::vector<double> errors;
  double sum = 0;
  for (const ValidationRow& r : t.rows) {
    errors.push_back(r.abs_pct_error());
    sum += r.abs_pct_error();
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors.empty() ? 0.0 : errors[errors.size() / 2];
  fmt::print("  MAPE: {:.1f}% over {} rows (median {:.1f}%)\n\n", t.mape(), t.rows.size(), median);
  return sum;
}

int run_hf(const ReferenceContext& ctx, const ValidateOptions& o) {
  UltrascaleResult u = validate_hf_ultrascale(ctx);
  double sum = print_table(u.throughput, o.max_rows);
  print_table(u.throughput_pp1, o.max_rows);
  print_table(u.throughput_pp_suspect, o.max_rows);
  print_table(u.memory, o.max_rows);
  fmt::print(
      "OOM classification: {:.1f}% of {} rows right ({} predicted to fit that ran out of "
      "memory, {} predicted out of memory that ran)\n",
      u.oom_accuracy(), u.oom_rows, u.oom_false_fit, u.oom_false_oom);
  fmt::print("overall MAPE: {:.1f}%\n",
             u.throughput.rows.empty() ? 0.0 : sum / static_cast<double>(u.throughput.rows.size()));
  return 0;
}

int run_fit(const ReferenceContext& ctx) {
  for (const EndToEndFit& f : fit_end_to_end(ctx)) {
    fmt::print("{} on {}: MAPE {:.1f}% -> {:.1f}% over {} rows\n", f.hardware,
               fmt::join(f.tables, " + "), f.mape_before, f.mape_after, f.rows);
    for (const auto& p : f.params)
      fmt::print("  efficiency.{}: {:.3f} -> {:.3f}\n", p.key, p.before, p.after);
  }
  NetworkSpec net;
  double before = 0, after = 0;
  NanotronModel nm = fit_hf_ultrascale(ctx, net, before, after);
  fmt::print("nanotron on hf-ultrascale-cluster (Success rows, pp = 1): MAPE {:.1f}% -> {:.1f}%\n",
             before, after);
  fmt::print("  framework_efficiency: {:.3f}, network_efficiency: {:.3f}, fragmentation: {:.3f}\n",
             nm.framework_efficiency, net.network_efficiency, nm.fragmentation);
  return 0;
}

}  // namespace

int run_validate(const ValidateOptions& o) {
  ReferenceContext ctx;
  ctx.reference_dir = o.reference_dir.empty() ? default_reference_dir() : o.reference_dir;
  if (o.fit) return run_fit(ctx);
  if (o.hf_ultrascale) return run_hf(ctx, o);
  double total = 0;
  size_t n = 0;
  for (const ValidationTable& t : validate_all(ctx)) {
    total += print_table(t, o.max_rows);
    n += t.rows.size();
  }
  fmt::print("overall MAPE: {:.1f}%\n", n ? total / static_cast<double>(n) : 0.0);
  return 0;
}

}  // namespace rapid
