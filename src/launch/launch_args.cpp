#include "rapid/launch/launch_args.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "rapid/common/error.hpp"

namespace rapid {

LaunchStack parse_launch_stack(const std::string& name) {
  const auto* it = std::find(std::begin(kLaunchStackNames), std::end(kLaunchStackNames), name);
  if (it == std::end(kLaunchStackNames))
    throw InputError("<command line>", "--stack", name, "megatron, nemo or torchtitan");
  return static_cast<LaunchStack>(it - std::begin(kLaunchStackNames));
}

LaunchNodes launch_nodes(int64_t gpus, int64_t gpus_per_node) {
  const int64_t per_node = std::max<int64_t>(1, std::min(gpus, gpus_per_node));
  return {(gpus + per_node - 1) / per_node, per_node};
}

const LaunchArg* LaunchArgs::find(std::string_view name) const {
  const auto it =
      std::find_if(args.begin(), args.end(), [&](const LaunchArg& a) { return a.name == name; });
  return it == args.end() ? nullptr : &*it;
}

LaunchArgs launch_args(LaunchStack stack, const LaunchInputs& in) {
  switch (stack) {
    case LaunchStack::Megatron:
      return megatron_launch(in);
    case LaunchStack::Nemo:
      return nemo_launch(in);
    case LaunchStack::Torchtitan:
      return torchtitan_launch(in);
  }
  throw InternalError("launch_command: unknown stack");
}

std::string render_launch(const LaunchArgs& c, const std::vector<std::string>& header) {
  std::string out;
  for (const std::string& line : header) out += "# " + line + "\n";
  for (const std::string& line : c.sources) out += "# source: " + line + "\n";
  for (const std::string& line : c.warnings) out += "# warning: " + line + "\n";
  for (const std::string& line : c.notes) out += "# note: " + line + "\n";
  out += c.program;
  for (const LaunchArg& a : c.args) {
    out += " \\\n    " + a.name;
    if (!a.value.empty()) out += c.separator + a.value;
  }
  if (!c.suffix.empty()) out += " \\\n    " + c.suffix;
  return out + "\n";
}

}  // namespace rapid
