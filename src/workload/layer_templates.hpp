// Per-GPU op templates of one micro-batch: a dense transformer layer, an MoE layer, and
// the first/last pipeline stage extras. Internal to src/workload.
// Sources: Shoeybi et al. 2019 (Megatron-LM tensor parallelism, f/g operators, Fig. 3);
// Korthikanti et al. 2022 (sequence parallelism, Fig. 5); Dao 2023 (FlashAttention-2);
// Liu et al. 2023 and Megatron-Core context parallelism (ring attention with load-balanced
// causal chunks); Lepikhin et al. 2020 / Fedus et al. 2021 and Megatron-Core MoE (token
// dispatch and combine all-to-all over the expert-parallel group, grouped expert GEMMs).
// docs/model.md lists every op with its shape.
#pragma once

#include <cstdint>

#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"
#include "template_builder.hpp"

namespace rapid::detail {

/// Per-GPU dimensions of one micro-batch, shared by all templates.
struct Dims {
  double e;       ///< bytes per activation element
  int64_t b;      ///< micro-batch size
  int64_t s;      ///< query tokens per sequence on this GPU (seq / cp)
  int64_t s_kv;   ///< key/value length attended to (whole sequence)
  int64_t T;      ///< tokens per micro-batch on this GPU: b * s
  double T_norm;  ///< tokens seen by norms/dropout/router: T / tp with SP, else T
  int64_t h, d, heads, kv_heads, ffn, vocab;  ///< heads/kv_heads/ffn/vocab already / tp
  int tp, cp, ep, etp;
  bool sp, dropout, gated, geglu, flash, bias, rope, post_norms;
  /// Multi-head latent attention (ModelSpec::mla): latent ranks and head dims (heads already
  /// / tp, the ranks and dims whole).
  bool mla;
  int64_t q_lora, kv_lora, d_nope, d_rope, d_v;
  int tp_overlap;   ///< 1 when TP collectives are pipelined with their GEMMs
  Fusions fusions;  ///< the stack's fused elementwise kernels
  /// FP8 (Transformer Engine) products of the linear layers; all false in bf16/fp16.
  GemmFp8 fp8;
  bool fp8_attention;
  /// Weight casts to FP8 per micro-batch: 1 / m when the stack caches them for the step.
  double weight_casts_per_mb;
  // MoE: routed experts on this GPU, their FFN slice, tokens they process.
  int64_t experts, local_experts, top_k, expert_ffn, shared_ffn;
  double capacity_factor;
  double expert_tokens;  ///< tokens through this GPU's experts: T_norm * top_k * cf * etp

  static Dims make(const ModelSpec& model, const TrainingSpec& training, const ParallelConfig& par);
};

void build_dense_layer(const Dims& D, Recompute rc, OpTemplate& t);
void build_moe_layer(const Dims& D, Recompute rc, OpTemplate& t);
void build_embedding(const Dims& D, OpTemplate& t);
void build_lm_head(const Dims& D, OpTemplate& t);

}  // namespace rapid::detail
