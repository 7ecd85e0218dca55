// Peak memory of one GPU in a training step: weights + gradients + optimizer states
// (mixed-precision Adam, sharded by ZeRO stage; Rajbhandari et al. 2020, sec 3 and 5) +
// activations of the micro-batches in flight (Korthikanti et al. 2022, sec 4, eqs. 1-6,
// generalised to GQA, SwiGLU and fused attention) + a framework reserve.
#pragma once

#include <cstdint>

#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// Bytes on the GPU with the largest peak, split by kind. All values in bytes.
struct MemoryBreakdown {
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;        ///< layers + stage extras, times in-flight chunks
  double layer_activations_bytes = 0;  ///< the transformer layers' part only
  double reserve_bytes = 0;            ///< framework reserve + allocator fragmentation
  double peak_bytes = 0;               ///< sum of the above
  int64_t stage = 0;                   ///< pipeline stage of that GPU
};

/// Activation bytes one transformer layer keeps for backward, for one micro-batch on one
/// GPU (Korthikanti et al. 2022, Table 2 generalised):
///   replicated across TP unless SP (norm inputs 4sbh, GEMM inputs 4sbh, dropout masks 2sbh);
///   sharded by TP: Q 2sbh, K and V 2sb*g*d each, projection input 2sbh, MLP 4sbf (GELU:
///   fc1 output and GELU output) or 6sbf (SwiGLU: gate, up and product), unfused attention
///   5as^2b (softmax 2, dropout mask 1, dropout output 2), FlashAttention's logsumexp 4sab;
///   selective recompute drops the s^2 terms; full recompute keeps only the input 2sbh.
/// s is the sequence on this GPU (seq / cp). Inputs: shapes, micro-batch `par.mbs`.
/// `moe_layer`: an MoE layer, whose MLP part is the shared experts over all tokens plus
/// the routed experts' tokens on this GPU (dispatched hidden vectors kept for combine and
/// as expert input, expert fc1 and activation outputs over f_e / etp, fp32 router logits).
double layer_activation_bytes(const ModelSpec& model, const TrainingSpec& training,
                              const ParallelConfig& par, bool moe_layer = false);

/// Peak memory of one GPU of pipeline stage `stage` (0 <= stage < pp) of workload `w`.
/// `layout`, when given, replaces w.par for the knobs that do not change the stages'
/// parameters (ZeRO stage, SP, recompute, offload, micro-batch size): what a single knob
/// change would need, without rebuilding the workload.
/// Under full recompute the layers being recomputed hold all their activations during
/// their backward (one group under uniform, one layer under block): counted once per
/// stage. FP8 keeps each linear weight's FP8 copy and transpose and saves FP8 GEMM inputs.
MemoryBreakdown stage_memory(const ModelSpec& model, const TrainingSpec& training,
                             const Workload& w, size_t stage,
                             const ParallelConfig* layout = nullptr);

/// The largest stage_memory() over the pipeline stages of workload `w`.
MemoryBreakdown estimate_memory(const ModelSpec& model, const TrainingSpec& training,
                                const Workload& w, const ParallelConfig* layout = nullptr);

}  // namespace rapid
