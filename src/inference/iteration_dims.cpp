#include "iteration_dims.hpp"

#include <algorithm>
#include <cmath>

namespace rapid::detail {

LayerDims serving_layer_dims(const ModelSpec& model, const ServingSpec& serving,
                             const ParallelConfig& par) {
  LayerDims D{};
  D.e = 2.0;  // bf16/fp16 engines keep activations in 16 bits (FP8 too: weights only)
  D.cp = 1;
  D.ep = static_cast<int>(par.ep);
  // Expert tensor parallel inside the EP group: each expert split over tp / ep ranks when
  // ep <= tp (vLLM FusedMoE with TP), whole experts when ep > tp.
  D.etp = static_cast<int>(par.ep <= par.tp ? par.tp / par.ep : 1);
  D.sp = false;  // every TP rank holds the batch's tokens
  D.set_model(model, par.tp);
  D.dropout = false;      // inference
  D.flash = true;         // FlashAttention / FlashInfer kernels (the stack's attention list)
  D.fusions = Fusions{};  // fused activation and rotary kernels (vLLM's custom ops)
  D.add_norm = true;      // fused_add_rms_norm (vLLM layernorm kernels)
  D.fp8 = {serving.dtype == DType::FP8, false, false};
  D.fp8_casts = false;
  D.kv_write = true;
  D.kv_elems_per_token = model.kv_cache_elements_per_token(par.tp);
  D.kv_elem_bytes = dtype_bytes(serving.kv_dtype);
  D.sampling = true;
  D.forward_only = true;
  const MoeSpec& moe = model.moe;
  if (moe.enabled()) {
    D.experts = moe.num_experts;
    D.local_experts = std::max<int64_t>(1, moe.num_experts / par.ep);
    D.top_k = moe.top_k;
    D.expert_ffn = std::max<int64_t>(1, moe.expert_ffn_hidden_size / D.etp);
    D.shared_ffn = moe.num_shared_experts * moe.shared_expert_ffn_hidden_size / par.tp;
    D.capacity_factor = 1.0;  // dropless: engines serve every token
    D.moe_tokens_replicated = true;
  }
  return D;
}

namespace {

// Expert routing of the batch: tokens this GPU's experts receive, the experts that receive
// any, and rows per expert GEMM.
void route(LayerDims& D) {
  const double T = static_cast<double>(D.T);
  // Every token of the EP group picks top_k experts; balanced routing gives each of the ep
  // shards its share. With ep > tp, ep / tp replicas share these MoE layers
  // (data-parallel attention): their batches are alike, so the others bring as many tokens.
  const double coupled = D.ep > D.tp ? static_cast<double>(D.ep / D.tp - 1) * T : 0.0;
  const double group_tokens = T + coupled;
  const double routed = group_tokens * static_cast<double>(D.top_k) / D.ep;
  // Experts that receive at least one token: E (1 - (1 - 1/E)^(tokens x top_k)) over the
  // whole model when routing is uniform; their weights are what a small batch reads.
  const double picks = group_tokens * static_cast<double>(D.top_k);
  const double hit = 1.0 - std::pow(1.0 - 1.0 / static_cast<double>(D.experts), picks);
  D.active_experts = std::max<int64_t>(
      1, std::min<int64_t>(D.local_experts,
                           std::llround(std::ceil(static_cast<double>(D.local_experts) * hit))));
  D.expert_tokens = routed;
  D.tokens_per_expert =
      std::max<int64_t>(1, std::llround(std::ceil(routed / static_cast<double>(D.active_experts))));
}

}  // namespace

void set_iteration(LayerDims& D, const StepBatch& b) {
  D.T = b.tokens();
  D.T_norm = static_cast<double>(D.T);
  D.head_tokens = b.logits_seqs;
  D.decode_seqs = b.decode_seqs;
  D.decode_context = b.decode_context_tokens;
  D.b = D.s = D.s_kv = D.flash_kv = 0;  // no prompt chunk: no FlashAttention
  D.flash_causal = false;
  if (b.prefill_tokens > 0) {  // FlashAttention over each chunk and what precedes it
    const int64_t seqs = std::max<int64_t>(1, b.prefill_seqs);
    const int64_t q = std::max<int64_t>(1, b.prefill_tokens / seqs);
    const double pairs = b.prefill_attention_pairs / static_cast<double>(seqs);
    D.b = seqs;
    D.s = q;
    // A chunk with nothing before it is causal over itself (pairs = q^2 / 2); one after
    // earlier chunks sees every earlier token and half of its own on average.
    D.flash_causal = pairs <= 0.5 * q * q * 1.0001;
    D.flash_kv = D.flash_causal ? q : std::max<int64_t>(1, std::llround(pairs / q));
    D.s_kv = D.flash_kv;
  }
  if (D.experts > 0) route(D);
}

}  // namespace rapid::detail
