// One point of a sweep: the key every fidelity, the result store and the reports share
// (docs/architecture.md "Data flow": decode(i) -> Point -> Workload -> EvalResult).
#pragma once

#include <cstdint>

#include "rapid/spec/parallel_config.hpp"

namespace rapid {

/// One point of the sweep: a hardware variant and a parallel layout.
struct Point {
  int64_t index = 0;
  int32_t hardware = 0;  ///< index into SweepSpec::hardware
  int32_t scenario = 0;  ///< index into SweepSpec::scenarios (non-ideal conditions)
  int32_t load = 0;      ///< serving: index into SweepSpec::serving.loads (0 in training)
  ParallelConfig par;
};

}  // namespace rapid
