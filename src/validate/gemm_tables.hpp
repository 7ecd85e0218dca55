// GEMM model against measured GEMM throughput (../shared/reference).
#pragma once

#include "validation_tables.hpp"

namespace rapid {

/// gemm_bf16_h100_grid.csv: achieved bf16 TFLOP/s of m x n x k GEMMs on H100 SXM
/// (configs/hardware/h100-sxm5-80gb.yaml as shipped: uncalibrated on this grid).
ValidationTable validate_gemm_h100_grid(const ReferenceContext& ctx);

/// gemm_best_shape_mamf.csv: the best-shape matmul TFLOP/s of A100 and H100 (bf16 rows;
/// A100-PCIe uses the SXM4 file: same SMs and clock, lower power limit).
ValidationTable validate_gemm_mamf(const ReferenceContext& ctx);

}  // namespace rapid
