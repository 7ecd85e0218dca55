// What each stage instance computed when, with the work's full-speed energy (docs/
// nonideal.md sec 1): recorded by the simulator when SimOptions::power is set, turned into
// per-GPU power profiles for the thermal model (eval/step_profile.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "rapid/des/event_queue.hpp"
#include "rapid/nonideal/power_model.hpp"

namespace rapid::des {

/// One stretch of an instance's compute stream: [start, end) of simulated time, during
/// which `busy` of it ran this GPU's kernels (the rest: collectives folded into the block)
/// doing `work` (full-speed time and energy).
struct PowerSpan {
  SimTime start = 0, end = 0, busy = 0;
  OpEnergy work;
};

struct PowerTrace {
  std::vector<std::vector<PowerSpan>> spans;  ///< per stage instance, in time order
  std::vector<int32_t> stage, replica;        ///< of each instance
  std::vector<int64_t> first_gpu;             ///< global rank of its first GPU
  void reset(size_t instances) {
    spans.resize(instances);
    for (auto& s : spans) s.clear();
    stage.assign(instances, 0);
    replica.assign(instances, 0);
    first_gpu.assign(instances, 0);
  }
  void add(size_t inst, SimTime start, SimTime end, SimTime busy, const OpEnergy& work) {
    if (end > start) spans[inst].push_back({start, end, busy, work});
  }
};

}  // namespace rapid::des
