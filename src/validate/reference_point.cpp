#include "reference_point.hpp"

#include <cstdlib>
#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/yaml_reader.hpp"

#ifndef RAPID_SOURCE_DIR
#define RAPID_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace rapid {

std::string default_reference_dir() {
  if (const char* env = std::getenv("RAPID_REFERENCE_DIR"); env && *env) return env;
  fs::path from_source = fs::path(RAPID_SOURCE_DIR) / ".." / "shared" / "reference";
  std::error_code ec;
  if (fs::is_directory(from_source, ec)) return from_source.lexically_normal().string();
  return "../shared/reference";
}

ModelSpec decoder_model(const std::string& name, int64_t layers, int64_t hidden, int64_t heads,
                        int64_t kv_heads, int64_t ffn, int64_t vocab, int64_t seq, bool swiglu,
                        bool tied) {
  ModelSpec m;
  m.name = name;
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden_size = ffn;
  m.vocab_size = vocab;
  m.seq_length = seq;
  m.activation = swiglu ? Activation::SwiGlu : Activation::Gelu;
  m.norm = swiglu ? NormKind::RmsNorm : NormKind::LayerNorm;
  m.tied_embeddings = tied;
  return m;
}

ModelSpec gpt_model(const std::string& name, int64_t layers, int64_t hidden, int64_t heads,
                    int64_t vocab, int64_t seq) {
  ModelSpec m =
      decoder_model(name, layers, hidden, heads, heads, 4 * hidden, vocab, seq, false, true);
  m.linear_bias = true;
  m.dropout = true;
  return m;
}

SweepSpec reference_spec(const ReferenceContext& ctx, ModelSpec model, const std::string& hardware,
                         const std::string& network, int64_t gbs, DType dtype,
                         bool flash_attention) {
  SweepSpec spec;
  spec.model = std::move(model);
  spec.hardware.push_back(load_hardware(ctx, hardware));
  spec.network = load_network(ctx, network);
  spec.training.global_batch_size = gbs;
  spec.training.seq_length = spec.model.seq_length;
  spec.training.dtype = dtype;
  spec.training.flash_attention = flash_attention;
  return spec;
}

namespace {
YAML::Node load_named(const ReferenceContext& ctx, const std::string& kind, const std::string& name,
                      std::string& path) {
  path = find_named_config(kind, name, ctx.config_anchor);
  if (path.empty())
    throw InputError(kind + "/" + name + ".yaml", "<file>", name, "a config in configs/" + kind);
  return load_yaml_file(path);
}
}  // namespace

HardwareSpec load_hardware(const ReferenceContext& ctx, const std::string& name) {
  if (auto it = ctx.hardware_override.find(name); it != ctx.hardware_override.end())
    return it->second;
  std::string path;
  YAML::Node n = load_named(ctx, "hardware", name, path);
  return parse_hardware(n, path);
}

NetworkSpec load_network(const ReferenceContext& ctx, const std::string& name) {
  if (auto it = ctx.network_override.find(name); it != ctx.network_override.end())
    return it->second;
  std::string path;
  YAML::Node n = load_named(ctx, "networks", name, path);
  return parse_network(n, path);
}

EvalResult predict_layout(const SweepSpec& spec, const ParallelConfig& par) {
  PointEvaluator eval(spec);
  Workload w;
  EvalResult r;
  Point p;
  p.par = par;
  eval.evaluate(p, w, r);
  return r;
}

std::string reference_file(const ReferenceContext& ctx, const std::string& file) {
  fs::path p = fs::path(ctx.reference_dir) / file;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    throw InputError(p.string(), "<file>", file,
                     "a published reference table (set --reference-dir or RAPID_REFERENCE_DIR)");
  return p.string();
}

}  // namespace rapid
