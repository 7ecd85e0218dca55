#include "rapid/workload/model_flops.hpp"

namespace rapid {

double model_flops_per_token(const ModelSpec& m, int64_t seq) {
  const double h = static_cast<double>(m.hidden_size), d = static_cast<double>(m.head_dim);
  const double a = static_cast<double>(m.num_attention_heads);
  const double g = static_cast<double>(m.num_kv_heads);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double L = static_cast<double>(m.num_layers);
  const double layer_matmul =
      h * (a + 2 * g) * d + a * d * h + (m.activation == Activation::SwiGlu ? 3.0 : 2.0) * h * f;
  const double lm_head = static_cast<double>(m.vocab_size) * h;
  return 6.0 * (L * layer_matmul + lm_head) + 12.0 * L * static_cast<double>(seq) * a * d;
}

double megatron_sc21_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden,
                           int64_t vocab) {
  const double B = static_cast<double>(batch), s = static_cast<double>(seq);
  const double l = static_cast<double>(layers), h = static_cast<double>(hidden);
  const double V = static_cast<double>(vocab);
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

}  // namespace rapid
