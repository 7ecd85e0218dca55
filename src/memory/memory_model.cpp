#include "rapid/memory/memory_model.hpp"

#include <algorithm>

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
  const double mlp_stores = model.activation == Activation::SwiGlu ? 6.0 : 4.0;
  // Korthikanti et al. 2022 assume 2-byte activations; masks are 1 byte.
  if (par.recompute == Recompute::Full) return 2.0 * sb * h / sp_div;

  // Replicated across TP ranks unless sequence parallel (Korthikanti eq. 2 vs eq. 4).
  double replicated = 4.0 * sb * h                             // inputs of the two norms
                      + 2.0 * sb * h                           // input of the QKV GEMM
                      + (model.dropout ? 2.0 * sb * h : 0.0);  // two dropout masks
  // Split across TP ranks: Q, K, V; input of the output projection.
  double sharded = 2.0 * sb * d * (a + 2.0 * g) + 2.0 * sb * a * d;
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
  double gathered_mlp_input = ffn > 0 ? 2.0 * sb * h : 0.0;
  sharded += mlp_stores * sb * ffn;
  // Megatron all-gathers the QKV/MLP-up inputs again in backward and keeps only its shard
  // (Korthikanti sec 4.2.2); a framework that keeps the gathered inputs holds them whole.
  double gathered = 0;
  if (par.sp && training.sp_keeps_gathered_inputs) {
    replicated -= 2.0 * sb * h;
    gathered = 2.0 * sb * h + gathered_mlp_input;
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

MemoryBreakdown stage_memory(const ModelSpec& model, const TrainingSpec& training,
                             const Workload& w, size_t stage) {
  const ParallelConfig& par = w.par;
  const StageInfo& st = w.stages[stage];
  const double s = static_cast<double>(training.seq_length) / par.cp;
  const double sbh = s * par.mbs * static_cast<double>(model.hidden_size);
  const double sp_div = par.sp ? par.tp : 1.0;
  const double param_bytes = 2.0;  // bf16/fp16 model weights

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
  // ZeRO-3 gathers the layer being computed and prefetches the next one.
  if (par.zero_stage >= 3)
    m.weights_bytes += 2.0 * param_bytes * std::max(w.layer_params, w.moe_layer_params);
  m.grads_bytes = training.grad_bytes * sharded(2);
  m.optimizer_bytes = training.optimizer_bytes * sharded(1);

  const double chunks = static_cast<double>(st.chunks_in_flight) / par.vpp;
  const double dense_layers = static_cast<double>(st.num_layers - st.num_moe_layers);
  m.layer_activations_bytes =
      chunks * (dense_layers * layer_activation_bytes(model, training, par, false) +
                static_cast<double>(st.num_moe_layers) *
                    (st.num_moe_layers ? layer_activation_bytes(model, training, par, true) : 0.0));
  double extra = 0;
  const double microbatches = static_cast<double>((st.chunks_in_flight + par.vpp - 1) / par.vpp);
  if (st.has_embedding && model.dropout) extra += microbatches * sbh / sp_div;  // dropout mask
  if (st.has_lm_head) {
    // One micro-batch (1F1B runs its backward right after): final norm input, LM head
    // input (gathered over TP), fp32 and 16-bit logits of the vocab shard.
    const double logits = s * par.mbs * static_cast<double>(model.vocab_size) / par.tp;
    extra += 2.0 * sbh / sp_div + 2.0 * sbh + (4.0 + 2.0) * logits;
  }
  m.activations_bytes = m.layer_activations_bytes + extra;
  m.reserve_bytes = training.memory_reserve_bytes + training.fragmentation * m.activations_bytes;
  m.peak_bytes =
      m.weights_bytes + m.grads_bytes + m.optimizer_bytes + m.activations_bytes + m.reserve_bytes;
  return m;
}

MemoryBreakdown estimate_memory(const ModelSpec& model, const TrainingSpec& training,
                                const Workload& w) {
  MemoryBreakdown best;
  for (size_t i = 0; i < w.stages.size(); ++i) {
    MemoryBreakdown m = stage_memory(model, training, w, i);
    if (i == 0 || m.peak_bytes > best.peak_bytes) best = m;
  }
  return best;
}

}  // namespace rapid
