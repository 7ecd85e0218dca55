// Framework behaviour of a training step (what Megatron-LM / PyTorch do around the model):
// batch, precision, attention kernel, gradient reduction and overlap, memory reserve.
#pragma once

#include <cstdint>

#include "rapid/spec/hardware_spec.hpp"

namespace rapid {

class YamlMap;

struct TrainingSpec {
  int64_t global_batch_size = 0;     ///< gbs, sequences per step
  int64_t seq_length = 0;            ///< tokens per sequence
  DType dtype = DType::BF16;         ///< compute dtype of GEMMs and activations
  bool flash_attention = true;       ///< fused (FlashAttention-2) or unfused softmax attention
  int grad_bytes = 4;                ///< bytes per main-gradient element (Megatron fp32 main grads)
  int grad_reduce_bytes = 4;         ///< bytes per element sent in the DP gradient reduction
  int optimizer_bytes = 12;          ///< Adam: fp32 master weights + m + v = 4 + 4 + 4
  bool overlap_grad_reduce = true;   ///< DP reduction in buckets during backward
  bool overlap_param_gather = true;  ///< ZeRO parameter all-gathers prefetched
  bool tp_comm_overlap = false;      ///< TP collectives pipelined with their GEMMs (TE)
  double host_overhead_per_op_s = 10e-6;  ///< host time to issue one op (PyTorch eager)
  /// Compute speed of this framework's kernels relative to Megatron-LM's (fused kernels,
  /// Transformer Engine); multiplies the hardware's step efficiency.
  double framework_efficiency = 1.0;
  /// Sequence parallel keeps the all-gathered QKV/MLP-up inputs for backward instead of
  /// gathering them again (nanotron; Megatron re-gathers).
  bool sp_keeps_gathered_inputs = false;
  /// Balance pipeline stages by layers plus embedding/LM-head work (uneven split) even when
  /// pp divides the layers; an uneven number of layers is always balanced this way.
  bool balance_pipeline_stages = false;
  double grad_bucket_bytes = 160e6;  ///< DP bucket (Megatron-core: 40M fp32 elements)
  double memory_reserve_bytes = 2.0 * (1ull << 30);  ///< CUDA context, cuBLAS, NCCL buffers
  double fragmentation = 0.05;  ///< allocator fragmentation, fraction of activations
};

/// Reads the job's `training:` mapping; seq_length falls back to `model_seq_length`.
/// Throws InputError on a missing/invalid/unknown key.
TrainingSpec parse_training(const YamlMap& m, int64_t model_seq_length);

}  // namespace rapid
