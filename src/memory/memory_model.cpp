#include "rapid/memory/memory_model.hpp"

namespace rapid {

double layer_activation_bytes(const ModelSpec& model, const TrainingSpec& training,
                              const ParallelConfig& par) {
  const double s = static_cast<double>(training.seq_length) / par.cp;
  const double b = par.mbs, h = static_cast<double>(model.hidden_size);
  const double t = par.tp;
  const double a = static_cast<double>(model.num_attention_heads);
  const double g = static_cast<double>(model.num_kv_heads);
  const double d = static_cast<double>(model.head_dim);
  const double f = static_cast<double>(model.ffn_hidden_size);
  const double sb = s * b;
  // Korthikanti et al. 2022 assume 2-byte activations; masks are 1 byte.
  if (par.recompute == Recompute::Full) return 2.0 * sb * h / (par.sp ? t : 1.0);

  // Replicated across TP ranks unless sequence parallel (Korthikanti eq. 2 vs eq. 4).
  double replicated = 4.0 * sb * h                             // inputs of the two norms
                      + 4.0 * sb * h                           // inputs of the QKV and MLP-up GEMMs
                      + (model.dropout ? 2.0 * sb * h : 0.0);  // two dropout masks
  // Megatron all-gathers the QKV/MLP-up inputs again in backward and keeps only its shard
  // (Korthikanti sec 4.2.2); a framework that keeps the gathered input holds 4sbh whole.
  double gathered = 0;
  if (par.sp && training.sp_keeps_gathered_inputs) {
    replicated -= 4.0 * sb * h;
    gathered = 4.0 * sb * h;
  }
  // Split across TP ranks.
  double sharded = 2.0 * sb * d * (a + 2.0 * g)  // Q, K, V
                   + 2.0 * sb * a * d            // input of the output projection
                   + (model.activation == Activation::SwiGlu ? 6.0 : 4.0) * sb * f;
  if (training.flash_attention) {
    sharded += 4.0 * sb * a;  // fp32 logsumexp per query and head
  } else if (par.recompute != Recompute::Selective) {
    sharded += 5.0 * a * s * s * b;  // softmax out, dropout mask, dropout out
  }
  return replicated / (par.sp ? t : 1.0) + sharded / t + gathered;
}

MemoryBreakdown stage_memory(const ModelSpec& model, const TrainingSpec& training,
                             const Workload& w, size_t stage) {
  const ParallelConfig& par = w.par;
  const StageInfo& st = w.stages[stage];
  const double s = static_cast<double>(training.seq_length) / par.cp;
  const double sbh = s * par.mbs * static_cast<double>(model.hidden_size);
  const double sp_div = par.sp ? par.tp : 1.0;
  const double dp = par.dp;
  const double param_bytes = 2.0;  // bf16/fp16 model weights

  MemoryBreakdown m;
  m.stage = static_cast<int64_t>(stage);
  m.weights_bytes = param_bytes * st.params / (par.zero_stage >= 3 ? dp : 1.0);
  // ZeRO-3 gathers the layer being computed and prefetches the next one.
  if (par.zero_stage >= 3) m.weights_bytes += 2.0 * param_bytes * w.layer_params;
  m.grads_bytes = training.grad_bytes * st.params / (par.zero_stage >= 2 ? dp : 1.0);
  m.optimizer_bytes = training.optimizer_bytes * st.params / (par.zero_stage >= 1 ? dp : 1.0);

  const double layers_per_chunk = static_cast<double>(st.num_layers) / par.vpp;
  m.layer_activations_bytes = layer_activation_bytes(model, training, par) * layers_per_chunk *
                              static_cast<double>(st.chunks_in_flight);
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
