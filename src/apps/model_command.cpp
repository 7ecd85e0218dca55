#include "model_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rapid/common/error.hpp"
#include "rapid/io/output_check.hpp"
#include "rapid/spec/hf_config.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace rapid {

namespace {
// A parameter count with 3 significant digits: 671B, 37.6B, 9.24B, 125M, 1.01T.
std::string params_text(int64_t params) {
  const double p = static_cast<double>(params);
  if (p >= 999.5e9) return fmt::format("{:.3g}T", p / 1e12);
  if (p >= 999.5e6) return fmt::format("{:.3g}B", p / 1e9);
  return fmt::format("{:.3g}M", p / 1e6);
}
}  // namespace

ModelCommand::ModelCommand(CLI::App& app) {
  CLI::App* model = app.add_subcommand("model", "model files");
  model->require_subcommand(1);
  import_ = model->add_subcommand("import", "convert a Hugging Face config.json to a model YAML");
  import_->add_option("config", input_, "config.json")->required();
  import_->add_option("-o,--output", output_, "model YAML to write")->required();
  import_->add_option("--name", name_, "model name (default: the output file's stem)");
}

bool ModelCommand::parsed() const {
  return import_->parsed();
}

int ModelCommand::run() const {
  const nlohmann::json config = parse_hf_config(read_text_file(input_), input_);
  const std::string name = name_.empty() ? fs::path(output_).stem().string() : name_;
  if (!is_utf8(name))
    throw InputError("<command line>", name_.empty() ? "--output" : "--name", "<not UTF-8>",
                     "a UTF-8 model name (the file name's stem without --name)");
  std::vector<std::string> notes;
  const ModelSpec m = import_hf_config(config, input_, name, &notes);
  const std::string yaml = model_to_yaml(m, input_, notes);
  parse_model(load_yaml_text(yaml, output_), output_);  // what we write must load
  check_output_file(output_, "--output", yaml.size(), {input_});
  write_file_atomically(output_, yaml, "--output");
  // stdout: the shapes and the output file, then the parameter count, then one line per
  // feature of the config the model leaves out.
  std::string attention;
  if (m.mla.enabled())
    attention = fmt::format(", MLA (q_lora_rank {}, kv_lora_rank {}, qk {}+{}, v {})",
                            m.mla.q_lora_rank, m.mla.kv_lora_rank, m.mla.qk_nope_head_dim,
                            m.mla.qk_rope_head_dim, m.mla.v_head_dim);
  fmt::print(
      "{}: {} layers, hidden {}, {} heads ({} KV){}{} -> {}\n", m.name, m.num_layers, m.hidden_size,
      m.num_attention_heads, m.num_kv_heads, attention,
      m.moe.enabled() ? fmt::format(", {} experts, top {}", m.moe.num_experts, m.moe.top_k) : "",
      output_);
  fmt::print("parameters: {} total{}\n", params_text(m.total_params()),
             m.moe.enabled() ? fmt::format(", {} active", params_text(m.active_params())) : "");
  for (const std::string& n : notes) fmt::print("note: {}\n", n);
  return 0;
}

}  // namespace rapid
