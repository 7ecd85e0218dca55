#include "validate_command.hpp"

#include <fmt/format.h>

#include "validation_tables.hpp"

namespace rapid {

void add_validate_options(CLI::App& cmd, ValidateOptions& o) {
  cmd.add_option("--reference-dir", o.reference_dir,
                 "directory of the published tables (default: ../shared/reference)");
}

int run_validate(const ValidateOptions& o) {
  ReferenceContext ctx;
  ctx.reference_dir = o.reference_dir.empty() ? default_reference_dir() : o.reference_dir;
  ctx.config_anchor = "";
  double total = 0;
  size_t n = 0;
  for (const ValidationTable& t : validate_all(ctx)) {
    fmt::print("== {} ({})\n", t.file, t.metric);
    fmt::print("  {:<52} {:>12} {:>12} {:>8}\n", "row", "predicted", "measured", "error");
    for (const ValidationRow& r : t.rows) {
      fmt::print("  {:<52} {:>12.3f} {:>12.3f} {:>7.1f}%\n", r.label, r.predicted, r.measured,
                 r.abs_pct_error());
      total += r.abs_pct_error();
      ++n;
    }
    fmt::print("  MAPE: {:.1f}% over {} rows\n\n", t.mape(), t.rows.size());
  }
  fmt::print("overall MAPE: {:.1f}%\n", n ? total / static_cast<double>(n) : 0.0);
  return 0;
}

}  // namespace rapid
