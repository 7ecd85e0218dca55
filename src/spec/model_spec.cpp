#include "rapid/spec/model_spec.hpp"

#include <fmt/format.h>

#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

int64_t ModelSpec::layer_params() const {
  const int64_t h = hidden_size, d = head_dim, a = num_attention_heads, g = num_kv_heads;
  const int64_t f = ffn_hidden_size;
  int64_t qkv = h * (a + 2 * g) * d;
  int64_t proj = a * d * h;
  int64_t mlp = (activation == Activation::SwiGlu ? 3 : 2) * h * f;
  int64_t norms = (norm == NormKind::LayerNorm ? 4 : 2) * h;
  int64_t bias =
      linear_bias ? ((a + 2 * g) * d + h + (activation == Activation::SwiGlu ? 2 : 1) * f + h) : 0;
  return qkv + proj + mlp + norms + bias;
}

int64_t ModelSpec::embedding_params() const {
  int64_t final_norm = (norm == NormKind::LayerNorm ? 2 : 1) * hidden_size;
  return vocab_size * hidden_size * (tied_embeddings ? 1 : 2) + final_norm;
}

int64_t ModelSpec::total_params() const {
  return num_layers * layer_params() + embedding_params();
}

ModelSpec parse_model(const YAML::Node& node, const std::string& file) {
  YamlMap m(node, file);
  ModelSpec s;
  s.name = m.string("name");
  s.num_layers = m.integer("num_layers");
  s.hidden_size = m.integer("hidden_size");
  s.num_attention_heads = m.integer("num_attention_heads");
  s.num_kv_heads = m.integer_or("num_kv_heads", s.num_attention_heads);
  s.ffn_hidden_size = m.integer("ffn_hidden_size");
  s.vocab_size = m.integer("vocab_size");
  s.seq_length = m.integer("seq_length");
  s.activation = static_cast<Activation>(m.choice("activation", {"gelu", "swiglu"}));
  s.norm = static_cast<NormKind>(m.choice_or("norm", {"layernorm", "rmsnorm"}, 0));
  s.tied_embeddings = m.boolean_or("tied_embeddings", false);
  s.linear_bias = m.boolean_or("linear_bias", false);
  s.dropout = m.boolean_or("dropout", false);
  if (s.hidden_size % s.num_attention_heads != 0 && !m.has("head_dim"))
    m.fail("num_attention_heads", std::to_string(s.num_attention_heads),
           fmt::format("a divisor of hidden_size {} (or set head_dim)", s.hidden_size));
  s.head_dim = m.integer_or("head_dim", s.hidden_size / s.num_attention_heads);
  if (s.num_attention_heads % s.num_kv_heads != 0)
    m.fail("num_kv_heads", std::to_string(s.num_kv_heads),
           fmt::format("a divisor of num_attention_heads {}", s.num_attention_heads));
  m.has("description");
  m.has("source");
  m.finish();
  return s;
}

}  // namespace rapid
