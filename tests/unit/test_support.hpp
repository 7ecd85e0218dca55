// Helpers shared by the unit tests: temporary files and small specs built by hand.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "rapid/common/error.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace rapid::test {

/// Path of the source tree's configs/ (compiled in by tests/CMakeLists.txt).
inline std::string source_path(const std::string& rel) {
  return std::string(RAPID_SOURCE_DIR) + "/" + rel;
}

/// This test process's own directory under the system temp dir, removed when the process
/// ends. ctest runs every test case as its own process, several at once (-j): a directory
/// shared by all of them let one case read a file another was rewriting.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("rapid-tests-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A path `name` in this process's test directory under the system temp dir.
inline std::string temp_path(const std::string& name) {
  static const TempDir dir;
  return (dir.path() / name).string();
}

/// Writes `text` to a fresh file under the system temp dir and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

/// A fresh (emptied) directory `name` in this process's test directory.
inline std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// The InputError `f` throws (a failed expectation when it throws none).
template <class F>
InputError input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("", "", "", "");
}

/// A made-up GPU with round numbers so that cases can be checked by hand: 100 SMs, bf16
/// peak 100 TFLOP/s (1 TFLOP/s per SM), GEMM and memory efficiency 1, no tile overhead or
/// launch, L2 bandwidth and size never limiting, HBM 1 TB/s.
HardwareSpec round_gpu();

/// A Llama-style dense model for cases checked by hand: SwiGLU, RMSNorm, RoPE, head dim
/// hidden / heads.
ModelSpec llama_shape(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                      int64_t vocab);

/// The shipped configs/models/NAME.yaml, configs/hardware/NAME.yaml, configs/networks/NAME.yaml
/// of the source tree, parsed.
ModelSpec shipped_model(const std::string& name);
HardwareSpec shipped_hardware(const std::string& name);
NetworkSpec shipped_network(const std::string& name);

/// Every request `input` prompt and `output` answer tokens (serving, fixed lengths).
inline void fixed_lengths(ServingSpec& s, int64_t input, int64_t output) {
  s.input_tokens = {LengthDistribution::Fixed, static_cast<double>(input), 0, input, input};
  s.output_tokens = {LengthDistribution::Fixed, static_cast<double>(output), 0, output, output};
}

/// A point without pipelining: tp x dp GPUs, micro-batch 1, sequence parallelism `sp`, ZeRO
/// stage `zero`, no recomputation, hardware entry 0.
inline Point flat_point(int64_t tp, int64_t dp, bool sp, int zero = 0) {
  Point p;
  p.par.tp = static_cast<int32_t>(tp);
  p.par.pp = 1;
  p.par.dp = static_cast<int32_t>(dp);
  p.par.mbs = 1;
  p.par.sp = sp;
  p.par.zero_stage = static_cast<int8_t>(zero);
  return p;
}

/// Loads configs/<kind>/<name>.yaml of the source tree.
SweepSpec spec_with(const std::string& model, const std::string& hardware,
                    const std::string& network, int64_t gbs, int64_t seq);
/// The same, training with stack configs/frameworks/<stack>.yaml and its defaults.
SweepSpec spec_with_stack(const std::string& model, const std::string& hardware,
                          const std::string& network, int64_t gbs, int64_t seq,
                          const std::string& stack);

/// One layout simulated two ways: with the DES's default options and with others.
struct DesPair {
  const Point& point;
  const EvalResult &with, &without;
  const DesReport &with_report, &without_report;
};

/// Every `every`-th feasible layout of the demo job (jobs/llama3-70b-256xh100.yaml, feasible
/// by the analytical model), simulated with the default DesOptions and with `other`, each
/// pair given to `check`. Returns the number of layouts compared.
int each_demo_layout_two_ways(const DesOptions& other, int every,
                              const std::function<void(const DesPair&)>& check);

}  // namespace rapid::test
