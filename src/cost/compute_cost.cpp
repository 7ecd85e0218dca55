#include "rapid/cost/compute_cost.hpp"

#include <algorithm>
#include <string_view>

#include "op_time_cache.hpp"

namespace rapid {

namespace {
DType gemm_dtype(DType training) {
  return training == DType::FP8 ? DType::BF16 : training;
}
/// The dtype of the GEMMs marked fp8: `quantized` when the GPU has its peak, else FP8 when
/// it has that, else the training dtype's (bf16 for fp8).
DType quantized_dtype(const HardwareSpec& hw, DType training, DType quantized) {
  for (DType t : {quantized, DType::FP8})
    if (hw.tensor_peak_FLOPs[static_cast<int>(t)] > 0) return t;
  return gemm_dtype(training);
}
}  // namespace

ComputeCost::ComputeCost(const HardwareSpec& hw, DType dtype, AttentionImpl attention,
                         Contention contention, DType quantized)
    : peak_(hw.tensor_peak_FLOPs[static_cast<int>(dtype)] > 0
                ? hw.tensor_peak_FLOPs[static_cast<int>(dtype)]
                : hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)]),
      hbm_rate_(std::max(0.1 * hw.hbm_bandwidth_Bps * hw.elementwise_efficiency,
                         hw.hbm_bandwidth_Bps * hw.elementwise_efficiency - contention.hbm_Bps)),
      launch_s_(hw.kernel_launch_s),
      contention_(contention),
      gemm_(hw, gemm_dtype(dtype), contention.reserved_sms, contention.hbm_Bps),
      gemm_fp8_(hw, quantized_dtype(hw, dtype, quantized), contention.reserved_sms,
                contention.hbm_Bps),
      attention_(hw, gemm_dtype(dtype), attention, contention.reserved_sms),
      attention_fp8_(hw, DType::FP8, attention, contention.reserved_sms),
      id_(detail::OpTimeCache::next_model_id()) {}

double ComputeCost::memory_time(double bytes) const {
  return bytes / hbm_rate_ + launch_s_;
}

double ComputeCost::time(const Op& op) const {
  switch (op.kind) {
    case OpKind::Gemm:
      return detail::OpTimeCache::get({id_, op.m, op.n, op.k, op.batch, op.fp8 ? 1u : 0u}, [&] {
        return (op.fp8 ? gemm_fp8_ : gemm_).time(op.m, op.n, op.k, op.batch).time_s;
      });
    case OpKind::Attention: {
      // Key: direction (the model reads it from the op name), mask, precision, GQA group.
      const bool backward = std::string_view(op.name).ends_with("_bwd");
      const uint32_t extra = 2u | (backward ? 4u : 0u) | (op.causal ? 8u : 0u) |
                             (op.fp8 ? 16u : 0u) | (static_cast<uint32_t>(op.gqa_group) << 5);
      return detail::OpTimeCache::get({id_, op.m, op.n, op.k, op.batch, extra}, [&] {
        return (op.fp8 ? attention_fp8_ : attention_).time(op);
      });
    }
    case OpKind::MemoryBound:
      return memory_time(op.bytes);
    case OpKind::Collective:
    case OpKind::P2P:
    case OpKind::DecodeAttention:  // serving only: cost/decode_attention.hpp times it
      break;
  }
  return 0.0;
}

}  // namespace rapid
