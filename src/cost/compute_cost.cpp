#include "rapid/cost/compute_cost.hpp"

#include <algorithm>
#include <string_view>

#include "op_time_cache.hpp"

namespace rapid {

ComputeCost::ComputeCost(const HardwareSpec& hw, DType dtype)
    : peak_(hw.tensor_peak_FLOPs[static_cast<int>(dtype)] > 0
                ? hw.tensor_peak_FLOPs[static_cast<int>(dtype)]
                : hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)]),
      hbm_rate_(hw.hbm_bandwidth_Bps * hw.elementwise_efficiency),
      launch_s_(hw.kernel_launch_s),
      gemm_(hw, dtype),
      attention_(hw, dtype),
      id_(detail::OpTimeCache::next_model_id()) {}

double ComputeCost::memory_time(double bytes) const {
  return bytes / hbm_rate_ + launch_s_;
}

double ComputeCost::time(const Op& op) const {
  switch (op.kind) {
    case OpKind::Gemm:
      return detail::OpTimeCache::get({id_, op.m, op.n, op.k, op.batch, 0}, [&] {
        return gemm_.time(op.m, op.n, op.k, op.batch).time_s;
      });
    case OpKind::Attention: {
      // Key: direction (the model reads it from the op name), mask, GQA group.
      const bool backward = std::string_view(op.name).ends_with("_bwd");
      const uint32_t extra = 1u | (backward ? 2u : 0u) | (op.causal ? 4u : 0u) |
                             (static_cast<uint32_t>(op.gqa_group) << 3);
      return detail::OpTimeCache::get({id_, op.m, op.n, op.k, op.batch, extra},
                                      [&] { return attention_.time(op); });
    }
    case OpKind::MemoryBound:
      return memory_time(op.bytes);
    case OpKind::Collective:
    case OpKind::P2P:
      break;
  }
  return 0.0;
}

}  // namespace rapid
