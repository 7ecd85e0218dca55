// The GEMM every chip test times (tests/unit/chip_peaks_*_test.cpp): 8192^3 on 128 x 256
// tiles without split-K, and its compute time derived by hand from datasheet numbers.
#pragma once

#include "rapid/cost/gemm_model.hpp"

namespace rapid::test {

/// The model's timing of the 8192^3 GEMM on 128 x 256 tiles, in `dtype`, on `hw`.
inline GemmTiming chip_gemm(const HardwareSpec& hw, DType dtype) {
  return GemmModel(hw, dtype).time_with(8192, 8192, 8192, 1, 128, 256, 1);
}

/// Its compute time by hand (docs/model.md sec 4): `waves` waves of 128 x 256 tiles, each
/// 2 x 128 x 256 x 8192 FLOP at one SM's share of the dense peak times the GEMM
/// efficiency plus 0.7 us of prologue; then the last wave's `last` C tiles (128 x 256
/// elements of `elem_bytes`) written at the HBM bandwidth x 0.85.
inline double chip_gemm_compute_s(double peak_FLOPs, double sms, double efficiency, int waves,
                                  int last, double hbm_Bps, double elem_bytes) {
  const double tile_s = 2.0 * 128 * 256 * 8192 / (peak_FLOPs / sms * efficiency) + 0.7e-6;
  return waves * tile_s + last * 128.0 * 256 * elem_bytes / (hbm_Bps * 0.85);
}

}  // namespace rapid::test
