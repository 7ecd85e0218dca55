// Issue bounds for the hardware-aware models: GEMMs against measured grids and the
// nanotron sweep's out-of-memory classification. Errors are printed; bounds are the
// acceptance bounds, not fitted to our output.
#include <gtest/gtest.h>

#include <cstdio>

#include "rapid/spec/yaml_reader.hpp"
#include "validate/ultrascale.hpp"
#include "validation/validation_support.hpp"

namespace rapid {
namespace {

TEST(GemmReference, H100GridUncalibratedWithinTwelvePercent) {
  const TableSpec spec = test::table_spec("gemm_bf16_h100_grid");
  ReferenceContext ctx = test::reference_context();
  const double uncalibrated = test::print_table(run_table(spec, ctx).front());
  EXPECT_LE(uncalibrated, 12.0);
  // The calibrated file shipped in configs/calibration (rapid calibrate on this grid).
  const std::string path =
      std::string(RAPID_SOURCE_DIR) + "/configs/calibration/h100-sxm5-80gb.calibrated.yaml";
  ctx.hardware_override["h100-sxm5-80gb"] = parse_hardware(load_yaml_file(path), path);
  const double calibrated = test::print_table(run_table(spec, ctx).front());
  std::printf("H100 GEMM grid: uncalibrated %.1f%%, calibrated %.1f%%\n", uncalibrated, calibrated);
  EXPECT_LE(calibrated, uncalibrated);
}

TEST(GemmReference, BestShapeMatmulsWithinTwelvePercent) {
  EXPECT_LE(test::print_table(test::table("gemm_best_shape_mamf")), 12.0);
}

TEST(HfUltrascale, OomClassificationAtLeastNinetyFivePercent) {
  const ReferenceContext ctx = test::reference_context();
  const std::vector<TableSpec> specs = load_table_specs(ctx.reference_dir);
  const UltrascaleResult u = validate_ultrascale(prepare_ultrascale(specs, ctx));
  std::printf("OOM classification %.1f%% of %d rows (%d false fit, %d false OOM)\n",
              u.oom_accuracy(), u.oom_rows, u.oom_false_fit, u.oom_false_oom);
  std::printf(
      "throughput (reported, not bounded): trusted %.1f%%, pp = 1 %.1f%%, pre-fix pp %.1f%%; "
      "reserved memory %.1f%%\n",
      u.throughput.mape(), u.throughput_pp1.mape(), u.throughput_pp_suspect.mape(),
      u.memory.mape());
  ASSERT_EQ(u.oom_rows, 1824);
  EXPECT_GE(u.oom_accuracy(), 95.0);
}

}  // namespace
}  // namespace rapid
