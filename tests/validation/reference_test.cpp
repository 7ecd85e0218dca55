// Predictions against published measurements (../shared/reference): the error is printed
// and bounded. Bounds are the acceptance bounds, not fitted to our output.
#include <gtest/gtest.h>

#include <cstdio>

#include "validate/validation_tables.hpp"

namespace rapid {
namespace {

ReferenceContext context() {
  return ReferenceContext{default_reference_dir(), "", {}, {}};
}

void print(const ValidationTable& t) {
  std::printf("%s (%s)\n", t.file.c_str(), t.metric.c_str());
  for (const auto& r : t.rows)
    std::printf("  %-48s predicted %10.3f measured %10.3f error %5.1f%%\n", r.label.c_str(),
                r.predicted, r.measured, r.abs_pct_error());
  std::printf("  MAPE %.1f%%\n", t.mape());
}

TEST(Reference, MegatronSc21Table1WithinFifteenPercent) {
  ValidationTable t = validate_sc21_table1(context());
  print(t);
  ASSERT_EQ(t.rows.size(), 10u);
  EXPECT_LE(t.mape(), 15.0);
}

TEST(Reference, KorthikantiTable5WithinFifteenPercent) {
  ValidationTable t = validate_korthikanti_table5(context());
  print(t);
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_LE(t.mape(), 15.0);
}

TEST(Reference, KorthikantiMemoryEveryRowWithinFivePercent) {
  ValidationTable t = validate_korthikanti_memory(context());
  print(t);
  ASSERT_EQ(t.rows.size(), 12u);
  for (const auto& r : t.rows) EXPECT_LE(r.abs_pct_error(), 5.0) << r.label;
}

}  // namespace
}  // namespace rapid
