#include "rapid/workload/model_flops.hpp"

namespace rapid {

double attention_core_flops_per_token(const ModelSpec& m, int64_t seq) {
  const double a = static_cast<double>(m.num_attention_heads);
  const double d_qk = static_cast<double>(m.mla.enabled() ? m.mla.qk_head_dim() : m.head_dim);
  const double d_v = static_cast<double>(m.mla.enabled() ? m.mla.v_head_dim : m.head_dim);
  return 6.0 * static_cast<double>(seq) * a * (d_qk + d_v);
}

double model_flops_per_token(const ModelSpec& m, int64_t seq) {
  const double h = static_cast<double>(m.hidden_size);
  const double L = static_cast<double>(m.num_layers);
  const double c = is_gated(m.activation) ? 3.0 : 2.0;  // MLP matrices
  const double attention = static_cast<double>(m.attention_matmul_params());
  const double dense = attention + c * h * static_cast<double>(m.ffn_hidden_size);
  // MoE layers: the router and only the top_k routed experts a token visits, plus the
  // shared experts (Fedus et al. 2021; DeepSeek-AI 2024).
  const MoeSpec& e = m.moe;
  const double moe =
      attention + h * static_cast<double>(e.num_experts) +
      c * h *
          (static_cast<double>(e.top_k * e.expert_ffn_hidden_size) +
           static_cast<double>(e.num_shared_experts * e.shared_expert_ffn_hidden_size));
  const double moe_layers = static_cast<double>(e.moe_layers_in(0, m.num_layers));
  const double lm_head = static_cast<double>(m.vocab_size) * h;
  return 6.0 * ((L - moe_layers) * dense + moe_layers * moe + lm_head) +
         L * attention_core_flops_per_token(m, seq);
}

double megatron_sc21_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden,
                           int64_t vocab) {
  const double B = static_cast<double>(batch), s = static_cast<double>(seq);
  const double l = static_cast<double>(layers), h = static_cast<double>(hidden);
  const double V = static_cast<double>(vocab);
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

}  // namespace rapid
