#include "rapid/memory/memory_model.hpp"

#include <algorithm>
#include <cmath>

namespace rapid {

double layer_activation_bytes(const ModelSpec& model, const TrainingSpec& training,
                              const ParallelConfig& par, bool moe_layer) {
  const double s = static_cast<double>(training.seq_length) / par.cp;
  const double b = par.mbs, h = static_cast<double>(model.hidden_size);
  const double t = par.tp;
  const double a = static_cast<double>(model.num_attention_heads);
  const double g = static_cast<double>(model.num_kv_heads);
  const double d = static_cast<double>(model.head_dim);
  const double f = static_cast<double>(model.ffn_hidden_size);
  const double sb = s * b;
  const double sp_div = par.sp ? t : 1.0;
  // Transformer Engine FP8 saves the linear layers' inputs in FP8 for their wgrad (TE
  // "Using FP8 with Transformer Engine": the FP8 input is what backward keeps): 1 byte
  // for the QKV, projection, MLP-up and MLP-down inputs instead of 2.
  const double gemm_in = training.fp8() ? 1.0 : 2.0;
  // The MLP keeps fc1's output (2 bytes, GELU; gate and up, 2 + 2, SwiGLU/GeGLU) and fc2's
  // input.
  const bool gated = is_gated(model.activation);
  const double mlp_stores = (gated ? 4.0 : 2.0) + gemm_in;
  // Korthikanti et al. 2022 assume 2-byte activations; masks are 1 byte.
  if (par.recompute == Recompute::Full && !par.partial_recompute()) return 2.0 * sb * h / sp_div;
  if (par.recompute == Recompute::Op) {
    // torchtitan per-op SAC (activation_checkpoint.py _custom_policy; dense, gated MLP, fused
    // attention, legality.cpp): the block's input 2s'bh/sigma; the saved matmul outputs (the
    // 1st, 3rd, 5th and 7th of the block: wq 2s'b a d/t, wv 2s'b g d/t, w1 2s'b f/t and w2's
    // row-parallel partial sums, whole on each rank, 2s'bh, with their reduce-scatter output
    // 2s'bh/t under SP); the attention output 2s'b a d/t and its fp32 logsumexp 4s'b a/t.
    const double rs = par.sp && t > 1 ? 2.0 * sb * h / t : 0.0;
    return 2.0 * sb * h / sp_div + 2.0 * sb * h + rs +
           (2.0 * sb * a * d + 2.0 * sb * g * d + 2.0 * sb * a * d + 4.0 * sb * a + 2.0 * sb * f) /
               t;
  }

  // Replicated across TP ranks unless sequence parallel (Korthikanti eq. 2 vs eq. 4).
  const double norms = model.post_norms ? 4.0 : 2.0;           // Gemma 2 normalizes outputs too
  double replicated = 2.0 * norms * sb * h                     // inputs of the norms
                      + gemm_in * sb * h                       // input of the QKV GEMM
                      + (model.dropout ? 2.0 * sb * h : 0.0);  // two dropout masks
  // Split across TP ranks: Q, K, V; input of the output projection.
  double sharded = 2.0 * sb * d * (a + 2.0 * g) + gemm_in * sb * a * d;
  if (model.mla.enabled()) {
    // Multi-head latent attention (DeepSeek-V2 sec 2.1; Megatron-Core
    // multi_latent_attention.py). The down projections are replicated on every TP rank and
    // run on its own tokens (its sequence shard under SP), so what they keep is divided as
    // the norms' inputs are: the normed hidden states both read (the gemm_in s'bh above, in
    // place of the QKV input), their outputs c_Q, c_KV and k_R (2 bytes: the latent norms'
    // inputs and the RoPE key) and the normed latents the up projections read (the
    // column-parallel up projections gather them again in backward, Korthikanti sec
    // 4.2.2). The head dim d of the formula becomes d_qk = nope + rope for Q and K and d_v
    // for V and the output projection's input, over a heads (no K/V groups).
    const MlaSpec& l = model.mla;
    const double q_lora = static_cast<double>(l.q_lora_rank);
    const double kv_lora = static_cast<double>(l.kv_lora_rank);
    const double rope = static_cast<double>(l.qk_rope_head_dim);
    const double d_qk = static_cast<double>(l.qk_head_dim()),
                 d_v = static_cast<double>(l.v_head_dim);
    replicated += 2.0 * sb * (q_lora + kv_lora + rope) + gemm_in * sb * (q_lora + kv_lora);
    sharded = 2.0 * sb * a * (2.0 * d_qk + d_v) + gemm_in * sb * a * d_v;
  }
  if (training.fused_attention()) {
    sharded += 4.0 * sb * a;  // fp32 logsumexp per query and head
  } else if (par.recompute != Recompute::Selective) {
    sharded += 5.0 * a * s * s * b;  // softmax out, dropout mask, dropout out
  }
  // The MLP (dense) or the shared experts (MoE) see all tokens, split by TP.
  const MoeSpec& moe = model.moe;
  const double ffn =
      moe_layer ? static_cast<double>(moe.num_shared_experts * moe.shared_expert_ffn_hidden_size)
                : f;
  double gathered_mlp_input = ffn > 0 ? gemm_in * sb * h : 0.0;
  sharded += mlp_stores * sb * ffn;
  // Megatron all-gathers the QKV/MLP-up inputs again in backward and keeps only its shard
  // (Korthikanti sec 4.2.2); a framework that keeps the gathered inputs holds them whole.
  double gathered = 0;
  if (par.sp && training.sp_keeps_gathered_inputs) {
    replicated -= gemm_in * sb * h;
    gathered = gemm_in * sb * h + gathered_mlp_input;
  } else {
    replicated += gathered_mlp_input;
  }
  double bytes = replicated / sp_div + sharded / t + gathered;
  if (moe_layer) {
    // Routed experts on this GPU: tokens_local = (sb / sp_div) * top_k * cf * etp hidden
    // vectors dispatched in (kept for combine and as the expert input), the expert FFN's
    // fc1 output and activation output over f_e / etp, and the fp32 router logits.
    const double tokens = sb / sp_div * static_cast<double>(moe.top_k) * moe.capacity_factor *
                          static_cast<double>(par.etp);
    const double fe = static_cast<double>(moe.expert_ffn_hidden_size) / par.etp;
    bytes += tokens * (2.0 * 2.0 * h + mlp_stores * fe) +
             sb / sp_div * static_cast<double>(moe.num_experts) * 4.0;
  }
  return bytes;
}

namespace {

// One layer's activation bytes under each storage of a recompute policy: all of them kept
// (no recompute, or a layer block recompute leaves alone), the policy's own (selective),
// and the checkpointed input only (full recompute: 2sbh, Korthikanti Table 2).
struct LayerBytes {
  double keep = 0, policy = 0, input = 0;
};

LayerBytes layer_bytes(const ModelSpec& model, const TrainingSpec& training,
                       const ParallelConfig& par, bool moe) {
  ParallelConfig none = par;
  none.recompute = Recompute::None;
  none.recompute_method = RecomputeMethod::Uniform;
  none.recompute_layers = 1;
  ParallelConfig full = none;
  full.recompute = Recompute::Full;
  LayerBytes x;
  x.keep = layer_activation_bytes(model, training, none, moe);
  // The checkpointed input matters only under full recompute (the whole or part of it).
  if (par.recompute == Recompute::Full)
    x.input = layer_activation_bytes(model, training, full, moe);
  x.policy = par.recompute == Recompute::None   ? x.keep
             : par.recompute == Recompute::Full ? x.input
                                                : layer_activation_bytes(model, training, par, moe);
  return x;
}

// The activation bytes of a dense and of an MoE layer under a layout (the same on every
// stage: computed once per layout).
struct LayoutBytes {
  LayerBytes dense, moe;
};

LayoutBytes layout_bytes(const ModelSpec& model, const TrainingSpec& training,
                         const ParallelConfig& par) {
  LayoutBytes b;
  b.dense = layer_bytes(model, training, par, false);
  if (model.moe.enabled()) b.moe = layer_bytes(model, training, par, true);
  return b;
}

MemoryBreakdown stage_memory(const ModelSpec& model, const TrainingSpec& training,
                             const Workload& w, size_t stage, const ParallelConfig& par,
                             const LayoutBytes& bytes) {
  const StageInfo& st = w.stages[stage];
  const double s = static_cast<double>(training.seq_length) / par.cp;
  const double sbh = s * par.mbs * static_cast<double>(model.hidden_size);
  const double sp_div = par.sp ? par.tp : 1.0;
  // 16-bit model weights, or fp32 ones that are the master weights themselves (FSDP2 with
  // MixedPrecisionPolicy(param_dtype=bf16) over fp32 sharded parameters: torch/distributed/
  // fsdp/_fully_shard/_fsdp_param.py casts each gathered shard to param_dtype).
  const double param_bytes = training.master_weights_in_params ? 4.0 : 2.0;
  const double compute_bytes = 2.0;  // the 16-bit copy a gathered unit computes with

  // Dense weights are sharded over data x context parallel ranks, routed experts over the
  // expert data-parallel group (Megatron-Core distributed optimizer).
  const double dense = st.params - st.expert_params, experts = st.expert_params;
  const double dp_cp = static_cast<double>(w.group(CommGroup::DPCP).size);
  const double edp = static_cast<double>(w.group(CommGroup::EDP).size);
  auto sharded = [&](int from_stage) {
    return par.zero_stage >= from_stage ? dense / dp_cp + experts / edp : dense + experts;
  };
  MemoryBreakdown m;
  m.stage = static_cast<int64_t>(stage);
  m.weights_bytes = param_bytes * sharded(3);
  // ZeRO-3 gathers the layer being computed and prefetches zero3_prefetch_units more (FSDP2:
  // one ahead, forward and backward; torch/distributed/fsdp/_fully_shard/_fsdp_state.py).
  const double gathered_layer = std::max(w.layer_params, w.moe_layer_params);
  const double gathered_units = 1.0 + training.zero3_prefetch_units;
  if (par.zero_stage >= 3) m.weights_bytes += gathered_units * compute_bytes * gathered_layer;
  // FP8: Transformer Engine caches each linear weight's FP8 copy and its transpose for the
  // step (1 + 1 bytes per parameter of the layers; TE 1.x linear.py, is_first_microbatch).
  if (training.fp8()) {
    const double layer_weights =
        static_cast<double>(st.num_layers - st.num_moe_layers) * w.layer_params +
        static_cast<double>(st.num_moe_layers) * w.moe_layer_params;
    m.weights_bytes += 2.0 * (par.zero_stage >= 3 ? 2.0 * gathered_layer : layer_weights);
  }
  m.grads_bytes = training.grad_bytes * sharded(2);
  // FSDP2 foreach_reduce (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py): a
  // unit's unsharded gradients, computed in the 16-bit param dtype, are copied into one
  // reduce-scatter input in the reduce dtype and freed after the copy: both alive at once.
  if (par.zero_stage >= 3 && training.zero3_grad_buffers)
    m.grads_bytes += (compute_bytes + training.grad_reduce_bytes) * gathered_layer;
  // Buckets copied into buffers of their own (DeepSpeed contiguous_gradients: ipg_buffer,
  // two with overlap_comm; deepspeed/runtime/zero/stage_1_and_2.py), grad_bucket_size each.
  m.grads_bytes += training.grad_bucket_buffers * training.grad_bucket_bytes;
  // Mixed-precision Adam keeps fp32 master weights, m and v; with 16-bit gradients also an
  // fp32 copy of its gradient shard (Megatron-LM docs, distributed optimizer: 20 or 4 + 16/d
  // bytes per parameter for fp16 parameters and gradients, 18 or 6 + 12/d with fp32 grads).
  // fp32 parameters that are the master weights leave Adam its two moments (8 bytes).
  const double master_in_params = training.master_weights_in_params ? 4.0 : 0.0;
  m.optimizer_bytes = (training.optimizer_bytes - master_in_params +
                       (training.grad_bytes == 2 && training.fp32_grad_copy ? 4.0 : 0.0)) *
                      sharded(1);

  // Activations of the chunks alive at the peak (interleaved: layers / vpp per chunk).
  const int64_t microbatches = par.num_microbatches(training.global_batch_size);
  const int64_t chunks_alive = chunks_in_flight(static_cast<int64_t>(stage), par.pp, par.vpp,
                                                std::max<int64_t>(1, microbatches));
  const double chunks = static_cast<double>(chunks_alive);
  const double dense_layers = static_cast<double>(st.num_layers - st.num_moe_layers);
  const double moe_layers = static_cast<double>(st.num_moe_layers);
  const LayerBytes& Ld = bytes.dense;
  const LayerBytes& Lm = bytes.moe;
  const double layers = static_cast<double>(std::max<int64_t>(1, st.num_layers));
  const double per_layer_keep = (dense_layers * Ld.keep + moe_layers * Lm.keep) / layers;
  const double per_layer_input = (dense_layers * Ld.input + moe_layers * Lm.input) / layers;
  const double per_layer_policy = (dense_layers * Ld.policy + moe_layers * Lm.policy) / layers;
  const double chunk_n = static_cast<double>(st.num_layers) / par.vpp;  // layers per chunk
  double per_chunk = chunk_n * per_layer_policy, transient = 0;
  if (par.recompute == Recompute::Full) {
    // The layers being recomputed hold all their activations while their backward runs:
    // one group (uniform) or one layer (block), once per stage.
    if (par.recompute_method != RecomputeMethod::Uniform) {
      // block: the first k layers; every: every n-th layer, k = floor(chunk / n).
      const double k = par.recompute_method == RecomputeMethod::Block
                           ? std::min<double>(par.recompute_layers, chunk_n)
                           : std::floor(chunk_n / static_cast<double>(par.recompute_layers));
      per_chunk = k * per_layer_input + (chunk_n - k) * per_layer_keep;
      transient = per_layer_keep;
    } else {
      const double k = std::min<double>(par.recompute_layers, chunk_n);
      per_chunk = std::ceil(chunk_n / k) * per_layer_input;
      transient = k * per_layer_keep;
    }
  }
  // Per-op recompute: the block being replayed holds everything again during its backward.
  if (par.recompute == Recompute::Op) transient = per_layer_keep - per_layer_policy;
  m.layer_activations_bytes = chunks * per_chunk + transient;
  // Offload (Megatron-Core cpu_offloading, no pipeline): the offloaded layers' activations
  // live in host memory; one layer's worth stages the copies on the GPU.
  if (par.offload_layers > 0) {
    const double o = std::min<double>(par.offload_layers, st.num_layers);
    m.layer_activations_bytes -= chunks * (o - std::min(o, 1.0)) * per_layer_keep;
  }
  double extra = 0, head = 0, head_held = 0;
  const double mbs_alive = std::ceil(chunks / par.vpp);
  if (st.has_embedding && model.dropout) extra += mbs_alive * sbh / sp_div;  // dropout mask
  if (st.has_lm_head) {
    // One micro-batch (1F1B runs its backward right after): final norm input, LM head
    // input (gathered over TP), and the loss's logit buffers over the vocab shard.
    const double logits = s * par.mbs * static_cast<double>(model.vocab_size) / par.tp;
    head = 2.0 * sbh / sp_div + 2.0 * sbh + training.framework.loss_bytes_per_logit * logits;
    head_held = training.framework.loss_bytes_held_per_logit * logits;
  }
  // The loss's buffers peak at the loss and the LM head's backward, which run before any
  // layer's backward: the recompute transient (the last layers replayed) comes after them,
  // when only the logits the stack still holds are alive (loss_bytes_held_per_logit). The
  // stage's peak takes the larger of the two moments; the checkpointed and kept layer
  // activations are alive at both.
  m.activations_bytes =
      m.layer_activations_bytes - transient + extra + std::max(head, transient + head_held);
  m.reserve_bytes = training.memory_reserve_bytes + training.fragmentation * m.activations_bytes;
  m.peak_bytes =
      m.weights_bytes + m.grads_bytes + m.optimizer_bytes + m.activations_bytes + m.reserve_bytes;
  return m;
}

}  // namespace

MemoryBreakdown stage_memory(const ModelSpec& model, const TrainingSpec& training,
                             const Workload& w, size_t stage, const ParallelConfig* layout) {
  const ParallelConfig& par = layout ? *layout : w.par;
  return stage_memory(model, training, w, stage, par, layout_bytes(model, training, par));
}

MemoryBreakdown estimate_memory(const ModelSpec& model, const TrainingSpec& training,
                                const Workload& w, const ParallelConfig* layout) {
  const ParallelConfig& par = layout ? *layout : w.par;
  const LayoutBytes bytes = layout_bytes(model, training, par);
  MemoryBreakdown best;
  for (size_t i = 0; i < w.stages.size(); ++i) {
    // A stage like the one before it (same layers, no extras of its own) holds no more
    // chunks (chunks_in_flight falls with the stage index), no more parameters and no more
    // extra activations (the embedding's dropout mask), term by term: its peak cannot be
    // larger, and the earlier stage wins a tie.
    if (i > 0) {
      const StageInfo &a = w.stages[i - 1], &b = w.stages[i];
      if (a.num_layers == b.num_layers && a.num_moe_layers == b.num_moe_layers && !a.has_lm_head &&
          !b.has_embedding && !b.has_lm_head)
        continue;
    }
    MemoryBreakdown m = stage_memory(model, training, w, i, par, bytes);
    if (i == 0 || m.peak_bytes > best.peak_bytes) best = m;
  }
  return best;
}

}  // namespace rapid
