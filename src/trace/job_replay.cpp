#include "rapid/trace/job_replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid::trace {

JobReplay::JobReplay(const SweepSpec& spec, size_t hardware, size_t scenario, int64_t world)
    : net_(spec.network_of(hardware)),
      eval_(spec.model, spec.training, spec.hardware[hardware], net_) {
  in_.compute = &eval_.compute_cost();
  in_.collective = &eval_.collective_cost();
  in_.step_efficiency = eval_.step_efficiency();
  in_.network = &net_;
  in_.link_faults = net_.faults;
  if (spec.scenarios.empty()) return;
  const NonIdealSpec& s = spec.scenarios[scenario];
  scenario_ = &s;
  scenario_name_ = s.name;
  thermal_ = s.thermal;
  if (s.needs_power_model()) {
    power_.emplace(eval_.hardware(), eval_.compute_cost());
    in_.power = &*power_;
  }
  // Each rank's own derate and cooling, merged over the stragglers that cover it as the
  // DES merges a stage instance's GPUs (thermal_feedback.hpp).
  const HardwareSpec& hw = eval_.hardware();
  if (s.thermal || !s.stragglers.empty())
    states_.assign(static_cast<size_t>(world), normal_gpu_state(hw, s));
  for (const StragglerSpec& x : s.stragglers) {
    const auto [first, count] = x.gpus(net_.gpus_per_node, net_.nodes_per_leaf);
    const GpuState st = straggler_gpu_state(hw, s, x, states_.front());
    for (int64_t g = first; g < std::min(world, first + count); ++g)
      merge_gpu_state(states_[static_cast<size_t>(g)], st, g, hw.tdp_W);
  }
  for (const GpuState& g : states_) in_.derate.push_back(g.base);
  derated_ranks_ = std::count_if(in_.derate.begin(), in_.derate.end(),
                                 [](const Derate& d) { return !(d == Derate{}); });
  if (derated_ranks_ == 0) in_.derate.clear();
  for (const LinkFault& f : s.link_faults) {
    most_loaded_ = most_loaded_ || f.selector == LinkSelector::MostLoaded;
    in_.link_faults.push_back(f);
  }
  if (in_.link_faults.size() > kMaxLinkFaults)
    throw InputError(net_.name, "link_faults",
                     fmt::format("{} faults with the network's", in_.link_faults.size()),
                     fmt::format("at most {} faults per scenario", kMaxLinkFaults));
  if (s.power || s.thermal) left_out_.push_back("energy and power columns");
  if (s.mitigation == Mitigation::Interleave || s.mitigation == Mitigation::Both)
    left_out_.push_back("interleave mitigation");
  if (s.failures.enabled) left_out_.push_back("failures");
}

}  // namespace rapid::trace
