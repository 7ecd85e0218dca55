// Shared by the validation tests: the project's reference tables (data/reference, each
// described by its .yaml) run through the one validation loop, and a printer of rows.
#pragma once

#include <cstdio>
#include <string>

#include "validate/reference_context.hpp"
#include "validate/table_runner.hpp"

namespace rapid::test {

inline ReferenceContext reference_context() {
  ReferenceContext ctx;
  ctx.reference_dir = default_reference_dir();
  return ctx;
}

/// The description data/reference/<name>.yaml.
inline TableSpec table_spec(const std::string& name) {
  return load_table_spec(reference_context().reference_dir + "/" + name + ".yaml");
}

/// Measure `measure` of table `name`, predicted with the shipped configs.
inline ValidationTable table(const std::string& name, size_t measure = 0) {
  return run_table(table_spec(name), reference_context()).at(measure);
}

/// Prints every row (predicted, measured, error) and the MAPE; returns the MAPE.
inline double print_table(const ValidationTable& t) {
  std::printf("%s (%s)\n", t.file.c_str(), t.metric.c_str());
  for (const auto& r : t.rows)
    std::printf("  %-60s predicted %10.3f measured %10.3f error %5.1f%%\n", r.label.c_str(),
                r.predicted, r.measured, r.abs_pct_error());
  for (const auto& s : t.infeasible) std::printf("  infeasible in the model: %s\n", s.c_str());
  std::printf("  MAPE %.1f%% over %zu rows\n", t.mape(), t.rows.size());
  return t.mape();
}

}  // namespace rapid::test
