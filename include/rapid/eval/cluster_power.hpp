// The whole job's GPU power over one step (docs/nonideal.md sec 1): every simulated GPU's
// profile, weighted by the GPUs it stands for, summed in time; its swing (max - min) is
// what operators size their power feeds and generators for (the Llama 3 paper reports
// swings of tens of megawatts across its 16k-GPU job).
#pragma once

#include <utility>
#include <vector>

#include "rapid/eval/step_profile.hpp"

namespace rapid {

class ClusterPower {
 public:
  /// Adds `gpus` GPUs running `profile`, their work stretched by `derate`.
  void add(const StepProfile& profile, const Derate& derate, double gpus);
  /// max - min of the summed power over the step (W).
  double swing_W() const;

 private:
  std::vector<std::pair<double, double>> changes_;  ///< (time s, power change W)
};

}  // namespace rapid
