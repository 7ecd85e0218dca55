// Where `rapid validate` finds its inputs and what a fit overrides.
#pragma once

#include <map>
#include <string>

#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/serving_spec.hpp"

namespace rapid {

struct ReferenceContext {
  std::string reference_dir;  ///< the tables and their descriptions (data/reference)
  std::string config_anchor;  ///< a path whose config_search_dirs() hold configs/
  /// Used instead of configs/hardware/<name>.yaml (a calibrated file, a trial fit).
  std::map<std::string, HardwareSpec> hardware_override;
  /// Configs read so far, by name: a table's rows name the same few files.
  mutable std::map<std::string, HardwareSpec> hardware_read;
  mutable std::map<std::string, NetworkSpec> networks_read;
  mutable std::map<std::string, FrameworkSpec> stacks_read;
  mutable std::map<std::string, ServingStack> serving_stacks_read;
  mutable std::map<std::string, ModelSpec> models_read;
};

/// $RAPID_REFERENCE_DIR, else the source tree's data/reference (compiled in), else
/// data/reference relative to the working directory.
std::string default_reference_dir();

/// configs/<kind>/<name>.yaml (or the override), read once per context. Throws InputError
/// naming `referrer`.
HardwareSpec load_hardware(const ReferenceContext& ctx, const std::string& name,
                           const std::string& referrer);
NetworkSpec load_network(const ReferenceContext& ctx, const std::string& name,
                         const std::string& referrer);
FrameworkSpec load_stack(const ReferenceContext& ctx, const std::string& name,
                         const std::string& referrer);
/// configs/serving/<name>.yaml with its base chain (inference tables).
ServingStack load_serving(const ReferenceContext& ctx, const std::string& name,
                          const std::string& referrer);

}  // namespace rapid
