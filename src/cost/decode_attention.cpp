#include "rapid/cost/decode_attention.hpp"

#include <algorithm>

namespace rapid {

DecodeAttentionTime decode_attention_time(const HardwareSpec& hw, const Op& op,
                                          double attention_efficiency) {
  DecodeAttentionTime t;
  if (op.batch <= 0) return t;
  t.bytes = op.bytes;
  t.flops = op.flops;
  t.memory_s = t.bytes / (hw.hbm_bandwidth_Bps * hw.memory_efficiency);
  const double peak = hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)];
  t.compute_s = peak > 0 ? t.flops / (peak * std::max(0.05, attention_efficiency)) : 0;
  // Two kernels: the split-KV main kernel and the reduction of its partial results.
  t.time_s = std::max(t.memory_s, t.compute_s) + 2.0 * hw.kernel_launch_s;
  return t;
}

}  // namespace rapid
