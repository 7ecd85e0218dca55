// Helpers shared by the unit tests: temporary files and small specs built by hand.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "rapid/spec/sweep_spec.hpp"

namespace rapid::test {

/// Path of the source tree's configs/ (compiled in by tests/CMakeLists.txt).
inline std::string source_path(const std::string& rel) {
  return std::string(RAPID_SOURCE_DIR) + "/" + rel;
}

/// A path `name` in the tests' directory under the system temp dir (created).
inline std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "rapid-tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

/// Writes `text` to a fresh file under the system temp dir and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

/// A made-up GPU with round numbers so that cases can be checked by hand: 100 SMs, bf16
/// peak 100 TFLOP/s (1 TFLOP/s per SM), GEMM and memory efficiency 1, no tile overhead or
/// launch, L2 bandwidth and size never limiting, HBM 1 TB/s.
HardwareSpec round_gpu();

/// Loads configs/<kind>/<name>.yaml of the source tree.
SweepSpec spec_with(const std::string& model, const std::string& hardware,
                    const std::string& network, int64_t gbs, int64_t seq);
/// The same, training with stack configs/frameworks/<stack>.yaml and its defaults.
SweepSpec spec_with_stack(const std::string& model, const std::string& hardware,
                          const std::string& network, int64_t gbs, int64_t seq,
                          const std::string& stack);

}  // namespace rapid::test
