#include "reference_context.hpp"

#include <cstdlib>
#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

#ifndef RAPID_SOURCE_DIR
#define RAPID_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace rapid {

std::string default_reference_dir() {
  if (const char* env = std::getenv("RAPID_REFERENCE_DIR"); env && *env) return env;
  const fs::path in_source = fs::path(RAPID_SOURCE_DIR) / "data" / "reference";
  std::error_code ec;
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
  std::string path;
  const YAML::Node n = load_named(ctx, "hardware", name, referrer, path);
  return parse_hardware(n, path);
}

NetworkSpec load_network(const ReferenceContext& ctx, const std::string& name,
                         const std::string& referrer) {
  if (auto it = ctx.network_override.find(name); it != ctx.network_override.end())
    return it->second;
  std::string path;
  const YAML::Node n = load_named(ctx, "networks", name, referrer, path);
  return parse_network(n, path);
}

FrameworkSpec load_stack(const ReferenceContext& ctx, const std::string& name,
                         const std::string& referrer) {
  if (auto it = ctx.framework_override.find(name); it != ctx.framework_override.end())
    return it->second;
  return load_framework(name, ctx.config_anchor, referrer, "framework");
}

}  // namespace rapid
