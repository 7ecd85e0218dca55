// Time of one compute op (GEMM, attention, memory-bound) on one GPU:
//  - GEMM: the tile/wave model of gemm_model.hpp, in FP8 for ops marked fp8 (Transformer
//    Engine linear layers) and in the compute dtype otherwise;
//  - attention: the fused kernel of the stack (attention_model.hpp);
//  - memory-bound: bytes / (HBM bandwidth * efficiency) + kernel launch overhead
//    (Williams et al., "Roofline", CACM 2009).
// A Contention describes a communication kernel running beside the op on the same GPU
// (NCCL channels, TE userbuffers SMs): it holds SMs and HBM bandwidth, so the op runs on
// fewer SMs (wave quantization changes) and with less bandwidth (docs/model.md
// "Interference").
#pragma once

#include <cstdint>

#include "rapid/cost/attention_model.hpp"
#include "rapid/cost/gemm_model.hpp"
#include "rapid/spec/attention_impl.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

/// What a concurrent communication kernel takes from compute on its GPU.
struct Contention {
  int64_t reserved_sms = 0;  ///< SMs its thread blocks occupy (one per NCCL channel)
  double hbm_Bps = 0;        ///< HBM bandwidth its copies and reductions use
  bool operator==(const Contention&) const = default;
};

class ComputeCost {
 public:
  /// `dtype` is the training dtype: its tensor peak is peak_FLOPs() (MFU); GEMMs run in it
  /// (bf16 when it is fp8: only ops marked fp8 run in FP8). `attention` is the fused
  /// kernel the stack runs on this GPU; `contention` what a concurrent collective holds;
  /// `quantized` the dtype of the ops marked fp8 (FP4 under the nvfp4 recipe, when the GPU
  /// has an FP4 peak).
  ComputeCost(const HardwareSpec& hw, DType dtype, AttentionImpl attention = AttentionImpl::FA2,
              Contention contention = {}, DType quantized = DType::FP8);

  /// Seconds for a GEMM, Attention or MemoryBound op (flops, bytes per GPU; see op.hpp).
  /// Collective and P2P ops are not handled here (CollectiveCost). Thread-safe; GEMM and
  /// attention times are memoized per thread by shape.
  double time(const Op& op) const;

  /// Dense tensor-core peak of the training dtype, FLOP/s.
  double peak_FLOPs() const { return peak_; }
  /// Seconds to stream `bytes` through HBM at the achievable bandwidth, plus one launch.
  double memory_time(double bytes) const;

  const GemmModel& gemm() const { return gemm_; }
  const AttentionModel& attention() const { return attention_; }
  const Contention& contention() const { return contention_; }

 private:
  double peak_;      // FLOP/s
  double hbm_rate_;  // B/s achieved by memory-bound elementwise kernels
  double launch_s_;
  Contention contention_;
  GemmModel gemm_;
  GemmModel gemm_fp8_;
  AttentionModel attention_;
  AttentionModel attention_fp8_;
  uint64_t id_;  // memo key of this instance
};

}  // namespace rapid
