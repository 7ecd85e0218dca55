// The per-point path (DESIGN.md "Data flow"): decode(i) -> Workload -> Memory (fits? else
// status OutOfMemory, bytes kept) -> Evaluator -> EvalResult. No parsing, allocation or I/O
// once the caller's scratch workload is warm.
#pragma once

#include <memory>
#include <vector>

#include "rapid/eval/evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace rapid {

enum class Fidelity : uint8_t { Analytical, Des, Auto };

class PointEvaluator {
 public:
  /// Builds one evaluator per hardware variant of `spec` (which must outlive this object).
  explicit PointEvaluator(const SweepSpec& spec);

  /// Evaluates point `p` into `r`, using `scratch` for the workload. Thread-safe when each
  /// thread passes its own scratch and result.
  void evaluate(const Point& p, Workload& scratch, EvalResult& r) const;

  const Evaluator& evaluator(int32_t hardware) const {
    return *evaluators_[static_cast<size_t>(hardware)];
  }

 private:
  const SweepSpec& spec_;
  std::vector<std::unique_ptr<Evaluator>> evaluators_;
};

}  // namespace rapid
