#include "gemm_tables.hpp"

#include <fmt/format.h>

#include "csv_table.hpp"
#include "rapid/cost/gemm_model.hpp"

namespace rapid {

namespace {
double model_tflops(const GemmModel& g, int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) /
         g.time(m, n, k).time_s / 1e12;
}
}  // namespace

ValidationTable validate_gemm_h100_grid(const ReferenceContext& ctx) {
  const std::string file = "gemm_bf16_h100_grid.csv";
  CsvTable t(reference_file(ctx, file));
  HardwareSpec hw = load_hardware(ctx, "h100-sxm5-80gb");
  GemmModel g(hw, DType::BF16);
  ValidationTable out{file, "bf16 GEMM TFLOP/s", {}};
  for (size_t i = 0; i < t.rows(); ++i) {
    const int64_t m = t.integer(i, "m"), n = t.integer(i, "n"), k = t.integer(i, "k");
    GemmTiming timing = g.time(m, n, k);
    out.rows.push_back({fmt::format("{}x{}x{} (tile {}x{}, split-K {}, {} waves)", m, n, k,
                                    timing.tile_m, timing.tile_n, timing.split_k, timing.waves),
                        model_tflops(g, m, n, k), t.number(i, "tflops")});
  }
  return out;
}

ValidationTable validate_gemm_mamf(const ReferenceContext& ctx) {
  const std::string file = "gemm_best_shape_mamf.csv";
  CsvTable t(reference_file(ctx, file));
  const HardwareSpec a100 = load_hardware(ctx, "a100-sxm4-80gb");
  const HardwareSpec h100 = load_hardware(ctx, "h100-sxm5-80gb");
  ValidationTable out{file, "best-shape matmul TFLOP/s", {}};
  for (size_t i = 0; i < t.rows(); ++i) {
    const std::string& gpu = t.text(i, "gpu");
    const std::string& dtype = t.text(i, "dtype");
    const HardwareSpec& hw = gpu.starts_with("H100") ? h100 : a100;
    const DType dt = dtype == "fp8" ? DType::FP8 : DType::BF16;
    GemmModel g(hw, dt);
    const int64_t m = t.integer(i, "m"), n = t.integer(i, "n"), k = t.integer(i, "k");
    out.rows.push_back({fmt::format("{} {} {}x{}x{}", gpu, dtype, m, n, k),
                        model_tflops(g, m, n, k), t.number(i, "achieved_tflops")});
  }
  return out;
}

}  // namespace rapid
