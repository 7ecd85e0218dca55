// Predictions against published measurements (../shared/reference): the error is printed
// and bounded. Bounds are the acceptance bounds, not fitted to our output.
#include <gtest/gtest.h>

#include <cstdio>

#include "validate/validation_tables.hpp"
#include "validation/validation_support.hpp"

namespace rapid {
namespace {

TEST(Reference, MegatronSc21Table1WithinFifteenPercent) {
  ValidationTable t = validate_sc21_table1(test::reference_context());
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 10u);
  EXPECT_LE(t.mape(), 15.0);
}

TEST(Reference, KorthikantiTable5WithinFifteenPercent) {
  ValidationTable t = validate_korthikanti_table5(test::reference_context());
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_LE(t.mape(), 15.0);
}

TEST(Reference, KorthikantiMemoryEveryRowWithinFivePercent) {
  ValidationTable t = validate_korthikanti_memory(test::reference_context());
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 12u);
  for (const auto& r : t.rows) EXPECT_LE(r.abs_pct_error(), 5.0) << r.label;
}

}  // namespace
}  // namespace rapid
