// The application input: a decoder-only transformer's shapes (configs/models/*.yaml).
#pragma once

#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

namespace rapid {

enum class Activation : uint8_t { Gelu, SwiGlu };
enum class NormKind : uint8_t { LayerNorm, RmsNorm };

/// Shapes of a GPT/Llama-style decoder. Counts are plain integers; no units.
struct ModelSpec {
  std::string name;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;          ///< h
  int64_t num_attention_heads = 0;  ///< a
  int64_t num_kv_heads = 0;         ///< g (GQA groups); == a for multi-head attention
  int64_t head_dim = 0;             ///< d, defaults to h / a
  int64_t ffn_hidden_size = 0;      ///< f (per expert for MoE)
  int64_t vocab_size = 0;           ///< V (padded as trained)
  int64_t seq_length = 0;           ///< default training sequence length s
  Activation activation = Activation::Gelu;
  NormKind norm = NormKind::LayerNorm;
  bool tied_embeddings = false;
  bool linear_bias = false;  ///< GPT-style biases on every linear layer
  bool dropout = false;      ///< dropout after attention/MLP (stores 1-byte masks)

  /// Parameters of one transformer layer: QKV h*(a+2g)*d, output a*d*h, MLP 2*h*f (GELU) or
  /// 3*h*f (SwiGLU), two norms (2h or 4h with LayerNorm bias), biases when linear_bias.
  int64_t layer_params() const;
  /// Input embedding V*h plus the LM head V*h unless tied, plus the final norm.
  int64_t embedding_params() const;
  /// All parameters: num_layers * layer_params() + embedding_params().
  int64_t total_params() const;
};

/// Reads a model mapping (the contents of configs/models/NAME.yaml or an inline `model:`).
/// `file` names the source in errors. Throws InputError on a missing/invalid key or an
/// unknown key, and when shapes are inconsistent (heads not dividing hidden size, kv heads
/// not dividing heads).
ModelSpec parse_model(const YAML::Node& node, const std::string& file);

}  // namespace rapid
