// End-to-end calibration: the efficiency factors of one GPU type fitted to published
// training-step measurements on that GPU (one set per GPU type, no per-row tuning).
#pragma once

#include <string>
#include <vector>

#include "validation_tables.hpp"

namespace rapid {

struct EndToEndFit {
  std::string hardware;  ///< configs/hardware name
  std::vector<std::string> tables;
  struct Param {
    std::string key;  ///< key under `efficiency:` in the hardware file
    double before, after;
  };
  std::vector<Param> params;
  double mape_before = 0, mape_after = 0;
  int rows = 0;
};

/// Fits, by bounded Nelder-Mead on the sum of squared log errors:
///  - a100-sxm4-80gb on megatron_sc21_table1 + korthikanti_2022_table5:
///    efficiency.elementwise (unfused softmax/dropout and the other memory-bound kernels)
///    and efficiency.step;
///  - h100-sxm5-80gb on megatron_core_r080: efficiency.elementwise and efficiency.step.
/// GEMM efficiency stays at its measured best-achievable value (MAMF) and attention at
/// FlashAttention-2's measured share of the peak: they are not refitted here.
std::vector<EndToEndFit> fit_end_to_end(const ReferenceContext& ctx);

}  // namespace rapid
