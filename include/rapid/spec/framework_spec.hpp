// The software stack a job runs (configs/frameworks/NAME.yaml, docs/architecture.md
// "Software stacks"): what differs between Megatron-Core, NeMo, nanotron, DeepSpeed and the rest at
// equal model, layout and hardware. A stack file names its attention kernels, which
// elementwise ops it fuses, how it runs FP8 (Transformer Engine's recipe), which
// communication it overlaps by default, its host overhead and bucket sizes, the features
// it supports, and its end-to-end efficiency factors per GPU type. `base: OTHER` inherits
// every key OTHER sets; the file overrides what it names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rapid/spec/attention_impl.hpp"
#include "rapid/spec/hardware_spec.hpp"

namespace rapid {

/// Elementwise ops a stack fuses into one kernel (one read and one write of each operand);
/// unfused they run as separate kernels, each reading and writing its operands.
struct Fusions {
  bool bias_dropout_add = true;  ///< bias + dropout + residual add (Megatron --bias-dropout-fusion)
  bool bias_activation = true;   ///< bias + GELU or SwiGLU (Megatron --bias-gelu/swiglu-fusion)
  bool rope = true;              ///< rotary embedding of Q and K in one kernel (apply_rope_fusion)
  bool masked_softmax = true;    ///< unfused attention: scale + mask + softmax in one kernel
  bool cross_entropy = false;    ///< vocab-parallel cross entropy in one kernel
  bool norm_cast = true;         ///< FP8: the norm writes its FP8 output (TE LayerNormLinear)
  /// RMSNorm/LayerNorm as one kernel (TE, Apex, Triton, torch.compile); false: PyTorch
  /// eager's composite rms_norm, an fp32 upcast, pow, mean, rsqrt, two products and the cast
  /// back as separate kernels (aten/src/ATen/native/layer_norm.cpp rms_norm_symint).
  bool norm = true;
};

/// How Transformer Engine scales the low-precision tensors of a linear layer (the stack's
/// `fp8: {recipe: ...}`; transformer_engine/common/recipe/__init__.py, TE "Low precision
/// training" docs; the cast traffic each costs is derived in docs/model.md sec 12):
///  - delayed: DelayedScaling, one per-tensor scale from the amax history (the default);
///  - tensorwise: Float8CurrentScaling, one per-tensor scale from the tensor's own amax;
///  - rowwise: Float8BlockScaling (DeepSeek-V3's), an FP32 scale per 1x128 block of
///    activations and gradients and per 128x128 block of weights;
///  - mxfp8: MXFP8BlockScaling, E4M3 everywhere with an E8M0 scale per 32 elements (sm_100);
///  - nvfp4: NVFP4BlockScaling, E2M1 with an E4M3 scale per 16 elements (16x16 blocks for
///    weights) and a per-tensor FP32 scale; GEMMs at the FP4 tensor peak (sm_100).
enum class Fp8Scaling : uint8_t { Delayed, Tensorwise, Rowwise, Mxfp8, Nvfp4 };
inline constexpr const char* kFp8ScalingNames[] = {"delayed", "tensorwise", "rowwise", "mxfp8",
                                                   "nvfp4"};
/// MXFP8 and NVFP4 GEMMs need Blackwell's block-scaled tensor cores (compute capability
/// 10.0: TE's check_mxfp8_support / check_nvfp4_support); the others run from sm_89.
inline bool needs_block_scaled_mma(Fp8Scaling s) {
  return s == Fp8Scaling::Mxfp8 || s == Fp8Scaling::Nvfp4;
}
/// The dtype the recipe's GEMMs run in: FP4 (E2M1) for nvfp4, FP8 otherwise.
inline DType quantized_gemm_dtype(Fp8Scaling s) {
  return s == Fp8Scaling::Nvfp4 ? DType::FP4 : DType::FP8;
}

/// FP8 training as Transformer Engine runs it (training.dtype: fp8). Linear layers run
/// their forward (fprop), data-gradient (dgrad) and weight-gradient (wgrad) GEMMs in FP8
/// (E4M3 forward, E5M2 gradients: the HYBRID format); the rest stays in bf16 unless named.
struct Fp8Recipe {
  bool dgrad = true;       ///< dgrad GEMMs in FP8
  bool wgrad = true;       ///< wgrad GEMMs in FP8
  bool attention = false;  ///< FP8 dot-product attention (fp8_dpa)
  bool lm_head = false;    ///< the output layer in FP8 (Megatron keeps it in bf16)
  /// Weights cast to FP8 (and transposed) once per step, not once per micro-batch
  /// (TE's is_first_microbatch weight cache).
  bool cache_weights = true;
  int64_t amax_history_len = 1024;          ///< delayed scaling window (TE DelayedScaling)
  Fp8Scaling recipe = Fp8Scaling::Delayed;  ///< `recipe:` (the GEMM dtype: FP4 for nvfp4)
};

/// Communication overlaps a stack may run (the `training:` keys tp_comm_overlap,
/// overlap_grad_reduce, overlap_param_gather), as bits.
enum OverlapBits : unsigned {
  kOverlapTpComm = 1u,       ///< TP collectives pipelined with their GEMMs (TE userbuffers)
  kOverlapGradReduce = 2u,   ///< DP gradient reduction in buckets during backward
  kOverlapParamGather = 4u,  ///< distributed-optimizer parameter all-gathers prefetched
  kOverlapAll = 7u,
};

/// End-to-end factors of one GPU type under this stack (fitted; docs/model.md sec 9).
struct EndToEndFactors {
  double step = 1.0;         ///< sustained fraction of isolated-kernel speed in a step
  double elementwise = 0.8;  ///< memory-bound elementwise ops' fraction of HBM bandwidth
  /// The overlaps the runs these factors were fitted on used (`fitted_overlaps:`, OverlapBits;
  /// all when the entry does not say). The factors absorb what the model gets wrong about
  /// those overlaps; an overlap the runs did not have is not credited on this GPU
  /// (stack_training(), docs/model.md sec 9 "Overlaps the factors were fitted with").
  unsigned fitted_overlaps = kOverlapAll;
};

struct FrameworkSpec {
  std::string name;
  std::string path;  ///< file it was read from (with its bases: "a.yaml <- b.yaml")
  /// Attention kernels in order of preference; the first the GPU has (HardwareSpec
  /// attention_kernels) runs. `unfused` is always available.
  std::vector<AttentionImpl> attention{AttentionImpl::FA2};
  Fusions fusions;
  Fp8Recipe fp8;

  // Defaults of the job's `training:` keys of the same names.
  bool tp_comm_overlap = false;      ///< TP collectives pipelined with their GEMMs (TE userbuffers)
  bool overlap_grad_reduce = true;   ///< DP reduction in buckets during backward
  bool overlap_param_gather = true;  ///< ZeRO parameter all-gathers prefetched
  int grad_bytes = 4;                ///< bytes per main-gradient element
  int grad_reduce_bytes = 4;         ///< bytes per element in the DP gradient reduction
  /// Optimizer state per parameter (sharded under ZeRO >= 1): Adam m + v in fp32 and the
  /// master weights, fp32 (4) or the 16-bit remainder beside bf16 weights (2, Apex
  /// DistributedFusedAdam store_param_remainders): 12 or 10.
  int optimizer_bytes = 12;
  double host_overhead_per_op_s = 10e-6;  ///< host time to issue one op
  double grad_bucket_bytes = 160e6;       ///< DP bucket size
  double compute_efficiency = 1.0;  ///< kernels relative to the stack the factors were fitted on
  bool sp_keeps_gathered_inputs = false;  ///< SP keeps the gathered GEMM inputs for backward
  double memory_reserve_bytes = 2.0 * (1ull << 30);  ///< CUDA context, workspaces, NCCL buffers
  double fragmentation = 0.05;  ///< allocator fragmentation, fraction of activations
  /// Bytes alive per logit (a token x vocabulary-shard element) at the loss's peak: the
  /// 16-bit logits and the fp32 copies its cross entropy makes.
  double loss_bytes_per_logit = 6;
  /// Bytes per logit the stack still holds after the LM head's backward, while the layers'
  /// backward (and its recompute) runs: 0 where the loss's buffers die with its backward
  /// (Megatron, torchtitan's `del pred`), 2 where the trainer keeps the 16-bit logits for its
  /// metrics (Composer's state.outputs). docs/model.md sec 3.
  double loss_bytes_held_per_logit = 0;

  // Model-state storage (defaults of the job's `training:` keys of the same names;
  // docs/model.md sec 3 "Model states by ZeRO stage").
  /// The fp32 master weights are the parameters themselves (FSDP2 with fp32 sharded
  /// parameters and bf16 compute: 4-byte parameters, Adam keeps its two moments, 8 bytes)
  /// instead of a copy beside 16-bit parameters (Megatron, DeepSpeed: 2 + 12 bytes).
  bool master_weights_in_params = false;
  /// With 16-bit gradients the optimizer holds an fp32 copy of its gradient shard through
  /// the step's peak (Megatron-Core distributed optimizer: 4 + 16/d bytes per parameter);
  /// false where it converts each sub-group during the step only (DeepSpeed ZeRO:
  /// 2 + 2 + 12 bytes, Rajbhandari et al. 2020 sec 3).
  bool fp32_grad_copy = true;
  /// ZeRO-3/FSDP units prefetched beyond the one computing: 1 + this many gathered units
  /// are alive (FSDP2's implicit one-ahead prefetch; DeepSpeed's prefetch bucket).
  int zero3_prefetch_units = 1;
  /// ZeRO-3/FSDP: a unit's unsharded 16-bit gradient and its copy in the reduction dtype are
  /// alive together while its reduce-scatter is set up (FSDP2 foreach_reduce).
  bool zero3_grad_buffers = false;
  /// DP gradient buckets held as buffers of their own (DeepSpeed contiguous_gradients: one,
  /// two with overlap_comm), each grad_bucket_size bytes; 0 where buckets are views into the
  /// gradient buffer (Megatron-Core, PyTorch DDP gradient_as_bucket_view).
  int grad_bucket_buffers = 0;
  /// torch.compile (Inductor) on the layers: it fuses each norm, the activation with its
  /// product, the rotary embedding and the residual add into single kernels, whatever
  /// `fusions` (the eager kernels) says (LayerDims::for_training).
  bool compile = false;

  /// SMs a TP-overlap kernel holds beside its GEMM (Transformer Engine userbuffers,
  /// transformer_engine/pytorch/module/base.py initialize_ub defaults): all-gathers by
  /// ring exchange on the copy engines (1 SM), reduce-scatters by the pipeline and bulk
  /// methods (16 SMs).
  int64_t tp_overlap_sms_gather = 1;
  int64_t tp_overlap_sms_scatter = 16;

  // Features (a layout that needs a missing one is not a legal point).
  bool supports_recompute_num_layers = true;  ///< partial full recompute (uniform / block)
  bool supports_cpu_offload = false;          ///< activation offload to host memory
  bool cpu_offload_with_pp = false;           ///< offload also with pipeline parallelism
  bool interleaved_pp2 = true;                ///< the interleaved schedule with 2 stages
  /// Per-op selective recompute (`recompute: op`, torchtitan selective_ac_option "op").
  bool supports_op_recompute = false;
  /// TP overlap without `compile` (torchtitan's async TP is an Inductor pass: it needs it).
  bool tp_comm_overlap_without_compile = true;

  /// Keyed by hardware name; "default" for any other GPU.
  std::map<std::string, EndToEndFactors> end_to_end;

  /// The factors for GPU `hardware` (its entry, else "default", else the built-in defaults;
  /// `found` says which).
  EndToEndFactors factors_for(const std::string& hardware, bool* found = nullptr) const;
  /// The attention kernel that runs: the first of `attention` in `available`.
  AttentionImpl pick_attention(const std::vector<AttentionImpl>& available) const;
};

/// Names of the stacks in configs/frameworks/ found from `anchor` (config_search_dirs).
std::vector<std::string> known_frameworks(const std::string& anchor);

/// Loads configs/frameworks/NAME.yaml (found from `anchor`, config_search_dirs) with its
/// base chain. Throws InputError naming `referrer`/`key` and listing the known stacks when
/// NAME is unknown, and the stack file/key for a bad value or a base cycle.
FrameworkSpec load_framework(const std::string& name, const std::string& anchor,
                             const std::string& referrer, const std::string& key);

/// Parses one stack mapping over `base` (its defaults). `file` names it in errors.
FrameworkSpec parse_framework(const YAML::Node& node, const std::string& file,
                              const FrameworkSpec& base);

}  // namespace rapid
