// The application input: a decoder-only transformer's shapes (configs/models/*.yaml).
#pragma once

#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

namespace rapid {

/// The MLP's nonlinearity: GELU (two matrices, GPT), or a gated linear unit with SiLU
/// (SwiGLU, Llama) or GELU (GeGLU, Gemma; Shazeer 2020) gating: three matrices (gate, up,
/// down) of the same shapes.
enum class Activation : uint8_t { Gelu, SwiGlu, GeGlu };
/// The activation's name in model YAML: "gelu", "swiglu", "geglu".
const char* activation_name(Activation a);
/// SwiGLU and GeGLU: a gate and an up projection (3 h x f matrices instead of 2).
inline bool is_gated(Activation a) {
  return a != Activation::Gelu;
}
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

/// Multi-head latent attention (MLA; DeepSeek-AI 2024, "DeepSeek-V2", arXiv 2405.04434, sec
/// 2.1.2-2.1.3, eqs 9-19; Hugging Face modeling_deepseek.py, DeepseekV3Attention). Per layer,
/// with a heads:
///   W_DQ  h x q_lora_rank (q_a_proj) and its RMSNorm q_lora_rank (q_a_layernorm);
///   W_UQ  q_lora_rank x a (nope + rope) (q_b_proj); with q_lora_rank 0 instead one
///         W_Q h x a (nope + rope) (q_proj): queries not compressed (DeepSeek-V2-Lite);
///   W_DKV h x (kv_lora_rank + rope) (kv_a_proj_with_mqa: the latent c_KV and the RoPE key
///         k_R shared by every head) and its RMSNorm kv_lora_rank (kv_a_layernorm);
///   W_UKV kv_lora_rank x a (nope + v) (kv_b_proj: the keys' no-RoPE part and the values);
///   W_O   a v x h (o_proj).
/// Attention then runs with query/key head dim nope + rope and value head dim v; the KV
/// cache keeps c_KV and k_R, kv_lora_rank + rope elements per token and layer.
struct MlaSpec {
  int64_t q_lora_rank = 0;       ///< d_c' (0: queries not compressed, a plain W_Q)
  int64_t kv_lora_rank = 0;      ///< d_c (0: MLA off)
  int64_t qk_nope_head_dim = 0;  ///< d_h: the query/key part without RoPE, per head
  int64_t qk_rope_head_dim = 0;  ///< d_h^R: the decoupled RoPE part (queries per head, one key)
  int64_t v_head_dim = 0;        ///< value head dim

  bool enabled() const { return kv_lora_rank > 0; }
  int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

/// Shapes of a GPT/Llama-style decoder. Counts are plain integers; no units.
struct ModelSpec {
  std::string name;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;          ///< h
  int64_t num_attention_heads = 0;  ///< a
  int64_t num_kv_heads = 0;         ///< g (GQA groups); == a for multi-head attention
  int64_t head_dim = 0;             ///< d, defaults to h / a (MLA: unused, v_head_dim)
  int64_t ffn_hidden_size = 0;      ///< f (per expert for MoE)
  int64_t vocab_size = 0;           ///< V (padded as trained)
  /// Default training sequence length s; 0: not set (a job must give training.seq_length).
  int64_t seq_length = 0;
  Activation activation = Activation::Gelu;
  NormKind norm = NormKind::LayerNorm;
  bool tied_embeddings = false;
  bool linear_bias = false;  ///< GPT-style biases on every linear layer
  /// Biases on the query, key and value projections only, (a + 2g) * d per layer (Qwen2:
  /// q_proj, k_proj and v_proj are nn.Linear(..., bias=True), o_proj and the MLP without,
  /// HF transformers models/qwen2/modeling_qwen2.py Qwen2Attention). Counted in the
  /// parameters (memory, DP traffic), not as ops; implied by linear_bias.
  bool qkv_bias = false;
  bool dropout = false;  ///< dropout after attention/MLP (stores 1-byte masks)
  /// Norms after the attention and after the MLP too (Gemma 2: RMSNorm on the input and the
  /// output of each sub-layer, 4 norms per layer instead of 2).
  bool post_norms = false;
  /// Default: rope with SwiGLU (Llama family), learned with GELU (GPT family).
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  MoeSpec moe;  ///< experts (num_experts == 0: dense)
  MlaSpec mla;  ///< multi-head latent attention (kv_lora_rank == 0: standard/GQA attention)

  /// Parameters of one transformer layer: QKV h*(a+2g)*d, output a*d*h, MLP 2*h*f (GELU) or
  /// 3*h*f (SwiGLU, GeGLU), two norms (2h or 4h with LayerNorm bias; 4 norms with
  /// post_norms), biases when linear_bias (the QKV ones alone with qkv_bias). MLA: the MLA
  /// projections instead of QKV/output.
  int64_t layer_params() const;
  /// Attention part of a layer (QKV, output projection, their biases, the layer's norms).
  /// MLA: W_DQ, q_a_layernorm, W_UQ (or W_Q), W_DKV, kv_a_layernorm, W_UKV, W_O (MlaSpec).
  int64_t attention_params() const;
  /// The weights of the attention's linear layers only (no norms, no biases): what the
  /// model FLOPs count (6 x parameters per token).
  int64_t attention_matmul_params() const;
  /// The layer's norm weights (2 or 4 norms, each h or 2h with LayerNorm's bias).
  int64_t layer_norm_params() const;
  /// Parameters every rank of a TP group holds whole: the layer's norms and, with MLA, the
  /// down projections W_DQ and W_DKV with their latent norms (Megatron-Core replicates them,
  /// megatron/core/transformer/multi_latent_attention.py: TELinear parallel_mode
  /// "duplicated").
  int64_t attention_tp_replicated_params() const;
  /// KV cache elements one token keeps in one layer on one GPU of a TP group of tp:
  /// standard/GQA 2 * kv_heads_per_gpu * head_dim with kv_heads_per_gpu =
  /// max(1, num_kv_heads / tp) (vLLM replicates KV heads when tp > num_kv_heads); MLA caches
  /// the compressed latent kv_lora_rank + qk_rope_head_dim, the same on every TP rank
  /// (DeepSeek-V2 sec 2.1.2; vLLM MLA backend).
  double kv_cache_elements_per_token(int64_t tp) const;
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
/// not dividing heads; with `mla:` kv heads other than the heads). `seq_length` is
/// optional (0 when absent).
ModelSpec parse_model(const YAML::Node& node, const std::string& file);

}  // namespace rapid
