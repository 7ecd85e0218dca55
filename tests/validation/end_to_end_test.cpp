// Issue bounds for the hardware-aware models: GEMMs against measured grids, end-to-end
// step time on A100 and H100 with one calibration per GPU type, and the nanotron sweep.
// Errors are printed; bounds are the acceptance bounds, not fitted to our output.
#include <gtest/gtest.h>

#include <cstdio>

#include "rapid/spec/yaml_reader.hpp"
#include "validate/framework_tables.hpp"
#include "validate/gemm_tables.hpp"
#include "validation/validation_support.hpp"

namespace rapid {
namespace {

TEST(EndToEnd, A100AndH100TablesTogetherWithinTenPercent) {
  ReferenceContext ctx = test::reference_context();
  double sum = 0;
  size_t n = 0;
  for (const ValidationTable& t : {validate_sc21_table1(ctx), validate_korthikanti_table5(ctx),
                                   validate_megatron_core_h100(ctx)}) {
    test::print_table(t);
    for (const auto& r : t.rows) sum += r.abs_pct_error();
    n += t.rows.size();
  }
  ASSERT_EQ(n, 27u);
  const double mape = sum / static_cast<double>(n);
  std::printf("SC21 + Korthikanti Table 5 + Megatron-Core r0.8.0 together: MAPE %.1f%%\n", mape);
  EXPECT_LE(mape, 10.0);
}

TEST(GemmReference, H100GridUncalibratedWithinTwelvePercent) {
  ReferenceContext ctx = test::reference_context();
  const double uncalibrated = test::print_table(validate_gemm_h100_grid(ctx));
  EXPECT_LE(uncalibrated, 12.0);
  // The calibrated file shipped in configs/calibration (rapid calibrate on this grid).
  const std::string path =
      std::string(RAPID_SOURCE_DIR) + "/configs/calibration/h100-sxm5-80gb.calibrated.yaml";
  ctx.hardware_override["h100-sxm5-80gb"] = parse_hardware(load_yaml_file(path), path);
  const double calibrated = test::print_table(validate_gemm_h100_grid(ctx));
  std::printf("H100 GEMM grid: uncalibrated %.1f%%, calibrated %.1f%%\n", uncalibrated, calibrated);
  EXPECT_LE(calibrated, uncalibrated);
}

TEST(GemmReference, BestShapeMatmulsWithinTwelvePercent) {
  EXPECT_LE(test::print_table(validate_gemm_mamf(test::reference_context())), 12.0);
}

TEST(HfUltrascale, OomClassificationAtLeastNinetyPercent) {
  UltrascaleResult u = validate_hf_ultrascale(test::reference_context());
  std::printf("OOM classification %.1f%% of %d rows (%d false fit, %d false OOM)\n",
              u.oom_accuracy(), u.oom_rows, u.oom_false_fit, u.oom_false_oom);
  test::print_table(u.throughput);
  test::print_table(u.throughput_pp1);
  test::print_table(u.throughput_pp_suspect);
  test::print_table(u.memory);
  ASSERT_EQ(u.oom_rows, 1824);
  EXPECT_GE(u.oom_accuracy(), 90.0);
}

}  // namespace
}  // namespace rapid
