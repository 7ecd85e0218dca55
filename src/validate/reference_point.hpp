// Building blocks for predictions of published runs: a GPT/Llama model from table columns,
// named configs from configs/, and one evaluated layout.
#pragma once

#include <map>
#include <string>

#include "rapid/eval/eval_result.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Where `rapid validate` finds its inputs.
struct ReferenceContext {
  std::string reference_dir;  ///< ../shared/reference (published measurements)
  std::string config_anchor;  ///< a path whose config_search_dirs() hold configs/
  /// Hardware used instead of configs/hardware/<name>.yaml (end-to-end calibration).
  std::map<std::string, HardwareSpec> hardware_override;
  std::map<std::string, NetworkSpec> network_override;
};

/// Default reference dir: $RAPID_REFERENCE_DIR, else <source>/../shared/reference, else
/// ../shared/reference relative to the working directory.
std::string default_reference_dir();

/// A decoder described by table columns: SwiGLU + RMSNorm (Llama style) or GELU +
/// LayerNorm (GPT style); head dim hidden/heads; no biases or dropout.
ModelSpec decoder_model(const std::string& name, int64_t layers, int64_t hidden, int64_t heads,
                        int64_t kv_heads, int64_t ffn, int64_t vocab, int64_t seq, bool swiglu,
                        bool tied);

/// A Megatron GPT model (4h GELU MLP, LayerNorm, biases, dropout, tied embeddings).
ModelSpec gpt_model(const std::string& name, int64_t layers, int64_t hidden, int64_t heads,
                    int64_t vocab, int64_t seq);

/// A one-point spec: `model` on configs/hardware/<hardware> and configs/networks/<network>,
/// global batch `gbs` sequences of the model's seq_length, compute dtype `dtype`.
SweepSpec reference_spec(const ReferenceContext& ctx, ModelSpec model, const std::string& hardware,
                         const std::string& network, int64_t gbs, DType dtype,
                         bool flash_attention);

/// Loads configs/<kind>/<name>.yaml. Throws InputError when it is not found.
HardwareSpec load_hardware(const ReferenceContext& ctx, const std::string& name);
NetworkSpec load_network(const ReferenceContext& ctx, const std::string& name);

/// Evaluates one layout; `spec` needs model, hardware[0], network and training set.
EvalResult predict_layout(const SweepSpec& spec, const ParallelConfig& par);

/// Path of `file` in the reference dir; throws InputError naming it when missing.
std::string reference_file(const ReferenceContext& ctx, const std::string& file);

}  // namespace rapid
