// Non-ideal conditions of a job (docs/nonideal.md): power and energy, thermal throttling
// and its mitigations, stragglers, link faults and failures at job scale. A job's
// `nonideal:` mapping is the base; `scenarios:` lists named overrides of it, swept as a
// dimension of the space (each row names its scenario). Off unless the job asks: a job
// without these keys has one scenario, "ideal", with everything off, and its rows keep
// NaN in the non-ideal columns.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rapid/spec/failure_spec.hpp"
#include "rapid/spec/link_fault.hpp"

namespace rapid {

class YamlMap;

/// How the GPUs shed heat (docs/nonideal.md sec 2): the sink of each GPU's thermal
/// network (nonideal/thermal_network.hpp), the hardware file's air heatsink (`air`) or
/// liquid cold plate (`liquid`), and the coolant's temperature. Overrides change the sink:
/// its heat capacity and resistance to the coolant directly, or through the lumped form
/// dT/dt = alpha P - beta (T - T_ambient) (alpha = 1 / C_sink, beta = 1 / (R_sink C_sink)),
/// or its conductance by a factor (a failed fan: below 1).
struct CoolingSpec {
  std::string name = "air";
  bool liquid = false;            ///< the hardware's cold plate, else its air heatsink
  double ambient_C = 27;          ///< inlet-air / coolant temperature the GPU sees
  double sink_J_per_C = 0;        ///< 0: the preset's
  double sink_C_per_W = 0;        ///< 0: the preset's
  double alpha_C_per_J = 0;       ///< > 0: the sink's heat capacity is 1 / alpha
  double beta_per_s = 0;          ///< > 0: the sink's resistance is 1 / (beta C_sink)
  double conductance_factor = 1;  ///< multiplies the sink's conductance to the coolant
};

/// Mitigations of thermal throttling (docs/nonideal.md sec 3).
enum class Mitigation : uint8_t { None, Interleave, Dvfs, Both };
inline constexpr const char* kMitigationNames[] = {"none", "interleave", "dvfs", "both"};

/// One GPU, node or rack that is worse than the rest.
struct StragglerSpec {
  enum class Scope : uint8_t { Gpu, Node, Rack } scope = Scope::Gpu;
  int64_t index = 0;          ///< global GPU rank, node index or rack (leaf) index
  double clock_factor = 1.0;  ///< SM clock kept (a lower clock limit), in (0, 1]
  double hbm_factor = 1.0;    ///< HBM bandwidth kept, in (0, 1]
  double nic_health = 1.0;    ///< its NIC links' bandwidth factor, in (0, 1]
  bool own_cooling = false;   ///< `cooling:` given for it
  CoolingSpec cooling;        ///< its cooling when own_cooling

  /// The global ranks it covers, [first, first + count): one GPU, a node's gpus_per_node
  /// GPUs or a rack's (the nodes under one leaf) — Megatron's rank order puts consecutive
  /// ranks on a node.
  std::pair<int64_t, int64_t> gpus(int64_t gpus_per_node, int64_t nodes_per_leaf) const {
    if (scope == Scope::Node) return {index * gpus_per_node, gpus_per_node};
    if (scope == Scope::Rack)
      return {index * gpus_per_node * nodes_per_leaf, gpus_per_node * nodes_per_leaf};
    return {index, 1};
  }
};

struct NonIdealSpec {
  std::string name = "ideal";
  bool power = false;    ///< energy and power columns
  bool thermal = false;  ///< thermal model (implies power)
  CoolingSpec cooling;
  Mitigation mitigation = Mitigation::None;
  std::vector<StragglerSpec> stragglers;
  std::vector<LinkFault> link_faults;
  FailureSpec failures;

  /// The scenario needs the power model (energies, roofline splits for derates).
  bool needs_power_model() const { return power || thermal || !stragglers.empty(); }
  bool any() const {
    return power || thermal || !stragglers.empty() || !link_faults.empty() || failures.enabled;
  }
};

/// One line naming what a scenario turns on ("thermal (air, beta 0.15/s, 27 C), dvfs, ...").
std::string describe_scenario(const NonIdealSpec& s);

/// The job's scenarios: `nonideal:` (may be absent) merged with each `scenarios:` entry
/// (key by key; an entry's `name` names it). `gpus_per_node` and the largest GPU count
/// bound the straggler indices. Throws InputError naming file, key, value, expectation.
std::vector<NonIdealSpec> parse_scenarios(const YAML::Node& nonideal, const YAML::Node& scenarios,
                                          const std::string& file);

}  // namespace rapid
