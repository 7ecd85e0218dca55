#include "rapid/spec/hf_config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <sstream>

#include "json_key_guard.hpp"
#include "rapid/common/error.hpp"

namespace rapid {

namespace {

using nlohmann::json;

class Fields {
 public:
  Fields(const json& j, const std::string& file) : j_(j), file_(file) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  // parse_model's bounds (src/spec/model_spec.cpp).
  static constexpr int64_t kMaxLayers = 10'000, kMaxHidden = 1'000'000, kMaxHeads = 100'000;

  /// An integer in [min, max] (parse_model's bounds for the field it becomes).
  int64_t integer(const char* key, int64_t min = 1, int64_t max = kMaxShape) const {
    if (!has(key)) throw InputError(file_, key, "<missing>", "this config.json field");
    const json& v = j_.at(key);
    const std::string expected = fmt::format("an integer from {} to {}", min, max);
    if (!v.is_number_integer()) throw InputError(file_, key, v.dump(), expected);
    // Unsigned values above int64 would wrap negative.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max))
      throw InputError(file_, key, v.dump(), expected);
    const auto x = v.get<int64_t>();
    if (x < min || x > max) throw InputError(file_, key, v.dump(), expected);
    return x;
  }
  int64_t integer_or(const char* key, int64_t fallback, int64_t min = 1,
                     int64_t max = kMaxShape) const {
    return has(key) ? integer(key, min, max) : fallback;
  }
  static constexpr int64_t kMaxShape = 10'000'000;  // model files' largest FFN / vocabulary
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) throw InputError(file_, key, v.dump(), "true or false");
    return v.get<bool>();
  }
  /// A number as JSON text, for the notes that quote what the config set (anything else
  /// is not quoted: the notes become comments of the written YAML).
  std::string text(const char* key) const {
    if (!has(key)) return "null";
    return j_.at(key).is_number() ? j_.at(key).dump() : "set";
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) throw InputError(file_, key, v.dump(), "a string");
    return v.get<std::string>();
  }

 private:
  const json& j_;
  const std::string& file_;
};

constexpr std::array<const char*, 12> kKnownTypes{
    "llama",     "mistral",     "qwen2",       "qwen3",  "mixtral", "qwen2_moe",
    "qwen3_moe", "deepseek_v2", "deepseek_v3", "gemma2", "phi3",    "gpt2"};

}  // namespace

json parse_hf_config(const std::string& text, const std::string& file) {
  // The parser itself is iterative; a depth limit keeps dump() and the destructor, which
  // recurse, from overflowing the stack (100000 nested [ was a SIGSEGV).
  // Read through a stream: where it stands locates a duplicate key (json_key_guard.hpp).
  std::istringstream in(text);
  JsonKeyGuard keys(text, in, file);
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth >= kMaxJsonDepth &&
        (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start))
      throw InputError(file, "<json>", fmt::format("arrays or objects nested {} deep", depth + 1),
                       fmt::format("JSON nested at most {} levels", kMaxJsonDepth));
    keys.on_event(event, parsed);
    return true;
  };
  try {
    return json::parse(in, check);
  } catch (const json::exception& e) {  // parse_error, out_of_range.406 (1e400)
    throw InputError(file, "<json>", e.what(), "valid JSON");
  }
}

ModelSpec import_hf_config(const json& config, const std::string& file, const std::string& name,
                           std::vector<std::string>* notes) {
  if (!config.is_object())
    throw InputError(file, "<json>", config.dump().substr(0, 40), "a JSON object");
  Fields f(config, file);
  const std::string type = f.string_or("model_type", "");
  bool known = false;
  for (const char* t : kKnownTypes) known = known || type == t;
  if (!known)
    throw InputError(file, "model_type", type.empty() ? "<missing>" : type,
                     fmt::format("one of the architectures rapid can map ({})",
                                 "llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, "
                                 "deepseek_v2, deepseek_v3, gemma2, phi3, gpt2"));
  auto note = [&](std::string text) {
    if (notes) notes->push_back(std::move(text));
  };
  ModelSpec m;
  m.name = name;
  if (type == "gpt2") {
    m.hidden_size = f.integer("n_embd", 1, Fields::kMaxHidden);
    m.num_layers = f.integer("n_layer", 1, Fields::kMaxLayers);
    m.num_attention_heads = f.integer("n_head", 1, Fields::kMaxHeads);
    m.num_kv_heads = m.num_attention_heads;
    m.ffn_hidden_size = f.integer_or("n_inner", 4 * m.hidden_size);
    m.vocab_size = f.integer("vocab_size");
    // No seq_length: n_positions is the longest context, not a training length.
    m.activation = Activation::Gelu;
    m.norm = NormKind::LayerNorm;
    m.tied_embeddings = f.boolean_or("tie_word_embeddings", true);
    m.linear_bias = true;
    m.dropout = true;
  } else {
    m.hidden_size = f.integer("hidden_size", 1, Fields::kMaxHidden);
    m.num_layers = f.integer("num_hidden_layers", 1, Fields::kMaxLayers);
    m.num_attention_heads = f.integer("num_attention_heads", 1, Fields::kMaxHeads);
    m.num_kv_heads =
        f.integer_or("num_key_value_heads", m.num_attention_heads, 1, Fields::kMaxHeads);
    m.ffn_hidden_size = f.integer("intermediate_size");
    m.vocab_size = f.integer("vocab_size");
    // No seq_length: max_position_embeddings is the longest context the positions reach
    // (131072 for Llama 3.1, 163840 for DeepSeek-V3), not a training length; a training job
    // defaulting to it ran out of memory. The job gives training.seq_length.
    // Gated MLP in all of these families: SiLU (SwiGLU) or GELU (GeGLU, same shapes; Gemma 2
    // names it hidden_activation, gelu_pytorch_tanh).
    const bool gemma2 = type == "gemma2";
    const char* act_key = gemma2 && f.has("hidden_activation") ? "hidden_activation" : "hidden_act";
    const std::string act = f.string_or(act_key, gemma2 ? "gelu_pytorch_tanh" : "silu");
    if (act == "silu" || act == "swish")
      m.activation = Activation::SwiGlu;
    else if (act.rfind("gelu", 0) == 0)
      m.activation = Activation::GeGlu;
    else
      throw InputError(file, act_key, act, "silu, swish or gelu (a gated MLP)");
    m.norm = NormKind::RmsNorm;
    // Gemma 2 ties the LM head to the embedding (Gemma2Config default) and normalizes the
    // input and the output of both sub-layers (4 RMSNorms per layer: input_layernorm,
    // post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm in
    // HF modeling_gemma2.py; Gemma Team 2024, "Gemma 2", sec 2).
    m.tied_embeddings = f.boolean_or("tie_word_embeddings", gemma2);
    m.post_norms = gemma2;
    m.linear_bias = f.boolean_or("attention_bias", false);
    // Qwen2 (and Qwen2-MoE) always put biases on q_proj, k_proj and v_proj, whatever the
    // config says (Qwen2Config has no key for it; HF transformers
    // models/qwen2/modeling_qwen2.py and models/qwen2_moe/modeling_qwen2_moe.py:
    // nn.Linear(..., bias=True) for those three, bias=False for o_proj). Qwen3 dropped them
    // for QK-norm (models/qwen3/modeling_qwen3.py: bias=config.attention_bias).
    m.qkv_bias = (type == "qwen2" || type == "qwen2_moe") && !m.linear_bias;
    // Not modeled: local sliding-window attention (Gemma 2 on every other layer, Mistral
    // 7B v0.1, Phi-3) is counted as full causal attention; Gemma 2's tanh soft-capping of
    // the attention scores and the final logits is elementwise work with no parameters.
    if (f.has("sliding_window") && f.boolean_or("use_sliding_window", true))
      note(
          fmt::format("sliding-window attention (sliding_window {}{}) is not modeled: every "
                      "layer attends over the whole causal context",
                      f.text("sliding_window"), gemma2 ? ", every other layer" : ""));
    if (f.has("attn_logit_softcapping") || f.has("final_logit_softcapping"))
      note(
          fmt::format("logit soft-capping (attn_logit_softcapping {}, final_logit_softcapping "
                      "{}) is not modeled: elementwise, no parameters",
                      f.text("attn_logit_softcapping"), f.text("final_logit_softcapping")));
  }
  if (!f.has("head_dim") && m.hidden_size < m.num_attention_heads)
    throw InputError(file, "num_attention_heads", std::to_string(m.num_attention_heads),
                     fmt::format("at most hidden_size ({}) heads, or a head_dim", m.hidden_size));
  m.head_dim =
      f.integer_or("head_dim", m.hidden_size / m.num_attention_heads, 1, Fields::kMaxHeads);
  if (m.qkv_bias)
    note(
        fmt::format("{} has biases on the query, key and value projections, none on the "
                    "output projection or the MLP: qkv_bias: true, (num_attention_heads + 2 x "
                    "num_key_value_heads) x head_dim = ({} + 2 x {}) x {} = {} parameters per "
                    "layer, counted",
                    type, m.num_attention_heads, m.num_kv_heads, m.head_dim,
                    (m.num_attention_heads + 2 * m.num_kv_heads) * m.head_dim));

  MoeSpec& e = m.moe;
  if (type == "mixtral") {
    e.num_experts = f.integer("num_local_experts", 1, Fields::kMaxHeads);
    e.top_k = f.integer("num_experts_per_tok", 1, e.num_experts);
    e.expert_ffn_hidden_size = m.ffn_hidden_size;
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    e.num_experts = f.integer("num_experts", 1, Fields::kMaxHeads);
    e.top_k = f.integer("num_experts_per_tok", 1, e.num_experts);
    e.expert_ffn_hidden_size = f.integer("moe_intermediate_size");
    e.layer_freq = f.integer_or("decoder_sparse_step", 1, 1, Fields::kMaxLayers);
    if (f.has("shared_expert_intermediate_size")) {
      e.num_shared_experts = 1;
      e.shared_expert_ffn_hidden_size = f.integer("shared_expert_intermediate_size");
    }
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    e.num_experts = f.integer("n_routed_experts", 1, Fields::kMaxHeads);
    e.top_k = f.integer("num_experts_per_tok", 1, e.num_experts);
    e.expert_ffn_hidden_size = f.integer("moe_intermediate_size");
    e.num_shared_experts = f.integer_or("n_shared_experts", 0, 0, Fields::kMaxHeads);
    e.shared_expert_ffn_hidden_size = e.expert_ffn_hidden_size;
    e.first_dense_layers = f.integer_or("first_k_dense_replace", 0, 0, Fields::kMaxLayers);
    e.layer_freq = f.integer_or("moe_layer_freq", 1, 1, Fields::kMaxLayers);
    // Multi-head latent attention (DeepSeek-V2 sec 2.1; HF modeling_deepseek.py): every
    // published config sets these; q_lora_rank null means uncompressed queries
    // (DeepSeek-V2-Lite). head_dim keeps the value head dim (MLA's own dims replace it).
    MlaSpec& l = m.mla;
    l.kv_lora_rank = f.integer("kv_lora_rank", 1, Fields::kMaxHidden);
    l.q_lora_rank = f.integer_or("q_lora_rank", 0, 0, Fields::kMaxHidden);
    l.qk_nope_head_dim = f.integer("qk_nope_head_dim", 1, Fields::kMaxHeads);
    l.qk_rope_head_dim = f.integer("qk_rope_head_dim", 0, Fields::kMaxHeads);
    l.v_head_dim = f.integer("v_head_dim", 1, Fields::kMaxHeads);
    m.num_kv_heads = m.num_attention_heads;
    m.head_dim = l.v_head_dim;
    // DeepSeek-V3's multi-token prediction module (report sec 2.2) is a training objective
    // with its own layer: not modeled.
    if (const int64_t mtp = f.integer_or("num_nextn_predict_layers", 0, 0, Fields::kMaxLayers))
      note(
          fmt::format("multi-token prediction (num_nextn_predict_layers {}) is not modeled: "
                      "its module is left out (one more decoder layer each; DeepSeek-V3's holds "
                      "11.5B parameters besides the shared embedding and head, which is why its "
                      "checkpoint has 685B and the count here 671B)",
                      mtp));
  }
  constexpr int64_t kMaxShape = Fields::kMaxShape;
  for (const auto& [key, v] : {std::pair<const char*, int64_t>{"hidden_size", m.hidden_size},
                               {"num_hidden_layers", m.num_layers},
                               {"num_attention_heads", m.num_attention_heads},
                               {"intermediate_size", m.ffn_hidden_size},
                               {"vocab_size", m.vocab_size}})
    if (v < 1 || v > kMaxShape)
      throw InputError(file, key, std::to_string(v), "an integer from 1 to 10000000");
  if (m.num_kv_heads == 0 || m.num_attention_heads % m.num_kv_heads != 0)
    throw InputError(file, "num_key_value_heads", std::to_string(m.num_kv_heads),
                     "a divisor of num_attention_heads");
  if (e.enabled() && (e.top_k == 0 || e.top_k > e.num_experts || e.layer_freq == 0))
    throw InputError(file, "num_experts_per_tok", std::to_string(e.top_k),
                     "between 1 and the number of experts");
  if (const double p = params_upper_bound(m); p > kMaxModelParams)
    throw InputError(file, "<model>", fmt::format("{:.3g} parameters", p),
                     fmt::format("a model of at most {:g} parameters", kMaxModelParams));
  return m;
}

std::string model_to_yaml(const ModelSpec& m, const std::string& source,
                          const std::vector<std::string>& notes) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << m.name;
  y << YAML::Key << "num_layers" << YAML::Value << m.num_layers;
  y << YAML::Key << "hidden_size" << YAML::Value << m.hidden_size;
  y << YAML::Key << "num_attention_heads" << YAML::Value << m.num_attention_heads;
  y << YAML::Key << "num_kv_heads" << YAML::Value << m.num_kv_heads;
  y << YAML::Key << "head_dim" << YAML::Value << m.head_dim;
  y << YAML::Key << "ffn_hidden_size" << YAML::Value << m.ffn_hidden_size;
  y << YAML::Key << "vocab_size" << YAML::Value << m.vocab_size;
  if (m.seq_length > 0) y << YAML::Key << "seq_length" << YAML::Value << m.seq_length;
  y << YAML::Key << "activation" << YAML::Value << activation_name(m.activation);
  y << YAML::Key << "norm" << YAML::Value
    << (m.norm == NormKind::RmsNorm ? "rmsnorm" : "layernorm");
  y << YAML::Key << "tied_embeddings" << YAML::Value << m.tied_embeddings;
  y << YAML::Key << "linear_bias" << YAML::Value << m.linear_bias;
  if (m.qkv_bias) y << YAML::Key << "qkv_bias" << YAML::Value << true;
  y << YAML::Key << "dropout" << YAML::Value << m.dropout;
  if (m.post_norms) y << YAML::Key << "post_norms" << YAML::Value << true;
  if (m.mla.enabled()) {
    const MlaSpec& l = m.mla;
    y << YAML::Key << "mla" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "q_lora_rank" << YAML::Value << l.q_lora_rank;
    y << YAML::Key << "kv_lora_rank" << YAML::Value << l.kv_lora_rank;
    y << YAML::Key << "qk_nope_head_dim" << YAML::Value << l.qk_nope_head_dim;
    y << YAML::Key << "qk_rope_head_dim" << YAML::Value << l.qk_rope_head_dim;
    y << YAML::Key << "v_head_dim" << YAML::Value << l.v_head_dim;
    y << YAML::EndMap;
  }
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    y << YAML::Key << "moe" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "num_experts" << YAML::Value << e.num_experts;
    y << YAML::Key << "top_k" << YAML::Value << e.top_k;
    y << YAML::Key << "expert_ffn_hidden_size" << YAML::Value << e.expert_ffn_hidden_size;
    y << YAML::Key << "shared_experts" << YAML::Value << e.num_shared_experts;
    if (e.num_shared_experts > 0)
      y << YAML::Key << "shared_expert_ffn_hidden_size" << YAML::Value
        << e.shared_expert_ffn_hidden_size;
    y << YAML::Key << "layer_freq" << YAML::Value << e.layer_freq;
    y << YAML::Key << "first_dense_layers" << YAML::Value << e.first_dense_layers;
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
  std::string header = fmt::format(
      "# Imported from {} by `rapid model import` (Hugging Face config.json).\n", source);
  if (m.seq_length <= 0)
    header +=
        "# No seq_length: a training job gives training.seq_length (max_position_embeddings is\n"
        "# the longest context the positions reach, not a training length).\n";
  for (const std::string& n : notes) header += fmt::format("# {}.\n", n);
  return fmt::format("{}{}\n", header, y.c_str());
}

}  // namespace rapid
