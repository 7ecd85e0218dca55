// The operator graph of one transformer layer and of the first/last pipeline stage extras,
// per GPU, for one micro-batch of training or one serving iteration: the same functions
// build both (docs/architecture.md "The workload"). Training reads the forward, backward
// and recompute lists; a serving iteration (inference/step_model.hpp) times the forward
// list. What differs between the two is in LayerDims: the token counts and attention
// phases of the batch, and what the stack fuses.
// Sources: Shoeybi et al. 2019 (Megatron-LM tensor parallelism, f/g operators, Fig. 3);
// Korthikanti et al. 2022 (sequence parallelism, Fig. 5); Dao 2023 (FlashAttention-2);
// Liu et al. 2023 and Megatron-Core context parallelism (ring attention with load-balanced
// causal chunks); Lepikhin et al. 2020 / Fedus et al. 2021 and Megatron-Core MoE (token
// dispatch and combine all-to-all over the expert-parallel group, grouped expert GEMMs);
// Kwon et al. 2023 (paged KV cache, decode attention). docs/model.md lists every op.
#pragma once

#include <cstdint>

#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// Which of a GEMM's three products run in FP8 (Transformer Engine linear layers).
struct GemmFp8 {
  bool fprop = false, dgrad = false, wgrad = false;
};

/// Per-GPU dimensions of one micro-batch (training) or one iteration (serving).
struct LayerDims {
  double e;       ///< bytes per activation element
  int64_t b;      ///< sequences whose queries run FlashAttention (training: the micro-batch)
  int64_t s;      ///< query tokens per such sequence on this GPU (training: seq / cp)
  int64_t s_kv;   ///< key/value length attended to (whole sequence)
  int64_t T;      ///< tokens of the batch on this GPU (training b * s; serving all tokens)
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
  /// The residual add runs inside the next norm (vLLM/SGLang fused_add_rms_norm): each norm
  /// reads x and the residual and writes both (4 x the tokens' hidden states), and the
  /// residual adds are no ops of their own.
  bool add_norm;
  /// FP8 products of the linear layers; all false in bf16/fp16.
  GemmFp8 fp8;
  /// Transformer Engine's casts around each FP8 linear (inputs, weights, gradients); off
  /// for inference engines, which load FP8 weights and quantize in the GEMM's prologue.
  bool fp8_casts;
  bool fp8_attention;
  /// The stack's scaling recipe: the bytes of each cast (quantize_cost.hpp).
  Fp8Scaling fp8_recipe = Fp8Scaling::Delayed;
  /// Weight casts to FP8 per micro-batch: 1 / m when the stack caches them for the step.
  double weight_casts_per_mb;
  /// FlashAttention's keys per query sequence and causal mask (training: the sequence, or
  /// half of it non-causal under CP's load-balanced chunks; serving: the chunk and what
  /// precedes it).
  int64_t flash_kv;
  bool flash_causal;
  // Serving: decode tokens (one per sequence, attending to the KV cache) and the cache.
  int64_t decode_seqs;        ///< sequences decoding one token each (0 in training)
  double decode_context;      ///< their KV cache tokens, summed
  double kv_elems_per_token;  ///< KV cache elements per token on this GPU (one layer)
  double kv_elem_bytes;       ///< bytes per cache element
  bool kv_write;              ///< the new tokens' K/V written into the cache (serving)
  // MoE: routed experts on this GPU, their FFN slice, tokens they process.
  int64_t experts, local_experts, top_k, expert_ffn, shared_ffn;
  double capacity_factor;
  double expert_tokens;       ///< tokens through this GPU's experts
  int64_t active_experts;     ///< local experts that receive tokens (the grouped GEMM's batch)
  int64_t tokens_per_expert;  ///< rows of each active expert's GEMMs
  /// Every rank of the TP group holds all the batch's tokens (inference engines, no SP):
  /// the experts need no expert-TP gather, and the routed experts' and shared experts'
  /// partial sums are reduced over TP in one all-reduce (vLLM/SGLang DeepseekV2MoE: shared
  /// experts built with reduce_results=False). Megatron (false) gathers the expert-TP
  /// group's tokens, reduce-scatters after, and reduces the shared experts on their own.
  bool moe_tokens_replicated;
  // Last stage.
  int64_t head_tokens;  ///< tokens through the LM head (serving: the sequences sampling)
  int64_t vocab_total;  ///< the whole vocabulary (logits gathered over TP for sampling)
  bool sampling;        ///< serving: logits gathered and sampled, not a loss
  bool forward_only;    ///< serving: no backward or recompute lists

  /// The model's shapes on one GPU of a TP group of `tp` (heads, FFN and vocabulary split;
  /// activation, norms, MLA and position embedding as the model has them).
  void set_model(const ModelSpec& model, int64_t tp);

  static LayerDims for_training(const ModelSpec& model, const TrainingSpec& training,
                                const ParallelConfig& par);
  /// The vocabulary-parallel shard of one GPU: ceil(V / tp) rows (Megatron's
  /// VocabParallelEmbedding, the last shard padded).
  static int64_t vocab_per_gpu(int64_t vocab, int64_t tp) { return (vocab + tp - 1) / tp; }
  /// Training's e and T_norm alone (what the stage hand-off sends per hidden element).
  static double training_element_bytes(const TrainingSpec& training);
  static double training_norm_tokens(const TrainingSpec& training, const ParallelConfig& par);
};

/// Op lists of one layer (`t` cleared first; capacity kept). `rc` fills t.recompute.
void build_dense_layer(const LayerDims& D, Recompute rc, OpTemplate& t);
void build_moe_layer(const LayerDims& D, Recompute rc, OpTemplate& t);
/// First stage: the vocabulary-parallel embedding. Last stage: final norm, LM head, and
/// the loss (training) or logits and sampling (serving).
void build_embedding(const LayerDims& D, OpTemplate& t);
void build_lm_head(const LayerDims& D, OpTemplate& t);

/// The layer's decode attention (D.decode_seqs > 0): the op the graph emits after the
/// prompt's FlashAttention, for consumers that time it apart (it alone depends on the
/// cache length).
Op decode_attention_op(const LayerDims& D);

}  // namespace rapid
