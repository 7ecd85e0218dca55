#include "rapid/spec/model_spec.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

int64_t MoeSpec::moe_layers_in(int64_t first, int64_t last) const {
  if (!enabled()) return 0;
  // Layers first_dense_layers + k layer_freq: the multiples of layer_freq in [lo, hi).
  const int64_t lo = std::max(first, first_dense_layers) - first_dense_layers;
  const int64_t hi = last - first_dense_layers;
  if (hi <= lo) return 0;
  auto below = [&](int64_t x) { return (x + layer_freq - 1) / layer_freq; };
  return below(hi) - below(lo);
}

namespace {
int64_t mlp_params(const ModelSpec& m, int64_t ffn) {
  const int64_t matrices = m.activation == Activation::SwiGlu ? 3 : 2;
  const int64_t bias = m.linear_bias ? (matrices - 1) * ffn + m.hidden_size : 0;
  return matrices * m.hidden_size * ffn + bias;
}
}  // namespace

int64_t ModelSpec::attention_params() const {
  const int64_t h = hidden_size, d = head_dim, a = num_attention_heads, g = num_kv_heads;
  int64_t qkv = h * (a + 2 * g) * d;
  int64_t proj = a * d * h;
  int64_t norms = (norm == NormKind::LayerNorm ? 4 : 2) * h;
  int64_t bias = linear_bias ? (a + 2 * g) * d + h : 0;
  return qkv + proj + norms + bias;
}

int64_t ModelSpec::layer_params() const {
  return attention_params() + mlp_params(*this, ffn_hidden_size);
}

int64_t ModelSpec::expert_params() const {
  return mlp_params(*this, moe.expert_ffn_hidden_size);
}

int64_t ModelSpec::moe_layer_params() const {
  return attention_params() + hidden_size * moe.num_experts + moe.num_experts * expert_params() +
         moe.num_shared_experts * mlp_params(*this, moe.shared_expert_ffn_hidden_size);
}

int64_t ModelSpec::embedding_params() const {
  int64_t final_norm = (norm == NormKind::LayerNorm ? 2 : 1) * hidden_size;
  return vocab_size * hidden_size * (tied_embeddings ? 1 : 2) + final_norm;
}

int64_t ModelSpec::total_params() const {
  const int64_t moe_layers = moe.moe_layers_in(0, num_layers);
  return (num_layers - moe_layers) * layer_params() + moe_layers * moe_layer_params() +
         embedding_params();
}

int64_t ModelSpec::active_params() const {
  const int64_t moe_layers = moe.moe_layers_in(0, num_layers);
  const int64_t inactive = (moe.num_experts - moe.top_k) * expert_params();
  return total_params() - moe_layers * inactive;
}

double params_upper_bound(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size), d = static_cast<double>(m.head_dim);
  const double a = static_cast<double>(m.num_attention_heads);
  const double g = static_cast<double>(m.num_kv_heads);
  const double attention = h * (a + 2 * g) * d + a * d * h + (a + 2 * g) * d + 5 * h;
  auto mlp = [&](int64_t ffn) {
    return 3 * h * static_cast<double>(ffn) + 2 * static_cast<double>(ffn) + h;
  };
  double layer = mlp(m.ffn_hidden_size);
  if (m.moe.enabled())
    layer = std::max(
        layer, h * static_cast<double>(m.moe.num_experts) +
                   static_cast<double>(m.moe.num_experts) * mlp(m.moe.expert_ffn_hidden_size) +
                   static_cast<double>(m.moe.num_shared_experts) *
                       mlp(m.moe.shared_expert_ffn_hidden_size));
  return static_cast<double>(m.num_layers) * (attention + layer) +
         2 * static_cast<double>(m.vocab_size) * h + 2 * h;
}

ModelSpec parse_model(const YAML::Node& node, const std::string& file) {
  YamlMap m(node, file);
  ModelSpec s;
  s.name = m.string("name");
  s.num_layers = m.integer("num_layers", 1, 10000);
  s.hidden_size = m.integer("hidden_size", 1, 1000000);
  s.num_attention_heads = m.integer("num_attention_heads", 1, 100000);
  s.num_kv_heads = m.integer_or("num_kv_heads", s.num_attention_heads, 1, 100000);
  s.ffn_hidden_size = m.integer("ffn_hidden_size", 1, 10000000);
  s.vocab_size = m.integer("vocab_size", 1, 10000000);
  s.seq_length = m.integer("seq_length", 1, 100000000);
  s.activation = static_cast<Activation>(m.choice("activation", {"gelu", "swiglu"}));
  s.norm = static_cast<NormKind>(m.choice_or("norm", {"layernorm", "rmsnorm"}, 0));
  s.tied_embeddings = m.boolean_or("tied_embeddings", false);
  s.linear_bias = m.boolean_or("linear_bias", false);
  s.dropout = m.boolean_or("dropout", false);
  s.position_embedding = static_cast<PositionEmbedding>(m.choice_or(
      "position_embedding", {"rope", "learned"}, s.activation == Activation::SwiGlu ? 0 : 1));
  if (s.hidden_size % s.num_attention_heads != 0 && !m.has("head_dim"))
    m.fail("num_attention_heads", std::to_string(s.num_attention_heads),
           fmt::format("a divisor of hidden_size {} (or set head_dim)", s.hidden_size));
  s.head_dim = m.integer_or("head_dim", s.hidden_size / s.num_attention_heads, 1, 100000);
  if (s.num_attention_heads % s.num_kv_heads != 0)
    m.fail("num_kv_heads", std::to_string(s.num_kv_heads),
           fmt::format("a divisor of num_attention_heads {}", s.num_attention_heads));
  if (m.has("moe")) {
    YamlMap e = m.map("moe");
    s.moe.num_experts = e.integer("num_experts", 1, 100000);
    s.moe.top_k = e.integer("top_k", 1);
    if (s.moe.top_k > s.moe.num_experts)
      e.fail("top_k", std::to_string(s.moe.top_k),
             fmt::format("at most num_experts ({})", s.moe.num_experts));
    s.moe.expert_ffn_hidden_size =
        e.integer_or("expert_ffn_hidden_size", s.ffn_hidden_size, 1, 10000000);
    s.moe.num_shared_experts = e.integer_or("shared_experts", 0, 0, 100000);
    s.moe.shared_expert_ffn_hidden_size =
        e.integer_or("shared_expert_ffn_hidden_size", s.moe.expert_ffn_hidden_size, 1, 10000000);
    s.moe.layer_freq = e.integer_or("layer_freq", 1, 1, 10000);
    s.moe.first_dense_layers = e.integer_or("first_dense_layers", 0, 0, 10000);
    s.moe.capacity_factor = e.number_or("capacity_factor", 1.0, 1.0, 64.0);
    e.finish();
  }
  m.has("description");
  m.has("source");
  m.finish();
  // Each shape is bounded, their products are not: the parameter counts are int64.
  if (const double p = params_upper_bound(s); p > kMaxModelParams)
    throw InputError(file, "<model>", fmt::format("{:.3g} parameters", p),
                     fmt::format("a model of at most {:g} parameters (the layers, widths and "
                                 "experts multiply past what the memory model counts)",
                                 kMaxModelParams));
  return s;
}

}  // namespace rapid
