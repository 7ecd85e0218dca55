// Time of one compute op (GEMM, attention, memory-bound) on one GPU:
//  - GEMM: the tile/wave model of gemm_model.hpp;
//  - attention: fused attention from its FlashAttention-2 tiles (attention_model.hpp);
//  - memory-bound: bytes / (HBM bandwidth * efficiency) + kernel launch overhead
//    (Williams et al., "Roofline", CACM 2009).
#pragma once

#include <cstdint>

#include "rapid/cost/attention_model.hpp"
#include "rapid/cost/gemm_model.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

class ComputeCost {
 public:
  /// `dtype` selects the tensor-core peak used by GEMM and attention ops.
  ComputeCost(const HardwareSpec& hw, DType dtype);

  /// Seconds for a GEMM, Attention or MemoryBound op (flops, bytes per GPU; see op.hpp).
  /// Collective and P2P ops are not handled here (CollectiveCost). Thread-safe; GEMM and
  /// attention times are memoized per thread by shape.
  double time(const Op& op) const;

  /// Dense tensor-core peak of the compute dtype, FLOP/s.
  double peak_FLOPs() const { return peak_; }
  /// Seconds to stream `bytes` through HBM at the achievable bandwidth, plus one launch.
  double memory_time(double bytes) const;

  const GemmModel& gemm() const { return gemm_; }
  const AttentionModel& attention() const { return attention_; }

 private:
  double peak_;      // FLOP/s
  double hbm_rate_;  // B/s achieved by memory-bound elementwise kernels
  double launch_s_;
  GemmModel gemm_;
  AttentionModel attention_;
  uint64_t id_;  // memo key of this instance
};

}  // namespace rapid
