// One interface, two fidelities (docs/architecture.md "Data flow"): the analytical evaluator and
// the discrete-event simulator take the same workload and fill the same EvalResult.
#pragma once

#include "rapid/core/eval_result.hpp"
#include "rapid/memory/memory_model.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Fills the time fields of `r` for workload `w` (the memory fields are already set).
  /// Must be thread-safe: one evaluator is shared by the OpenMP threads of a rank.
  virtual void evaluate(const Workload& w, EvalResult& r) const = 0;
};

}  // namespace rapid
