// The per-point path (docs/architecture.md "Data flow"): decode(i) -> Workload -> Memory (fits?
// else status OutOfMemory, bytes kept) -> Evaluator -> EvalResult, then the point's scenario
// (docs/nonideal.md): power, thermal, stragglers, link faults, failures. No parsing,
// allocation or I/O once the caller's scratch workload is warm (with non-ideal behaviour
// off; on, the DES's power trace and the thermal replay allocate).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "rapid/core/evaluator.hpp"
#include "rapid/core/point.hpp"
#include "rapid/core/prediction_interval.hpp"
#include "rapid/des/des_evaluator.hpp"
#include "rapid/eval/nonideal_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// analytical: closed form; des: discrete-event simulation (docs/des.md); auto: analytical
/// everywhere, then the DES on the best points (the sweep's second pass, scheduler.hpp).
enum class Fidelity : uint8_t { Analytical, Des, Auto };

class PointEvaluator {
 public:
  /// Builds the evaluators of every hardware variant and scenario of `spec` (which must
  /// outlive this object): analytical ones always, discrete-event ones unless `fidelity` is
  /// Analytical.
  explicit PointEvaluator(const SweepSpec& spec, Fidelity fidelity = Fidelity::Analytical,
                          DesOptions des = {});
  ~PointEvaluator();

  /// Extra outputs of one point's DES run (`rapid predict`).
  struct DesOutputs {
    DesReport* report = nullptr;
    des::Timeline* timeline = nullptr;
    ThermalReport* thermal = nullptr;
    bool record = false;  ///< heating traces in `thermal`
  };

  /// Evaluates point `p` into `r` with the object's fidelity (Auto: analytical), using
  /// `scratch` for the workload (left as evaluate() leaves it between calls: a point on
  /// the layout of the last one reuses its workload and memory). Thread-safe when each thread
  /// passes its own scratch and result. `scratch` holds the point's layout afterwards; its op
  /// templates are the point's under the DES, and under the analytical model unless the point's
  /// template times were cached (a layout differing only in its ZeRO stage was evaluated before).
  void evaluate(const Point& p, Workload& scratch, EvalResult& r) const {
    evaluate(p, scratch, r, fidelity_);
  }
  /// The same with fidelity `f` (Des needs an object built with Des or Auto).
  void evaluate(const Point& p, Workload& scratch, EvalResult& r, Fidelity f) const {
    evaluate(p, scratch, r, f, DesOutputs{});
  }
  /// The same, a DES run filling `out` (its report, timeline and thermal steady states are
  /// those of `r`).
  void evaluate(const Point& p, Workload& scratch, EvalResult& r, Fidelity f,
                const DesOutputs& out) const;

  /// evaluate() that never throws for the point: a failure of the evaluator on it (host
  /// memory, an internal limit, anything else) becomes status Error with its ErrorCode in
  /// `r`. Testing hook: RAPID_SWEEP_TEST_POINT_ERROR=I makes point I fail (InternalError).
  void evaluate_guarded(const Point& p, Workload& scratch, EvalResult& r,
                        Fidelity f) const noexcept;

  /// `p` under the DES with its scenario, filling the outputs; `w` must hold its layout
  /// and op templates (evaluate() with Fidelity::Des leaves it so).
  void simulate(const Point& p, const Workload& w, EvalResult& r, const DesOutputs& out) const;

  /// The analytical evaluator of a hardware variant (under scenario `scenario`).
  const AnalyticalEvaluator& evaluator(int32_t hardware, int32_t scenario = 0) const;
  /// The discrete-event evaluator of a hardware variant (fidelity Des or Auto).
  const DesEvaluator& des_evaluator(int32_t hardware, int32_t scenario = 0) const;
  Fidelity fidelity() const { return fidelity_; }

 private:
  struct System;  // one hardware variant under one scenario (and GPU count, with faults)
  const System& system(const Point& p) const;
  /// evaluate() without the prediction interval.
  void evaluate_point(const Point& p, Workload& scratch, EvalResult& r, Fidelity f,
                      const DesOutputs& out) const;
  /// The point's hardware entry's prediction interval (spec.intervals) applied to `r`.
  void add_interval(const Point& p, EvalResult& r, Fidelity f) const;
  /// The system of a variant and scenario at the job's `gpu_slot`-th GPU count (0 unless
  /// link faults make the GPU counts differ).
  const System& system(int32_t hardware, int32_t scenario, size_t gpu_slot) const;

  const SweepSpec& spec_;
  Fidelity fidelity_;
  size_t per_scenario_ = 1;  ///< systems per (hardware, scenario): GPU counts with faults
  int64_t fail_point_ = -1;  ///< RAPID_SWEEP_TEST_POINT_ERROR
  uint64_t id_ = 0;          ///< this object in the thread's layout memo (evaluate())
  std::vector<std::unique_ptr<System>> systems_;
  /// Each hardware entry's interval factors, analytical and DES (spec.intervals).
  std::vector<std::array<IntervalFactors, 2>> interval_factors_;
};

}  // namespace rapid
