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

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Gelu:
      return "gelu";
    case Activation::SwiGlu:
      return "swiglu";
    case Activation::GeGlu:
      return "geglu";
  }
  return "gelu";
}

namespace {
int64_t mlp_params(const ModelSpec& m, int64_t ffn) {
  const int64_t matrices = is_gated(m.activation) ? 3 : 2;
  const int64_t bias = m.linear_bias ? (matrices - 1) * ffn + m.hidden_size : 0;
  return matrices * m.hidden_size * ffn + bias;
}

// One norm over `width` elements: a scale, and a bias with LayerNorm.
int64_t norm_params(const ModelSpec& m, int64_t width) {
  return (m.norm == NormKind::LayerNorm ? 2 : 1) * width;
}

// MLA's down projections W_DQ (when the queries are compressed) and W_DKV with their latent
// norms and biases (HF modeling_deepseek.py: q_a_proj and kv_a_proj_with_mqa take
// attention_bias); what every TP rank holds whole.
int64_t mla_down_params(const ModelSpec& m) {
  const MlaSpec& l = m.mla;
  const int64_t h = m.hidden_size, kv = l.kv_lora_rank + l.qk_rope_head_dim;
  int64_t p = h * kv + norm_params(m, l.kv_lora_rank) + (m.linear_bias ? kv : 0);
  if (l.q_lora_rank > 0)
    p += h * l.q_lora_rank + norm_params(m, l.q_lora_rank) + (m.linear_bias ? l.q_lora_rank : 0);
  return p;
}
}  // namespace

int64_t ModelSpec::attention_matmul_params() const {
  const int64_t h = hidden_size, a = num_attention_heads;
  if (mla.enabled()) {
    // DeepSeek-V2 eqs 9-19 (MlaSpec): W_DQ h x q_lora and W_UQ q_lora x a(nope+rope), or
    // W_Q h x a(nope+rope); W_DKV h x (kv_lora+rope); W_UKV kv_lora x a(nope+v); W_O a v x h.
    const MlaSpec& l = mla;
    const int64_t q = a * l.qk_head_dim();
    const int64_t wq = l.q_lora_rank > 0 ? h * l.q_lora_rank + l.q_lora_rank * q : h * q;
    const int64_t wkv = h * (l.kv_lora_rank + l.qk_rope_head_dim) +
                        l.kv_lora_rank * a * (l.qk_nope_head_dim + l.v_head_dim);
    return wq + wkv + a * l.v_head_dim * h;
  }
  const int64_t d = head_dim, g = num_kv_heads;
  return h * (a + 2 * g) * d + a * d * h;
}

int64_t ModelSpec::layer_norm_params() const {
  return (post_norms ? 4 : 2) * norm_params(*this, hidden_size);
}

int64_t ModelSpec::attention_tp_replicated_params() const {
  return layer_norm_params() + (mla.enabled() ? mla_down_params(*this) : 0);
}

int64_t ModelSpec::attention_params() const {
  const int64_t h = hidden_size;
  if (mla.enabled()) {
    // The matmuls, the layer's norms, the latent norms; biases on q_a_proj,
    // kv_a_proj_with_mqa and o_proj with attention_bias (HF modeling_deepseek.py).
    const MlaSpec& l = mla;
    const int64_t latent_norms = norm_params(*this, l.kv_lora_rank) +
                                 (l.q_lora_rank > 0 ? norm_params(*this, l.q_lora_rank) : 0);
    const int64_t bias = linear_bias ? l.q_lora_rank + l.kv_lora_rank + l.qk_rope_head_dim + h : 0;
    return attention_matmul_params() + layer_norm_params() + latent_norms + bias;
  }
  const int64_t d = head_dim, a = num_attention_heads, g = num_kv_heads;
  // Q, K and V biases (a + 2g) d, the output projection's h (linear_bias); qkv_bias: the
  // first alone (Qwen2, ModelSpec::qkv_bias).
  int64_t bias = linear_bias ? (a + 2 * g) * d + h : qkv_bias ? (a + 2 * g) * d : 0;
  return attention_matmul_params() + layer_norm_params() + bias;
}

double ModelSpec::kv_cache_elements_per_token(int64_t tp) const {
  if (mla.enabled()) return static_cast<double>(mla.kv_lora_rank + mla.qk_rope_head_dim);
  const int64_t kv_heads_per_gpu = std::max<int64_t>(1, num_kv_heads / std::max<int64_t>(1, tp));
  return 2.0 * static_cast<double>(kv_heads_per_gpu) * static_cast<double>(head_dim);
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
  double attention = h * (a + 2 * g) * d + a * d * h + (a + 2 * g) * d + 9 * h;
  if (m.mla.enabled()) {
    // Both query paths (compressed and not), their norms with LayerNorm bias, every bias.
    const MlaSpec& l = m.mla;
    const double ql = static_cast<double>(l.q_lora_rank), kl = static_cast<double>(l.kv_lora_rank);
    const double qk = static_cast<double>(l.qk_head_dim()),
                 r = static_cast<double>(l.qk_rope_head_dim);
    const double v = static_cast<double>(l.v_head_dim), n = static_cast<double>(l.qk_nope_head_dim);
    attention = h * ql + ql * a * qk + h * a * qk + h * (kl + r) + kl * a * (n + v) + a * v * h +
                3 * (ql + kl + r) + 9 * h;
  }
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
  s.seq_length = m.integer_or("seq_length", 0, 1, 100000000);  // 0: the job gives it
  s.activation = static_cast<Activation>(m.choice("activation", {"gelu", "swiglu", "geglu"}));
  s.norm = static_cast<NormKind>(m.choice_or("norm", {"layernorm", "rmsnorm"}, 0));
  s.tied_embeddings = m.boolean_or("tied_embeddings", false);
  s.linear_bias = m.boolean_or("linear_bias", false);
  s.qkv_bias = m.boolean_or("qkv_bias", false);
  s.dropout = m.boolean_or("dropout", false);
  s.post_norms = m.boolean_or("post_norms", false);
  s.position_embedding = static_cast<PositionEmbedding>(
      m.choice_or("position_embedding", {"rope", "learned"}, is_gated(s.activation) ? 0 : 1));
  if (m.has("mla")) {
    YamlMap l = m.map("mla");
    MlaSpec& a = s.mla;
    a.kv_lora_rank = l.integer("kv_lora_rank", 1, 1000000);
    a.q_lora_rank = l.integer_or("q_lora_rank", 0, 0, 1000000);
    a.qk_nope_head_dim = l.integer("qk_nope_head_dim", 1, 100000);
    a.qk_rope_head_dim = l.integer("qk_rope_head_dim", 0, 100000);
    a.v_head_dim = l.integer("v_head_dim", 1, 100000);
    l.finish();
    // After W_UKV every head has its own keys and values: no K/V groups.
    if (s.num_kv_heads != s.num_attention_heads)
      m.fail("num_kv_heads", std::to_string(s.num_kv_heads),
             fmt::format("num_attention_heads ({}) with mla: the up-projection gives every "
                         "head its own keys and values",
                         s.num_attention_heads));
  }
  if (s.hidden_size % s.num_attention_heads != 0 && !m.has("head_dim") && !s.mla.enabled())
    m.fail("num_attention_heads", std::to_string(s.num_attention_heads),
           fmt::format("a divisor of hidden_size {} (or set head_dim)", s.hidden_size));
  // MLA's head dims are its own; head_dim then only names the value head dim.
  s.head_dim = m.integer_or(
      "head_dim", s.mla.enabled() ? s.mla.v_head_dim : s.hidden_size / s.num_attention_heads, 1,
      100000);
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
