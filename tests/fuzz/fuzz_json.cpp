// libFuzzer target: the Hugging Face config.json loader of `rapid model import`
// (docs/bad-input.md). The bytes are parsed (parse_hf_config: depth-limited) and mapped
// (import_hf_config); a config that maps must give a model file that loads again
// (parse_model of model_to_yaml), as the command checks before writing it. Bad input must
// end in rapid::InputError; anything else, or a mapped model whose file does not load, is
// a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/spec/hf_config.hpp"
#include "rapid/spec/yaml_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rapid::ModelSpec m;
  try {
    const nlohmann::json config = rapid::parse_hf_config(text, "config.json");
    m = rapid::import_hf_config(config, "config.json", "fuzz-model");
  } catch (const rapid::InputError&) {  // the expected outcome of bad input
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_json: the import threw something other than InputError: %s\n",
                 e.what());
    std::abort();
  }
  try {
    rapid::parse_model(rapid::load_yaml_text(rapid::model_to_yaml(m, "config.json"), "out.yaml"),
                       "out.yaml");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_json: an imported model does not load back: %s\n", e.what());
    std::abort();
  }
  return 0;
}
