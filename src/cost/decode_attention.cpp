#include "rapid/cost/decode_attention.hpp"

#include <algorithm>

namespace rapid {

DecodeAttentionTime decode_attention_time(const HardwareSpec& hw, const DecodeAttentionShape& s,
                                          double element_bytes, double attention_efficiency) {
  DecodeAttentionTime t;
  if (s.sequences <= 0) return t;
  // The cache is read once (split-KV: each block streams its share of one sequence's keys
  // and values for all query heads of a K/V head), plus the queries and the outputs.
  const double qo = 2.0 * static_cast<double>(s.sequences * s.query_heads) *
                    static_cast<double>(s.score_dim + s.value_dim) * element_bytes;
  t.bytes = s.cached_tokens * s.kv_elements_per_token * element_bytes + qo;
  t.flops = 2.0 * s.cached_tokens * static_cast<double>(s.query_heads) *
            static_cast<double>(s.score_dim + s.value_dim);
  t.memory_s = t.bytes / (hw.hbm_bandwidth_Bps * hw.memory_efficiency);
  const double peak = hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)];
  t.compute_s = peak > 0 ? t.flops / (peak * std::max(0.05, attention_efficiency)) : 0;
  // Two kernels: the split-KV main kernel and the reduction of its partial results.
  t.time_s = std::max(t.memory_s, t.compute_s) + 2.0 * hw.kernel_launch_s;
  return t;
}

}  // namespace rapid
