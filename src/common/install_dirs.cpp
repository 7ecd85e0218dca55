#include "rapid/common/install_dirs.hpp"

#include <filesystem>
#include <system_error>
#include <utility>

// The relative path from the install's bin directory to its data directory, set by CMake
// (CMakeLists.txt, from GNUInstallDirs' CMAKE_INSTALL_BINDIR and CMAKE_INSTALL_DATADIR);
// absolute when those were given as absolute paths (then the install is not relocatable).
#ifndef RAPID_BIN_TO_DATA_DIR
#define RAPID_BIN_TO_DATA_DIR "../share/rapid-sweep"
#endif

namespace fs = std::filesystem;

namespace rapid {

namespace {
std::string& data_dir_override() {
  static std::string dir;
  return dir;
}
}  // namespace

void set_installed_data_dir(std::string dir) {
  data_dir_override() = std::move(dir);
}

std::string installed_data_dir() {
  if (!data_dir_override().empty()) return data_dir_override();
  // Linux: /proc/self/exe is the executable itself, symbolic links resolved (proc(5)).
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return "";
  return (exe.parent_path() / RAPID_BIN_TO_DATA_DIR).lexically_normal().string();
}

}  // namespace rapid
