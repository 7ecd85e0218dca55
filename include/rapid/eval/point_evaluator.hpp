// The per-point path (DESIGN.md "Data flow"): decode(i) -> Workload -> Memory (fits? else
// status OutOfMemory, bytes kept) -> Evaluator -> EvalResult. No parsing, allocation or I/O
// once the caller's scratch workload is warm.
#pragma once

#include <memory>
#include <vector>

#include "rapid/des/des_evaluator.hpp"
#include "rapid/eval/evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace rapid {

/// analytical: closed form; des: discrete-event simulation (docs/des.md); auto: analytical
/// everywhere, then the DES on the best points (the sweep's second pass, scheduler.hpp).
enum class Fidelity : uint8_t { Analytical, Des, Auto };

class PointEvaluator {
 public:
  /// Builds the evaluators of every hardware variant of `spec` (which must outlive this
  /// object): analytical ones always, discrete-event ones unless `fidelity` is Analytical.
  explicit PointEvaluator(const SweepSpec& spec, Fidelity fidelity = Fidelity::Analytical,
                          DesOptions des = {});

  /// Evaluates point `p` into `r` with the object's fidelity (Auto: analytical), using
  /// `scratch` for the workload. Thread-safe when each thread passes its own scratch and
  /// result. `scratch` holds the point's layout afterwards; its op templates are the
  /// point's under the DES, and under the analytical model unless the point's template
  /// times were cached (a layout differing only in its ZeRO stage was evaluated before).
  void evaluate(const Point& p, Workload& scratch, EvalResult& r) const {
    evaluate(p, scratch, r, fidelity_);
  }
  /// The same with fidelity `f` (Des needs an object built with Des or Auto).
  void evaluate(const Point& p, Workload& scratch, EvalResult& r, Fidelity f) const;

  /// The analytical evaluator of a hardware variant.
  const Evaluator& evaluator(int32_t hardware) const {
    return *evaluators_[static_cast<size_t>(hardware)];
  }
  /// The discrete-event evaluator of a hardware variant (fidelity Des or Auto).
  const DesEvaluator& des_evaluator(int32_t hardware) const {
    return *des_[static_cast<size_t>(hardware)];
  }
  Fidelity fidelity() const { return fidelity_; }

 private:
  const SweepSpec& spec_;
  Fidelity fidelity_;
  std::vector<std::unique_ptr<AnalyticalEvaluator>> evaluators_;
  std::vector<std::unique_ptr<DesEvaluator>> des_;
};

}  // namespace rapid
