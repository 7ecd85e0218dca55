#include "rapid/spec/units.hpp"

#include <gtest/gtest.h>

namespace rapid {
namespace {

TEST(Units, BandwidthInBitsAndBytes) {
  // 400 Gb/s = 400e9 bits/s / 8 = 50e9 bytes/s.
  EXPECT_DOUBLE_EQ(*parse_quantity("400Gbps", Dimension::Bandwidth), 50e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("200 Gb/s", Dimension::Bandwidth), 25e9);
  // 2 TB/s = 2e12 bytes/s (decimal prefix).
  EXPECT_DOUBLE_EQ(*parse_quantity("2TB/s", Dimension::Bandwidth), 2e12);
  EXPECT_DOUBLE_EQ(*parse_quantity("3.35e12", Dimension::Bandwidth), 3.35e12);
}

TEST(Units, SizesUseDecimalAndBinaryPrefixes) {
  EXPECT_DOUBLE_EQ(*parse_quantity("80GB", Dimension::Size), 80e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("80GiB", Dimension::Size), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("40MiB", Dimension::Size), 40.0 * 1024 * 1024);
}

TEST(Units, TimesAndFrequencies) {
  EXPECT_DOUBLE_EQ(*parse_quantity("0.5us", Dimension::Time), 0.5e-6);
  EXPECT_DOUBLE_EQ(*parse_quantity("5ms", Dimension::Time), 5e-3);
  EXPECT_DOUBLE_EQ(*parse_quantity("30s", Dimension::Time), 30.0);
  EXPECT_DOUBLE_EQ(*parse_quantity("1.41GHz", Dimension::Frequency), 1.41e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("989TFLOPS", Dimension::FlopRate), 989e12);
  EXPECT_DOUBLE_EQ(*parse_quantity("85%", Dimension::Ratio), 0.85);
}

TEST(Units, RejectsWrongDimensionAndGarbage) {
  EXPECT_FALSE(parse_quantity("400Gbps", Dimension::Time));
  EXPECT_FALSE(parse_quantity("fast", Dimension::Bandwidth));
  EXPECT_FALSE(parse_quantity("", Dimension::Size));
  EXPECT_FALSE(parse_quantity("5 parsecs", Dimension::Time));
  // Sub-unit prefixes only make sense for time: "5mB" is not a size.
  EXPECT_FALSE(parse_quantity("5mB", Dimension::Size));
}

// A finite number that its unit scales past the double range (1e300 x 1e15 B/s) is not a
// quantity: it would reach the model as infinity.
TEST(Units, ScaledPastTheDoubleRangeIsRejected) {
  EXPECT_FALSE(parse_quantity("1e300PB/s", Dimension::Bandwidth));
  EXPECT_DOUBLE_EQ(*parse_quantity("1e290PB/s", Dimension::Bandwidth), 1e305);
}

}  // namespace
}  // namespace rapid
