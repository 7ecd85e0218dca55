#include "model_command.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/io/output_check.hpp"
#include "rapid/spec/hf_config.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace rapid {

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
  const ModelSpec m = import_hf_config(config, input_, name);
  const std::string yaml = model_to_yaml(m, input_);
  parse_model(load_yaml_text(yaml, output_), output_);  // what we write must load
  check_output_file(output_, "--output", yaml.size(), {input_});
  write_file_atomically(output_, yaml, "--output");
  fmt::print("{}: {} layers, hidden {}, {} heads ({} KV), {:.2f}B parameters{} -> {}\n", m.name,
             m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads,
             static_cast<double>(m.total_params()) / 1e9,
             m.moe.enabled() ? fmt::format(" ({:.2f}B active, {} experts, top {})",
                                           static_cast<double>(m.active_params()) / 1e9,
                                           m.moe.num_experts, m.moe.top_k)
                             : "",
             output_);
  return 0;
}

}  // namespace rapid
