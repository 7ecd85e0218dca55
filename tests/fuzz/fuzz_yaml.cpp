// libFuzzer target: the YAML loaders (docs/bad-input.md). The bytes are parsed as YAML
// text (load_yaml_text) and, when they parse, read as a model, a hardware, a network and a
// stack file and as a job's nonideal: section; a mapping is also loaded as a job file
// (load_sweep_spec, configs by name from the repository's configs/) and its search space
// enumerated (at most 1e5 candidates). Bad input must end in rapid::InputError; anything
// else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include <unistd.h>

#include "rapid/common/error.hpp"
#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/nonideal_spec.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "rapid/sweep/enumerator.hpp"

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

// The job file the bytes are written to (jobs are read from a path; one per process).
std::string job_path;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("RAPID_CONFIG_DIR", RAPID_SOURCE_DIR "/configs", 1);
  const char* tmp = std::getenv("TMPDIR");
  job_path = std::string(tmp && *tmp ? tmp : "/tmp") + "/rapid-fuzz-job-" +
             std::to_string(::getpid()) + ".yaml";
  return 0;
}

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
  if (node.IsMap()) {
    std::ofstream(job_path, std::ios::binary | std::ios::trunc) << text;
    expect_input_error("load_sweep_spec", [&] {
      rapid::SweepSpec spec = rapid::load_sweep_spec(job_path);
      spec.search.max_candidates = 1e5;
      rapid::Enumerator points(spec);
      if (points.size() > 0) points.decode(points.size() - 1);
    });
  }
  return 0;
}
