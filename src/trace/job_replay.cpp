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
  scenario_name_ = s.name;
  if (s.needs_power_model()) {
    power_.emplace(eval_.hardware(), eval_.compute_cost());
    in_.power = &*power_;
  }
  for (const StragglerSpec& x : s.stragglers) {
    const auto [first, count] = x.gpus(net_.gpus_per_node, net_.nodes_per_leaf);
    if (x.clock_factor >= 1 && x.hbm_factor >= 1) continue;  // a NIC or cooling straggler
    if (in_.derate.empty()) in_.derate.assign(static_cast<size_t>(world), Derate{});
    for (int64_t g = first; g < std::min(world, first + count); ++g) {
      Derate& d = in_.derate[static_cast<size_t>(g)];
      d = Derate{std::min(d.clock, x.clock_factor), std::min(d.hbm, x.hbm_factor)};
    }
  }
  derated_ranks_ = std::count_if(in_.derate.begin(), in_.derate.end(),
                                 [](const Derate& d) { return !(d == Derate{}); });
  bool most_loaded = false;
  for (const LinkFault& f : s.link_faults) {
    if (f.selector == LinkSelector::MostLoaded)
      most_loaded = true;
    else
      in_.link_faults.push_back(f);
  }
  if (in_.link_faults.size() > kMaxLinkFaults)
    throw InputError(net_.name, "link_faults",
                     fmt::format("{} faults with the network's", in_.link_faults.size()),
                     fmt::format("at most {} faults per scenario", kMaxLinkFaults));
  if (s.power || s.thermal) left_out_.push_back("energy and power columns");
  if (s.thermal) left_out_.push_back("thermal model");
  if (s.mitigation != Mitigation::None) left_out_.push_back("mitigation");
  if (most_loaded) left_out_.push_back("most_loaded link faults");
  if (s.failures.enabled) left_out_.push_back("failures");
}

}  // namespace rapid::trace
