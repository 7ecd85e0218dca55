// Shared by the validation tests: the reference context and a printer of a table's rows.
#pragma once

#include <cstdio>

#include "validate/validation_tables.hpp"

namespace rapid::test {

inline ReferenceContext reference_context() {
  return ReferenceContext{default_reference_dir(), "", {}, {}};
}

/// Prints every row (predicted, measured, error) and the MAPE; returns the MAPE.
inline double print_table(const ValidationTable& t) {
  std::printf("%s (%s)\n", t.file.c_str(), t.metric.c_str());
  for (const auto& r : t.rows)
    std::printf("  %-48s predicted %10.3f measured %10.3f error %5.1f%%\n", r.label.c_str(),
                r.predicted, r.measured, r.abs_pct_error());
  std::printf("  MAPE %.1f%% over %zu rows\n", t.mape(), t.rows.size());
  return t.mape();
}

}  // namespace rapid::test
