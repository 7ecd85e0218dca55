#include "rapid/workload/layer_graph.hpp"
#include "rapid/workload/quantize_cost.hpp"

#include <algorithm>

#include "template_builder.hpp"

namespace rapid {

namespace {

using detail::TemplateBuilder;

constexpr auto kNone = CollectiveKind::None;
constexpr auto kAllReduce = CollectiveKind::AllReduce;
constexpr auto kAllGather = CollectiveKind::AllGather;
constexpr auto kReduceScatter = CollectiveKind::ReduceScatter;
constexpr auto kAllToAll = CollectiveKind::AllToAll;

// Megatron's f operator before a column-parallel GEMM (and its SP all-gather), pipelined
// with the GEMM that follows when TP overlap is on; `width` elements per token (the hidden
// size, or MLA's latents).
void column_parallel_input(TemplateBuilder& tb, const LayerDims& D, const char* name,
                           int64_t width = 0) {
  if (D.tp == 1) return;
  double bytes = static_cast<double>(D.T) * static_cast<double>(width > 0 ? width : D.h) * D.e;
  if (D.sp)
    tb.collective(name, kAllGather, "sp_reduce_scatter_bwd", kReduceScatter, CommGroup::TP, bytes,
                  D.tp_overlap);
  else
    tb.collective("", kNone, "tp_all_reduce_bwd", kAllReduce, CommGroup::TP, bytes, D.tp_overlap);
}

// Megatron's g operator after a row-parallel GEMM (SP: reduce-scatter), pipelined with the
// GEMM before it when TP overlap is on.
void row_parallel_output(TemplateBuilder& tb, const LayerDims& D, const char* name) {
  if (D.tp == 1) return;
  double bytes = static_cast<double>(D.T) * D.h * D.e;
  if (D.sp)
    tb.collective(name, kReduceScatter, "sp_all_gather_bwd", kAllGather, CommGroup::TP, bytes,
                  -D.tp_overlap);
  else
    tb.collective(name, kAllReduce, "", kNone, CommGroup::TP, bytes, -D.tp_overlap);
}

// LayerNorm/RMSNorm over `width` elements per token (default the hidden size): reads x,
// writes y; backward reads x and dy, writes dx. Unfused (Fusions::norm false: PyTorch
// eager's composite rms_norm, aten/src/ATen/native/layer_norm.cpp rms_norm_symint; docs/
// model.md sec 11), per element with e-byte activations and fp32 (4-byte) math: forward
// upcast (e + 4), pow (4 + 4), mean (4), add eps and rsqrt (per token), the product with
// the rsqrt (4 + 4), the cast back (4 + e) and the weight product (2e): 28 + 4e bytes in 8
// kernels; backward the autograd of each: weight product (5e), cast (e + 4), rsqrt product
// (4 + 4 for the input's gradient, 4 + 4 + 4 and a 4-byte read for the sum over the row),
// mean (4), pow (two products, 8 + 12), the two input gradients added (12), the cast back
// (4 + e): 68 + 7e bytes in 12 kernels.
void norm(TemplateBuilder& tb, const LayerDims& D, const char* fwd, const char* bwd,
          int64_t width = 0) {
  const double n = D.T_norm * static_cast<double>(width > 0 ? width : D.h);
  const double x = n * D.e;
  if (D.fusions.norm) {
    tb.memory(fwd, 2 * x, bwd, 3 * x);
    return;
  }
  tb.memory(fwd, n * (28 + 4 * D.e), nullptr, 0, 8);
  tb.memory(nullptr, 0, bwd, n * (68 + 7 * D.e), 12);
}

// A norm over the hidden states that follows a residual add (input, post-attention, final):
// with the add fused into it (LayerDims::add_norm) it reads x and the residual and writes
// their sum and the normed output; backward adds the residual's gradient pass.
void residual_norm(TemplateBuilder& tb, const LayerDims& D, const char* fwd, const char* bwd) {
  if (!D.add_norm) return norm(tb, D, fwd, bwd);
  const double x = D.T_norm * static_cast<double>(D.h) * D.e;
  tb.memory(fwd, 4 * x, bwd, 5 * x);
}

// Bias + dropout + residual add. Fused (Megatron's bias_dropout_add kernel): reads x and
// the residual, writes out (+1-byte mask). Unfused: a kernel for the bias (read, write),
// one for dropout (read, write, mask) and the residual add (two reads, one write).
void residual(TemplateBuilder& tb, const LayerDims& D, const char* fwd, const char* bwd) {
  if (D.add_norm) return;  // inside the next norm
  const double n = D.T_norm * D.h;
  const double mask = D.dropout ? 1.0 : 0.0;
  if (D.fusions.bias_dropout_add || (!D.bias && !D.dropout)) {
    tb.memory(fwd, n * (3 * D.e + mask), bwd, n * (2 * D.e + mask));
    return;
  }
  const int kernels = 1 + (D.bias ? 1 : 0) + (D.dropout ? 1 : 0);
  const double extra = (D.bias ? 2 * D.e : 0.0) + (D.dropout ? 2 * D.e + mask : 0.0);
  tb.memory(fwd, n * (3 * D.e + extra), bwd, n * (2 * D.e + extra), kernels);
}

// GELU reads/writes T*f; SwiGLU (and GeGLU, the same with GELU gating) reads gate and up,
// writes their product (backward reads gate, up, dy; writes dgate, dup). Unfused (PyTorch
// eager): the bias add is a kernel of its own, and SwiGLU runs SiLU(gate) and the product
// as two kernels (SiLU's output written and read again).
void activation(TemplateBuilder& tb, const LayerDims& D, double tokens, int64_t ffn) {
  const double act = tokens * static_cast<double>(ffn) * D.e;
  const bool fused = D.fusions.bias_activation;
  if (D.gated) {
    const char* fwd = D.geglu ? "mlp_geglu" : "mlp_swiglu";
    const char* bwd = D.geglu ? "mlp_geglu_bwd" : "mlp_swiglu_bwd";
    if (fused)
      tb.memory(fwd, 3 * act, bwd, 5 * act);
    else
      tb.memory(fwd, 5 * act, bwd, 8 * act, 2);
  } else {
    if (fused || !D.bias)
      tb.memory("mlp_gelu", 2 * act, "mlp_gelu_bwd", 3 * act);
    else
      tb.memory("mlp_gelu", 4 * act, "mlp_gelu_bwd", 5 * act, 2);
  }
}

// A linear layer as Transformer Engine runs it in FP8 (TE "Using FP8 with Transformer
// Engine"; te.Linear): the input cast to FP8 with its transpose for wgrad (one fused
// cast-transpose: read 16-bit, write 8-bit twice), unless the norm before it writes FP8
// itself (LayerNormLinear); the weight cast and transposed once per step when cached;
// backward, the output gradient cast and transposed the same way. Then the GEMM. The
// bytes of each cast are the recipe's (quantize_cost.hpp; delayed: e + 2 per element).
void linear(TemplateBuilder& tb, const LayerDims& D, const char* fwd, const char* bwd_data,
            const char* bwd_weight, int64_t m, int64_t n, int64_t k, bool after_norm,
            int64_t batch = 1) {
  const bool fp8 = D.fp8.fprop;
  const double bt = static_cast<double>(batch);
  const auto cast = [&](QuantOperand operand) {
    return quantize_bytes_per_element(D.fp8_recipe, operand, D.e);
  };
  if (fp8 && D.fp8_casts) {
    const double input = bt * static_cast<double>(m) * static_cast<double>(k);
    if (!(after_norm && D.fusions.norm_cast && cast_fuses_into_norm(D.fp8_recipe)))
      tb.memory("fp8_cast_transpose_input", input * cast(QuantOperand::Activation), nullptr, 0);
    tb.memory("fp8_cast_transpose_weight",
              bt * static_cast<double>(k) * static_cast<double>(n) * cast(QuantOperand::Weight) *
                  D.weight_casts_per_mb,
              nullptr, 0);
  }
  tb.gemm(fwd, bwd_data, bwd_weight, m, n, k, batch, D.fp8);
  if (fp8 && D.fp8_casts && (D.fp8.dgrad || D.fp8.wgrad))
    tb.memory(nullptr, 0, "fp8_cast_transpose_grad",
              bt * static_cast<double>(m) * static_cast<double>(n) * cast(QuantOperand::Gradient));
}

// Rotary embedding (Su et al. 2021) of `qk_bytes` of queries and keys: fused
// (TE/Megatron apply_rope_fusion) one kernel reading and writing them; unfused (PyTorch
// eager x * cos + rotate_half(x) * sin) four elementwise kernels over them. Serving then
// writes the new tokens' K/V into the paged cache (vLLM reshape_and_cache), charged in the
// fused rope kernel's op (one kernel, as FlashInfer and TensorRT-LLM fuse them).
void rope(TemplateBuilder& tb, const LayerDims& D, double qk_bytes) {
  const double kv =
      D.kv_write ? static_cast<double>(D.T) * D.kv_elems_per_token * D.kv_elem_bytes : 0.0;
  if (D.rope && D.fusions.rope) {
    tb.memory(kv > 0 ? "rope_kv_cache_write" : "rope", 2 * qk_bytes + kv, "rope_bwd", 2 * qk_bytes);
    return;
  }
  if (D.rope) tb.memory("rope", 8 * qk_bytes, "rope_bwd", 8 * qk_bytes, 4);
  if (kv > 0) tb.memory("kv_cache_write", kv, nullptr, 0);
}

// The attention core (what selective recompute replays), with the CP K/V ring: queries
// and keys of head dim d_qk, values of d_v (both d, or MLA's nope + rope and v), kv_heads
// K/V heads on this GPU; then serving's decode tokens over the cache.
void attention_core(TemplateBuilder& tb, const LayerDims& D, int64_t d_qk, int64_t d_v,
                    int64_t kv_heads) {
  tb.begin_core();
  const double T = static_cast<double>(D.T);
  if (D.cp > 1) {
    // Ring attention: cp - 1 steps pass this rank's K and V chunk around the CP group while
    // the attention of the previous chunk runs (overlapped with the kernel that follows);
    // the volume equals an all-gather of the cp chunks. Backward passes K, V and dK, dV:
    // twice the bytes (Megatron-Core / Transformer Engine CP, p2p ring).
    const double kv_chunk = T * static_cast<double>(kv_heads * (d_qk + d_v)) * D.e;
    tb.collective("cp_kv_ring", kAllGather, "cp_kv_ring_bwd", kAllGather, CommGroup::CP,
                  kv_chunk * D.cp, +1, 2.0 * kv_chunk * D.cp);
  }
  if (D.flash && D.b > 0) {
    // Q and K read at d_qk, V read and O written at d_v.
    const double io = T * static_cast<double>((D.heads + kv_heads) * (d_qk + d_v)) * D.e;
    const int64_t gqa = D.heads / kv_heads;
    // Whole GQA groups of heads (serving's per-sequence chunks; training's always are).
    const int64_t batch = D.b * D.heads - (D.b * D.heads) % gqa;
    tb.flash_attention(batch, D.s, D.flash_kv, d_qk, gqa, D.flash_causal, io, D.fp8_attention, d_v);
  } else if (!D.flash) {
    // Unfused: scores = Q K^T, masked softmax, dropout, context = P V (full s x s work).
    const int64_t bh = D.b * D.heads;
    const double x = static_cast<double>(bh) * D.s * D.s_kv;
    tb.gemm("attn_scores", "attn_scores_dgrad_q", "attn_scores_dgrad_k", D.s, D.s_kv, d_qk, bh);
    // Fused scale-mask-softmax (Megatron FusedScaleMaskSoftmax) or scale, mask and softmax
    // as three kernels.
    if (D.fusions.masked_softmax)
      tb.memory("attn_softmax", 2 * x * D.e, "attn_softmax_bwd", 3 * x * D.e);
    else
      tb.memory("attn_softmax", 6 * x * D.e, "attn_softmax_bwd", 5 * x * D.e, 3);
    if (D.dropout)
      tb.memory("attn_dropout", x * (2 * D.e + 1), "attn_dropout_bwd", x * (2 * D.e + 1));
    tb.gemm("attn_context", "attn_context_dgrad_p", "attn_context_dgrad_v", D.s, d_v, D.s_kv, bh);
  }
  if (D.decode_seqs > 0) tb.forward(decode_attention_op(D));
  tb.end_core();
}

// Output projection (row-parallel over the heads' d_v-wide outputs), its TP reduction, the
// post-attention norm of post_norms models (Gemma 2), the residual.
void attention_output(TemplateBuilder& tb, const LayerDims& D, int64_t d_v) {
  linear(tb, D, "out_proj", "out_proj_dgrad", "out_proj_wgrad", D.T, D.h, D.heads * d_v, false);
  tb.replay_columns(D.h);  // per-op recompute: wo, the 4th matmul, replayed
  row_parallel_output(tb, D, "sp_reduce_scatter_attn");
  if (D.post_norms) norm(tb, D, "attn_output_norm", "attn_output_norm_bwd");
  residual(tb, D, "attn_residual", "attn_residual_bwd");
}

// Multi-head latent attention (DeepSeek-V2 sec 2.1, eqs 9-19; ModelSpec::mla) as
// Megatron-Core runs it (megatron/core/transformer/multi_latent_attention.py,
// MLASelfAttention with the down projections built as TELinear, parallel_mode
// "duplicated"): the down projections W_DQ and W_DKV are replicated on each TP rank and
// run on the rank's own tokens (T_n: its sequence shard under SP, all T tokens without),
// with their latent norms; the latents, not the hidden states, are what the column-parallel
// up projections W_UQ and W_UKV gather over TP (without SP: the all-reduce of their input
// gradients); the up projections split the heads, attention runs on this GPU's heads with
// query/key head dim nope + rope and value head dim v, W_O is row-parallel as usual.
// Without a query latent (q_lora_rank 0) W_Q is column-parallel on the hidden states.
void mla_attention_block(TemplateBuilder& tb, const LayerDims& D) {
  const int64_t tn = static_cast<int64_t>(D.T_norm);
  const int64_t kv_down = D.kv_lora + D.d_rope;  // c_KV and the shared RoPE key k_R
  const int64_t d_qk = D.d_nope + D.d_rope;
  residual_norm(tb, D, "input_norm", "input_norm_bwd");
  if (D.q_lora > 0) {
    linear(tb, D, "q_down_proj", "q_down_proj_dgrad", "q_down_proj_wgrad", tn, D.q_lora, D.h, true);
    norm(tb, D, "q_latent_norm", "q_latent_norm_bwd", D.q_lora);
  }
  linear(tb, D, "kv_down_proj", "kv_down_proj_dgrad", "kv_down_proj_wgrad", tn, kv_down, D.h, true);
  norm(tb, D, "kv_latent_norm", "kv_latent_norm_bwd", D.kv_lora);
  column_parallel_input(tb, D, "sp_all_gather_latents", (D.q_lora > 0 ? D.q_lora : D.h) + kv_down);
  if (D.q_lora > 0)
    linear(tb, D, "q_up_proj", "q_up_proj_dgrad", "q_up_proj_wgrad", D.T, D.heads * d_qk, D.q_lora,
           true);
  else
    linear(tb, D, "q_proj", "q_proj_dgrad", "q_proj_wgrad", D.T, D.heads * d_qk, D.h, true);
  // Prompt tokens expand the latent to per-head keys and values (W_UK, W_UV); decode tokens
  // absorb W_UK into the query and W_UV into the output (DeepSeek-V2 sec 2.1.2; vLLM's MLA
  // decode path, per-head batched GEMMs in bf16) and attend to the latent cache itself.
  const int64_t expanded = D.T - D.decode_seqs;
  if (expanded > 0)
    linear(tb, D, "kv_up_proj", "kv_up_proj_dgrad", "kv_up_proj_wgrad", expanded,
           D.heads * (D.d_nope + D.d_v), D.kv_lora, true);
  if (D.decode_seqs > 0)
    tb.gemm("mla_q_absorb", "mla_q_absorb_dgrad", "mla_q_absorb_wgrad", D.decode_seqs, D.kv_lora,
            D.d_nope, D.heads);
  // RoPE on the queries' rope part (per head) and the one shared rope key.
  rope(tb, D, static_cast<double>(D.T) * static_cast<double>((D.heads + 1) * D.d_rope) * D.e);
  attention_core(tb, D, d_qk, D.d_v, D.heads);
  if (D.decode_seqs > 0)
    tb.gemm("mla_out_absorb", "mla_out_absorb_dgrad", "mla_out_absorb_wgrad", D.decode_seqs, D.d_v,
            D.kv_lora, D.heads);
  attention_output(tb, D, D.d_v);
}

// Norm, QKV, attention core (with the CP K/V ring), output projection, residual.
void attention_block(TemplateBuilder& tb, const LayerDims& D) {
  if (D.mla) {
    mla_attention_block(tb, D);
    return;
  }
  residual_norm(tb, D, "input_norm", "input_norm_bwd");
  column_parallel_input(tb, D, "sp_all_gather_attn");
  linear(tb, D, "qkv_proj", "qkv_proj_dgrad", "qkv_proj_wgrad", D.T,
         (D.heads + 2 * D.kv_heads) * D.d, D.h, true);
  // Per-op recompute: wq, wk, wv are a block's 1st-3rd matmuls; the 2nd (wk) is replayed.
  tb.replay_columns(D.kv_heads * D.d);
  rope(tb, D, static_cast<double>(D.T) * (D.heads + D.kv_heads) * D.d * D.e);
  attention_core(tb, D, D.d, D.d, D.kv_heads);
  attention_output(tb, D, D.d);
}

// A TP-split MLP over all T tokens of the micro-batch (dense layers, shared experts);
// `reduce` false leaves its partial sums to a later reduction.
void dense_mlp(TemplateBuilder& tb, const LayerDims& D, int64_t ffn_per_gpu, bool reduce = true) {
  column_parallel_input(tb, D, "sp_all_gather_mlp");
  linear(tb, D, "mlp_up", "mlp_up_dgrad", "mlp_up_wgrad", D.T, (D.gated ? 2 : 1) * ffn_per_gpu, D.h,
         true);
  // Per-op recompute: w2(silu(w1(x)) * w3(x)) runs w1, w3, w2 as the 5th-7th matmuls: w3,
  // the up half of the gated GEMM, is replayed (per-op recompute is legal for gated MLPs).
  if (D.gated) tb.replay_columns(ffn_per_gpu);
  activation(tb, D, static_cast<double>(D.T), ffn_per_gpu);
  linear(tb, D, "mlp_down", "mlp_down_dgrad", "mlp_down_wgrad", D.T, D.h, ffn_per_gpu, false);
  if (reduce) row_parallel_output(tb, D, "sp_reduce_scatter_mlp");
}

}  // namespace

Op decode_attention_op(const LayerDims& D) {
  // Per head: q.k over the head dim and the values read, or MLA's latent plus rope dims
  // against the compressed cache and its latent as values (DeepSeek-V2 sec 2.1.2, weights
  // absorbed).
  const int64_t score_dim = D.mla ? D.kv_lora + D.d_rope : D.d;
  const int64_t value_dim = D.mla ? D.kv_lora : D.d;
  Op op;
  op.name = "decode_attention";
  op.kind = OpKind::DecodeAttention;
  op.m = 1;
  op.batch = D.decode_seqs;
  op.k = score_dim;
  // Split-KV decode (Flash-Decoding, Dao et al. 2023): each block streams its share of one
  // sequence's keys and values for all query heads of a K/V head, so the cache is read
  // once; the queries are read and the outputs written once.
  const double qo = 2.0 * static_cast<double>(D.decode_seqs * D.heads) *
                    static_cast<double>(score_dim + value_dim) * D.kv_elem_bytes;
  op.bytes = D.decode_context * D.kv_elems_per_token * D.kv_elem_bytes + qo;
  op.flops = 2.0 * D.decode_context * static_cast<double>(D.heads) *
             static_cast<double>(score_dim + value_dim);
  return op;
}

double LayerDims::training_element_bytes(const TrainingSpec& training) {
  return dtype_bytes(training.dtype) >= 2 ? dtype_bytes(training.dtype) : 2.0;  // FP8: 16-bit
}

double LayerDims::training_norm_tokens(const TrainingSpec& training, const ParallelConfig& par) {
  const int64_t T = par.mbs * (training.seq_length / par.cp);
  return par.sp ? static_cast<double>(T) / par.tp : static_cast<double>(T);
}

void LayerDims::set_model(const ModelSpec& model, int64_t tp_size) {
  tp = static_cast<int>(tp_size);
  h = model.hidden_size;
  d = model.head_dim;
  heads = model.num_attention_heads / tp_size;
  // K/V heads replicated when tp exceeds them (serving; training's legality has tp divide
  // them).
  kv_heads = std::max<int64_t>(1, model.num_kv_heads / tp_size);
  ffn = model.ffn_hidden_size / tp_size;
  vocab = vocab_per_gpu(model.vocab_size, tp_size);
  vocab_total = model.vocab_size;
  dropout = model.dropout;
  gated = is_gated(model.activation);
  geglu = model.activation == Activation::GeGlu;
  post_norms = model.post_norms;
  mla = model.mla.enabled();
  q_lora = model.mla.q_lora_rank;
  kv_lora = model.mla.kv_lora_rank;
  d_nope = model.mla.qk_nope_head_dim;
  d_rope = model.mla.qk_rope_head_dim;
  d_v = model.mla.v_head_dim;
  bias = model.linear_bias;
  rope = model.position_embedding == PositionEmbedding::Rope;
}

LayerDims LayerDims::for_training(const ModelSpec& model, const TrainingSpec& training,
                                  const ParallelConfig& par) {
  LayerDims D{};
  D.e = training_element_bytes(training);
  D.cp = par.cp;
  D.ep = par.ep;
  D.etp = par.etp;
  D.b = par.mbs;
  D.s = training.seq_length / par.cp;
  D.s_kv = training.seq_length;
  // Load-balanced causal chunks (each CP rank holds chunks i and 2cp-1-i) give every rank
  // 1/cp of the causal work: s_q x s/2 dense tile pairs, modeled as a non-causal s_q x s/2
  // problem. Without CP: the causal s x s triangle.
  D.flash_kv = par.cp > 1 ? D.s_kv / 2 : D.s_kv;
  D.flash_causal = par.cp == 1;
  D.T = D.b * D.s;
  D.head_tokens = D.T;
  D.sp = par.sp;
  D.T_norm = training_norm_tokens(training, par);
  D.set_model(model, par.tp);
  D.flash = training.fused_attention();
  D.tp_overlap = training.tp_comm_overlap ? 1 : 0;
  D.fusions = training.framework.fusions;
  if (training.compile) {
    // Inductor fuses chains of pointwise ops and reductions into one kernel each (PyTorch
    // torch/_inductor scheduler; torchtitan compiles each transformer block): the norm, the
    // activation with its product, the rotary embedding and the residual add.
    D.fusions.norm = D.fusions.bias_activation = D.fusions.rope = true;
    D.fusions.bias_dropout_add = true;
  }
  const Fp8Recipe& r = training.framework.fp8;
  D.fp8 = {};
  if (training.fp8()) D.fp8 = {true, r.dgrad, r.wgrad};
  D.fp8_casts = true;
  D.fp8_attention = training.fp8() && r.attention;
  D.fp8_recipe = r.recipe;
  const int64_t m = std::max<int64_t>(1, par.num_microbatches(training.global_batch_size));
  D.weight_casts_per_mb = r.cache_weights ? 1.0 / static_cast<double>(m) : 1.0;
  const MoeSpec& moe = model.moe;
  if (moe.enabled()) {
    D.experts = moe.num_experts;
    D.local_experts = moe.num_experts / par.ep;
    D.top_k = moe.top_k;
    D.expert_ffn = moe.expert_ffn_hidden_size / par.etp;
    D.shared_ffn = moe.num_shared_experts * moe.shared_expert_ffn_hidden_size / par.tp;
    D.capacity_factor = moe.capacity_factor;
    D.expert_tokens = D.T_norm * static_cast<double>(moe.top_k) * moe.capacity_factor * par.etp;
    // Balanced routing: every local expert gets an even share.
    D.active_experts = D.local_experts;
    D.tokens_per_expert =
        static_cast<int64_t>(D.expert_tokens / static_cast<double>(D.local_experts) + 0.5);
  }
  return D;
}

void build_dense_layer(const LayerDims& D, Recompute rc, OpTemplate& t) {
  TemplateBuilder tb(t, D.e, D.forward_only);
  attention_block(tb, D);
  residual_norm(tb, D, "post_attn_norm", "post_attn_norm_bwd");
  dense_mlp(tb, D, D.ffn);
  if (D.post_norms) norm(tb, D, "mlp_output_norm", "mlp_output_norm_bwd");
  residual(tb, D, "mlp_residual", "mlp_residual_bwd");
  tb.finish(rc);
}

void build_moe_layer(const LayerDims& D, Recompute rc, OpTemplate& t) {
  TemplateBuilder tb(t, D.e, D.forward_only);
  attention_block(tb, D);
  residual_norm(tb, D, "post_attn_norm", "post_attn_norm_bwd");
  // Router: logits over the experts, softmax and top-k in fp32 (bf16 GEMM: DeepSeek-V3
  // sec 3.3 keeps the gating modules out of FP8).
  const int64_t router_tokens = static_cast<int64_t>(D.T_norm);
  tb.gemm("moe_router", "moe_router_dgrad", "moe_router_wgrad", router_tokens, D.experts, D.h);
  const double logits = D.T_norm * static_cast<double>(D.experts) * 4.0;
  tb.memory("moe_topk", 2 * logits, "moe_topk_bwd", 3 * logits);
  // Dispatch: every token goes to its top_k experts over the EP group (send buffer
  // T_norm * top_k * cf hidden vectors); the expert-TP group then gathers its members'
  // tokens (Megatron), unless every TP rank already holds them (inference engines).
  // Combine mirrors it.
  const double sent = D.T_norm * static_cast<double>(D.top_k) * D.capacity_factor * D.h * D.e;
  tb.collective("moe_dispatch_all_to_all", kAllToAll, "moe_dispatch_all_to_all_bwd", kAllToAll,
                CommGroup::EP, sent);
  const double gathered = D.expert_tokens * D.h * D.e;
  const bool etp_gather = D.etp > 1 && !D.moe_tokens_replicated;
  if (etp_gather)
    tb.collective("moe_etp_all_gather", kAllGather, "moe_etp_reduce_scatter_bwd", kReduceScatter,
                  CommGroup::ETP, gathered);
  // Grouped GEMM over the experts that receive tokens, tokens spread evenly.
  linear(tb, D, "moe_expert_up", "moe_expert_up_dgrad", "moe_expert_up_wgrad", D.tokens_per_expert,
         (D.gated ? 2 : 1) * D.expert_ffn, D.h, false, D.active_experts);
  activation(tb, D, D.expert_tokens, D.expert_ffn);
  linear(tb, D, "moe_expert_down", "moe_expert_down_dgrad", "moe_expert_down_wgrad",
         D.tokens_per_expert, D.h, D.expert_ffn, false, D.active_experts);
  if (etp_gather)
    tb.collective("moe_etp_reduce_scatter", kReduceScatter, "moe_etp_all_gather_bwd", kAllGather,
                  CommGroup::ETP, gathered);
  tb.collective("moe_combine_all_to_all", kAllToAll, "moe_combine_all_to_all_bwd", kAllToAll,
                CommGroup::EP, sent);
  // Weighted sum of the top_k expert outputs per token.
  tb.memory("moe_combine", D.T_norm * D.h * D.e * (static_cast<double>(D.top_k) + 1),
            "moe_combine_bwd", D.T_norm * D.h * D.e * (static_cast<double>(D.top_k) + 1));
  if (D.shared_ffn > 0) dense_mlp(tb, D, D.shared_ffn, !D.moe_tokens_replicated);
  // Replicated tokens: the expert-TP slices' and the shared experts' partial sums, reduced
  // once over TP.
  if (D.moe_tokens_replicated && (D.etp > 1 || D.shared_ffn > 0))
    row_parallel_output(tb, D, "moe_all_reduce");
  if (D.post_norms) norm(tb, D, "mlp_output_norm", "mlp_output_norm_bwd");
  residual(tb, D, "mlp_residual", "mlp_residual_bwd");
  tb.finish(rc);
}

// First stage: vocab-parallel embedding lookup, partial sums reduced over TP.
void build_embedding(const LayerDims& D, OpTemplate& t) {
  TemplateBuilder tb(t, D.e, D.forward_only);
  double x = static_cast<double>(D.T) * D.h * D.e;
  tb.memory("embedding_lookup", 2 * x, "embedding_grad", x + 2.0 * D.T * D.h * 4.0);
  if (D.tp > 1) {
    if (D.sp)
      tb.collective("embedding_reduce_scatter", kReduceScatter, "embedding_all_gather_bwd",
                    kAllGather, CommGroup::TP, x);
    else
      tb.collective("embedding_all_reduce", kAllReduce, "", kNone, CommGroup::TP, x);
  }
  tb.finish(Recompute::None);
}

// Last stage: final norm, LM head GEMM over the vocab shard (bf16: Megatron and DeepSeek-V3
// sec 3.3 keep the output head out of FP8). Training: vocab-parallel cross-entropy (fp32
// softmax kept for backward; max/sum/target all-reduces of T fp32 values over TP). Serving:
// the sampling sequences' logits gathered over TP, then softmax and sampling over the
// vocabulary in fp32 (read, write, read).
void build_lm_head(const LayerDims& D, OpTemplate& t) {
  TemplateBuilder tb(t, D.e, D.forward_only);
  residual_norm(tb, D, "final_norm", "final_norm_bwd");
  column_parallel_input(tb, D, "sp_all_gather_head");
  if (D.head_tokens > 0)
    tb.gemm("lm_head", "lm_head_dgrad", "lm_head_wgrad", D.head_tokens, D.vocab, D.h);
  if (D.sampling) {
    const double V = static_cast<double>(D.vocab_total);
    if (D.tp > 1 && D.head_tokens > 0)
      tb.collective("logits_all_gather", kAllGather, "", kNone, CommGroup::TP,
                    static_cast<double>(D.head_tokens) * V * D.e);
    if (D.head_tokens > 0)
      tb.memory("sampling", 3.0 * static_cast<double>(D.head_tokens) * V * 4.0, nullptr, 0);
  } else {
    const double logits = static_cast<double>(D.T) * D.vocab;
    tb.memory("cross_entropy", logits * (D.e + 8.0), "cross_entropy_bwd", logits * (4.0 + D.e));
    if (D.tp > 1)
      tb.collective("cross_entropy_all_reduce", kAllReduce, "", kNone, CommGroup::TP,
                    3.0 * static_cast<double>(D.T) * 4.0);
  }
  tb.finish(Recompute::None);
}

}  // namespace rapid
