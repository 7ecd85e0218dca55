// Predictions against published measurements (data/reference): the error is printed and
// bounded. Bounds are the issues' acceptance bounds, not fitted to our output.
#include <gtest/gtest.h>

#include "validation/validation_support.hpp"

namespace rapid {
namespace {

TEST(Reference, MegatronSc21Table1WithinFifteenPercent) {
  ValidationTable t = test::table("megatron_sc21_table1_a100");
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 10u);
  EXPECT_TRUE(t.infeasible.empty());
  EXPECT_LE(t.mape(), 15.0);
}

TEST(Reference, KorthikantiTable5WithinFifteenPercent) {
  ValidationTable t = test::table("korthikanti_2022_table5_a100");
  test::print_table(t);
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_TRUE(t.infeasible.empty());
  EXPECT_LE(t.mape(), 15.0);
}

TEST(Reference, KorthikantiMemoryEveryRowWithinFivePercent) {
  size_t rows = 0;
  for (size_t m = 0; m < 3; ++m) {
    ValidationTable t = test::table("korthikanti_2022_memory_a100", m);
    test::print_table(t);
    rows += t.rows.size();
    for (const auto& r : t.rows) EXPECT_LE(r.abs_pct_error(), 5.0) << t.metric << " " << r.label;
  }
  EXPECT_EQ(rows, 12u);
}

}  // namespace
}  // namespace rapid
