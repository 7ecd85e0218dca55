#include "rapid/inference/serving_memory.hpp"

#include <algorithm>
#include <cmath>

#include "rapid/workload/workload.hpp"

namespace rapid {

ServingMemory serving_memory(const ModelSpec& model, const HardwareSpec& hw,
                             const ServingSpec& serving, const ParallelConfig& par) {
  ServingMemory m;
  const ServingStack& st = serving.stack;
  const double wbytes = dtype_bytes(serving.dtype), kvb = dtype_bytes(serving.kv_dtype);
  const int64_t etp = par.ep <= par.tp ? par.tp / par.ep : 1;
  // Dense parts are split over tp; routed experts over ep (and etp inside an expert).
  const double attn = static_cast<double>(model.attention_params()) / par.tp;
  const double dense_layer = static_cast<double>(model.layer_params()) / par.tp;
  double moe_layer = 0;
  if (model.moe.enabled()) {
    const double experts = static_cast<double>(model.moe.num_experts) * model.expert_params();
    moe_layer =
        attn +
        (static_cast<double>(model.moe_layer_params()) - model.attention_params() - experts) /
            par.tp +
        experts / (static_cast<double>(par.ep) * etp);
  }
  const double emb = static_cast<double>(model.vocab_size) * model.hidden_size / par.tp;
  int64_t first = 0, most_layers = 0;
  double weights = 0;
  for (int64_t s = 0; s < par.pp; ++s) {
    const int64_t n = chunk_layers(model.num_layers, par.pp, s);  // as the step model splits
    const int64_t moe = model.moe.moe_layers_in(first, first + n);
    double w = (n - moe) * dense_layer + moe * moe_layer;
    if (s == 0) w += emb;
    if (s == par.pp - 1 && (!model.tied_embeddings || par.pp > 1)) w += emb;
    weights = std::max(weights, w);
    most_layers = std::max(most_layers, n);
    first += n;
  }
  m.weights_bytes = weights * wbytes;
  // The profiling forward's peak: the residual stream, the normed input and the widest
  // intermediate (QKV or the MLP's gate and up outputs) of max_num_batched_tokens tokens,
  // plus the logits of max_num_seqs sequences in fp32 (vLLM profile_run).
  const double T = static_cast<double>(st.max_num_batched_tokens);
  const int64_t ffn = std::max(
      model.ffn_hidden_size,
      model.moe.enabled() ? model.moe.expert_ffn_hidden_size * model.moe.top_k : int64_t{0});
  const double qkv = static_cast<double>(model.num_attention_heads + 2 * model.num_kv_heads) *
                     model.head_dim / par.tp;
  const double widest = std::max(qkv, 3.0 * ffn / par.tp);
  m.activations_bytes = T * (2.0 * model.hidden_size + widest) * 2.0 +
                        static_cast<double>(st.max_num_seqs) * model.vocab_size / par.tp * 4.0;
  m.workspace_bytes = st.workspace_bytes;
  m.capacity_bytes = hw.hbm_capacity_bytes * st.gpu_memory_utilization;
  m.kv_bytes_per_token =
      static_cast<double>(most_layers) * model.kv_cache_elements_per_token(par.tp) * kvb;
  // What the stack's memory fraction covers (docs/inference.md "Serving stacks"): vLLM's
  // everything it holds; SGLang's weights and the KV pool (activations, graphs and
  // workspace in the rest); TensorRT-LLM's the memory left after weights and activations.
  const double hbm = hw.hbm_capacity_bytes, util = st.gpu_memory_utilization;
  switch (st.memory_budget) {
    case MemoryBudget::Total:
      m.kv_budget_bytes =
          m.capacity_bytes - m.weights_bytes - m.activations_bytes - m.workspace_bytes;
      break;
    case MemoryBudget::Static:
      m.kv_budget_bytes = std::min(m.capacity_bytes - m.weights_bytes,
                                   hbm - m.weights_bytes - m.activations_bytes - m.workspace_bytes);
      break;
    case MemoryBudget::Free:
      m.kv_budget_bytes = util * (hbm - m.weights_bytes - m.activations_bytes - m.workspace_bytes);
      break;
  }
  const double block_bytes = m.kv_bytes_per_token * st.kv_block_tokens;
  m.kv_blocks = m.kv_budget_bytes > 0 && block_bytes > 0
                    ? static_cast<int64_t>(std::floor(m.kv_budget_bytes / block_bytes))
                    : 0;
  const int64_t longest = serving.max_seq_tokens();
  m.block_tokens = st.kv_block_tokens;
  m.blocks_per_request = (longest + st.kv_block_tokens - 1) / st.kv_block_tokens;
  m.max_batch = m.blocks_per_request > 0
                    ? std::min<int64_t>(st.max_num_seqs, m.kv_blocks / m.blocks_per_request)
                    : 0;
  return m;
}

}  // namespace rapid
