#include "reference_context.hpp"

#include <cstdlib>
#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/common/install_dirs.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

#ifndef RAPID_SOURCE_DIR
#define RAPID_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace rapid {

std::string default_reference_dir() {
  if (const char* env = std::getenv("RAPID_REFERENCE_DIR"); env && *env) return env;
  std::error_code ec;
  // An installed program's (<prefix>/share/rapid-sweep/reference), then the source tree's.
  if (const std::string data = installed_data_dir(); !data.empty()) {
    const fs::path installed = fs::path(data) / "reference";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  const fs::path in_source = fs::path(RAPID_SOURCE_DIR) / "data" / "reference";
  if (fs::is_directory(in_source, ec)) return in_source.string();
  return "data/reference";
}

namespace {
YAML::Node load_named(const ReferenceContext& ctx, const std::string& kind, const std::string& name,
                      const std::string& referrer, std::string& path) {
  path = find_named_config(kind, name, ctx.config_anchor);
  if (path.empty()) throw InputError(referrer, kind, name, "a config in configs/" + kind);
  return load_yaml_file(path);
}
}  // namespace

HardwareSpec load_hardware(const ReferenceContext& ctx, const std::string& name,
                           const std::string& referrer) {
  if (auto it = ctx.hardware_override.find(name); it != ctx.hardware_override.end())
    return it->second;
  if (auto it = ctx.hardware_read.find(name); it != ctx.hardware_read.end()) return it->second;
  std::string path;
  const YAML::Node n = load_named(ctx, "hardware", name, referrer, path);
  return ctx.hardware_read.emplace(name, parse_hardware(n, path)).first->second;
}

NetworkSpec load_network(const ReferenceContext& ctx, const std::string& name,
                         const std::string& referrer) {
  if (auto it = ctx.networks_read.find(name); it != ctx.networks_read.end()) return it->second;
  std::string path;
  const YAML::Node n = load_named(ctx, "networks", name, referrer, path);
  return ctx.networks_read.emplace(name, parse_network(n, path)).first->second;
}

FrameworkSpec load_stack(const ReferenceContext& ctx, const std::string& name,
                         const std::string& referrer) {
  if (auto it = ctx.stacks_read.find(name); it != ctx.stacks_read.end()) return it->second;
  return ctx.stacks_read
      .emplace(name, load_framework(name, ctx.config_anchor, referrer, "framework"))
      .first->second;
}

ServingStack load_serving(const ReferenceContext& ctx, const std::string& name,
                          const std::string& referrer) {
  if (auto it = ctx.serving_stacks_read.find(name); it != ctx.serving_stacks_read.end())
    return it->second;
  return ctx.serving_stacks_read
      .emplace(name, load_serving_stack(name, ctx.config_anchor, referrer, "stack"))
      .first->second;
}

}  // namespace rapid
