// Time of one compute op (GEMM, attention, memory-bound) on one GPU: roofline with
// efficiency factors (Williams et al., "Roofline", CACM 2009): time = max(FLOPs / (peak *
// efficiency), bytes / (HBM bandwidth * efficiency)) + kernel launch overhead.
#pragma once

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

class ComputeCost {
 public:
  /// `dtype` selects the tensor-core peak used by GEMM and attention ops.
  ComputeCost(const HardwareSpec& hw, DType dtype);

  /// Seconds for a GEMM, Attention or MemoryBound op (flops, bytes per GPU; see op.hpp).
  /// Collective and P2P ops are not handled here (CollectiveCost).
  double time(const Op& op) const;

  /// Dense tensor-core peak of the compute dtype, FLOP/s.
  double peak_FLOPs() const { return peak_; }
  /// Seconds to stream `bytes` through HBM at the achievable bandwidth, plus one launch.
  double memory_time(double bytes) const;

 private:
  double peak_;       // FLOP/s
  double gemm_rate_;  // FLOP/s achieved by large GEMMs
  double attn_rate_;  // FLOP/s achieved by fused attention
  double hbm_rate_;   // B/s achieved by streaming kernels
  double launch_s_;
};

}  // namespace rapid
