// What a training step runs besides the model and the layout: batch, precision, and the
// software stack (framework_spec.hpp) with the job's overrides of its defaults.
#pragma once

#include <cstdint>
#include <string>

#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/hardware_spec.hpp"

namespace rapid {

class YamlMap;

/// Resolved training settings: every field starts at the stack's value and a job key of
/// the same name overrides it.
struct TrainingSpec {
  int64_t global_batch_size = 0;  ///< gbs, sequences per step
  int64_t seq_length = 0;         ///< tokens per sequence
  /// Compute dtype: bf16/fp16 for every GEMM, or fp8 (bf16 with Transformer Engine FP8 on
  /// the linear layers, framework.fp8).
  DType dtype = DType::BF16;
  FrameworkSpec framework;  ///< the stack (attention kernels, fusions, FP8 recipe, factors)

  int grad_bytes = 4;                     ///< bytes per main-gradient element
  int grad_reduce_bytes = 4;              ///< bytes per element sent in the DP gradient reduction
  int optimizer_bytes = 12;               ///< Adam m + v + master weights (the stack's)
  bool overlap_grad_reduce = true;        ///< DP reduction in buckets during backward
  bool overlap_param_gather = true;       ///< ZeRO parameter all-gathers prefetched
  bool tp_comm_overlap = false;           ///< TP collectives pipelined with their GEMMs (TE)
  double host_overhead_per_op_s = 10e-6;  ///< host time to issue one op
  /// Compute speed of this stack's kernels relative to the stack the end-to-end factors
  /// were fitted on; multiplies the step efficiency.
  double compute_efficiency = 1.0;
  /// Sequence parallel keeps the all-gathered QKV/MLP-up inputs for backward instead of
  /// gathering them again (nanotron; Megatron re-gathers).
  bool sp_keeps_gathered_inputs = false;
  /// Balance pipeline stages by layers plus embedding/LM-head work (uneven split) even when
  /// pp divides the layers; an uneven number of layers is always balanced this way.
  bool balance_pipeline_stages = false;
  double grad_bucket_bytes = 160e6;                  ///< DP bucket
  double memory_reserve_bytes = 2.0 * (1ull << 30);  ///< CUDA context, cuBLAS, NCCL buffers
  double fragmentation = 0.05;  ///< allocator fragmentation, fraction of activations
  // Model-state storage (FrameworkSpec's fields of the same names).
  bool master_weights_in_params = false;  ///< fp32 parameters are the master weights
  bool fp32_grad_copy = true;             ///< the optimizer keeps an fp32 copy of 16-bit grads
  int zero3_prefetch_units = 1;           ///< ZeRO-3 units gathered ahead of the one computing
  /// ZeRO-3's per-unit gathers stay prefetched though overlap_param_gather was not credited
  /// on this GPU: set by stack_training() for a stack that prefetches units by design
  /// (zero3_prefetch_units > 0; docs/model.md sec 9).
  bool zero3_prefetch_credited = false;
  bool zero3_grad_buffers = false;  ///< ZeRO-3 unit gradient + its reduce-dtype copy
  int grad_bucket_buffers = 0;      ///< DP gradient buckets held as separate buffers
  bool compile = false;             ///< torch.compile fuses the elementwise ops

  /// The layers' attention is a fused kernel (the stack's first choice is not `unfused`).
  bool fused_attention() const {
    return !framework.attention.empty() && framework.attention.front() != AttentionImpl::Unfused;
  }
  /// Linear-layer GEMMs run in FP8 (training.dtype fp8).
  bool fp8() const { return dtype == DType::FP8; }
  /// The parameter all-gathers of ZeRO stage `zero_stage` run beside the compute: ZeRO-1/2's
  /// gather of the updated weights with overlap_param_gather; ZeRO-3's per-unit gathers with
  /// it or with the stack's own prefetch (zero3_prefetch_credited). One rule for the
  /// analytical evaluator and the DES.
  bool param_gather_overlapped(int zero_stage) const {
    return overlap_param_gather || (zero_stage >= 3 && zero3_prefetch_credited);
  }
};

/// Copies the stack's defaults into the flat fields of `t` (t.framework set).
void apply_framework_defaults(TrainingSpec& t);

/// Reads the job's `training:` mapping: `framework` (default megatron-core-0.8, found from
/// `anchor` as configs are), then every other key overriding the stack's value;
/// seq_length falls back to `model_seq_length` (required when that is 0: the model file sets
/// none). Throws InputError on a missing, invalid or unknown key and on an unknown stack
/// (listing the known ones).
TrainingSpec parse_training(const YamlMap& m, int64_t model_seq_length, const std::string& anchor);

/// The keys of a `training:` mapping other than `framework`, over the stack defaults already
/// in `t` (apply_framework_defaults); checks that no unknown key remains.
void read_training_keys(const YamlMap& m, int64_t model_seq_length, TrainingSpec& t);

/// The stack a job gets when it names none.
inline constexpr const char* kDefaultFramework = "megatron-core-0.8";

}  // namespace rapid

namespace rapid {

/// `hw` as stack `t.framework` runs it: the stack's end-to-end factors for this GPU type
/// (step, elementwise) in place of the hardware defaults.
HardwareSpec stack_hardware(const HardwareSpec& hw, const TrainingSpec& t);

/// The overlaps `t` asks for (tp_comm_overlap, overlap_grad_reduce, overlap_param_gather) as
/// OverlapBits.
unsigned requested_overlaps(const TrainingSpec& t);

/// The overlaps `t` asks for that the runs behind the stack's end-to-end factors for `hw`
/// did not have (OverlapBits; EndToEndFactors::fitted_overlaps): 0 when every one is credited.
unsigned uncredited_overlaps(const HardwareSpec& hw, const TrainingSpec& t);

/// `t` as the model runs it on `hw`: the overlaps of uncredited_overlaps() off (their
/// collectives exposed, as in the runs the factors were fitted on; docs/model.md sec 9),
/// but for ZeRO-3's per-unit prefetch of a stack with zero3_prefetch_units > 0, which is the
/// stack's structure rather than an opt-in overlap (zero3_prefetch_credited).
TrainingSpec stack_training(const HardwareSpec& hw, const TrainingSpec& t);

/// "tp_comm_overlap, overlap_param_gather": the training keys of OverlapBits `bits`.
std::string overlap_names(unsigned bits);

/// The attention kernel the layers run on `hw`: the stack's first choice the GPU has;
/// FlashAttention-2 when the GPU has none of the fused ones the stack lists.
AttentionImpl attention_kernel(const HardwareSpec& hw, const TrainingSpec& t);

}  // namespace rapid
