// Import of Hugging Face transformers `config.json` files into our model description.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rapid/spec/model_spec.hpp"

namespace rapid {

/// Deepest nesting of arrays and objects a config.json may have (real ones stay under 5;
/// printing or destroying a value nests one call per level).
inline constexpr int kMaxJsonDepth = 64;

/// Parses the text of a config.json; `file` names it in errors. Throws InputError (key
/// "<json>") when it is not JSON, nests deeper than kMaxJsonDepth or holds a number past
/// the double range, and (naming the key) when an object gives one key twice.
nlohmann::json parse_hf_config(const std::string& text, const std::string& file);

/// Maps the standard fields of a config.json (`model_type` llama, mistral, qwen2, qwen3,
/// mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, gemma2, phi3 or gpt2) to a
/// ModelSpec: hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
/// num_key_value_heads, head_dim, vocab_size, tie_word_embeddings, hidden_act (silu:
/// SwiGLU, gelu*: GeGLU), and the MoE fields of Mixtral (num_local_experts,
/// num_experts_per_tok), Qwen-MoE (num_experts, moe_intermediate_size,
/// shared_expert_intermediate_size, decoder_sparse_step) and DeepSeek (n_routed_experts,
/// n_shared_experts, moe_intermediate_size, first_k_dense_replace, moe_layer_freq; multi-head
/// latent attention from q_lora_rank (null: 0), kv_lora_rank, qk_nope_head_dim,
/// qk_rope_head_dim, v_head_dim). Gemma 2: GeGLU (hidden_activation), tied embeddings by
/// default, 4 RMSNorms per layer (post_norms). Phi-3: its fused qkv_proj and gate_up_proj
/// hold the same weights as separate ones. The sequence length is left unset (0):
/// max_position_embeddings / n_positions is the longest context, not a training length.
/// `name` names the model; `file` the source. What the config sets that the model leaves
/// out (sliding windows, logit soft-capping, multi-token prediction) is appended to `notes`
/// when given, one sentence each.
/// Throws InputError naming `file` and the field it could not map: an unknown model_type,
/// a missing or non-integer required field, a value outside what a model file takes
/// (parse_model's bounds: the written file must load).
ModelSpec import_hf_config(const nlohmann::json& config, const std::string& file,
                           const std::string& name, std::vector<std::string>* notes = nullptr);

/// The model as YAML text in the configs/models format, with a header comment naming
/// `source` and listing `notes` (import_hf_config's). Parsing it back with parse_model()
/// gives the same ModelSpec.
std::string model_to_yaml(const ModelSpec& m, const std::string& source,
                          const std::vector<std::string>& notes = {});

}  // namespace rapid
