// The application input: a decoder-only transformer's shapes (configs/models/*.yaml).
#pragma once

#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

namespace rapid {

enum class Activation : uint8_t { Gelu, SwiGlu };
enum class NormKind : uint8_t { LayerNorm, RmsNorm };
/// How positions enter the model: rotary embedding of Q and K in every layer (Su et al.
/// 2021; Llama), or learned absolute embeddings added to the input (GPT-2/3).
enum class PositionEmbedding : uint8_t { Rope, Learned };

/// Mixture-of-experts layers (Shazeer et al. 2017; Fedus et al. 2021; Mixtral, DeepSeek-V3).
/// A layer i is an MoE layer when i >= first_dense_layers and (i - first_dense_layers) is
/// a multiple of layer_freq; its MLP is `num_experts` routed experts of FFN size
/// `expert_ffn_hidden_size` (top_k of them per token) plus `num_shared_experts` always-on
/// experts of size `shared_expert_ffn_hidden_size`, and a router (h x num_experts).
struct MoeSpec {
  int64_t num_experts = 0;  ///< 0: a dense model
  int64_t top_k = 0;
  int64_t expert_ffn_hidden_size = 0;
  int64_t num_shared_experts = 0;
  int64_t shared_expert_ffn_hidden_size = 0;
  int64_t layer_freq = 1;
  int64_t first_dense_layers = 0;
  double capacity_factor = 1.0;  ///< expert buffer headroom over the balanced token count

  bool enabled() const { return num_experts > 0; }
  bool is_moe_layer(int64_t layer) const {
    return enabled() && layer >= first_dense_layers &&
           (layer - first_dense_layers) % layer_freq == 0;
  }
  /// MoE layers among layers [first, last).
  int64_t moe_layers_in(int64_t first, int64_t last) const;
};

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
  /// Default: rope with SwiGLU (Llama family), learned with GELU (GPT family).
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  MoeSpec moe;  ///< experts (num_experts == 0: dense)

  /// Parameters of one transformer layer: QKV h*(a+2g)*d, output a*d*h, MLP 2*h*f (GELU) or
  /// 3*h*f (SwiGLU), two norms (2h or 4h with LayerNorm bias), biases when linear_bias.
  int64_t layer_params() const;
  /// Attention part of a layer (QKV, output projection, their biases, the two norms).
  int64_t attention_params() const;
  /// An MoE layer: attention + router h*E + E routed experts + shared experts.
  int64_t moe_layer_params() const;
  /// One routed expert's MLP (2 or 3 matrices of h x f_e).
  int64_t expert_params() const;
  /// Input embedding V*h plus the LM head V*h unless tied, plus the final norm.
  int64_t embedding_params() const;
  /// All parameters: dense layers * layer_params() + MoE layers * moe_layer_params() +
  /// embedding_params().
  int64_t total_params() const;
  /// Parameters a token goes through: dense layers, MoE layers with only top_k routed
  /// experts (plus shared experts and router), embeddings.
  int64_t active_params() const;
};

/// Largest model parse_model accepts (in parameters): 1e15 parameters at 20 bytes each stay
/// far inside int64 bytes.
inline constexpr double kMaxModelParams = 1e15;

/// An upper bound of m.total_params() computed in double (it cannot overflow).
double params_upper_bound(const ModelSpec& m);

/// Reads a model mapping (the contents of configs/models/NAME.yaml or an inline `model:`).
/// `file` names the source in errors. Throws InputError on a missing/invalid key or an
/// unknown key, and when shapes are inconsistent (heads not dividing hidden size, kv heads
/// not dividing heads).
ModelSpec parse_model(const YAML::Node& node, const std::string& file);

}  // namespace rapid
