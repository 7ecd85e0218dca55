// libFuzzer target: the YAML loaders (docs/bad-input.md). The bytes are parsed as YAML
// text (load_yaml_text) and, when they parse, read as a model, a hardware, a network and a
// stack file and as a job's nonideal: section. Bad input must end in rapid::InputError;
// anything else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/nonideal_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace {

template <class F>
void expect_input_error(const char* what, F&& f) {
  try {
    f();
  } catch (const rapid::InputError&) {  // the expected outcome of bad input
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_yaml: %s threw something other than InputError: %s\n", what,
                 e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  YAML::Node node;
  try {
    node = rapid::load_yaml_text(text, "fuzz.yaml");
  } catch (const rapid::InputError&) {
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_yaml: load_yaml_text threw %s\n", e.what());
    std::abort();
  }
  expect_input_error("parse_model", [&] { rapid::parse_model(node, "fuzz.yaml"); });
  expect_input_error("parse_hardware", [&] { rapid::parse_hardware(node, "fuzz.yaml"); });
  expect_input_error("parse_network", [&] { rapid::parse_network(node, "fuzz.yaml"); });
  expect_input_error("parse_framework",
                     [&] { rapid::parse_framework(node, "fuzz.yaml", rapid::FrameworkSpec{}); });
  expect_input_error("parse_scenarios", [&] {
    const YAML::Node& job = node;  // const: operator[] must not insert
    if (job.IsMap()) rapid::parse_scenarios(job["nonideal"], job["scenarios"], "fuzz.yaml");
    rapid::parse_scenarios(job, YAML::Node(), "fuzz.yaml");
  });
  return 0;
}
