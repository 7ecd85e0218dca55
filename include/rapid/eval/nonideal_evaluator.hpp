// The non-ideal model of one scenario on one hardware variant (docs/nonideal.md): power
// and energy, thermal throttling at the periodic steady state, its mitigations, and
// stragglers, on top of either evaluator.
//  - analytical: the step's breakdown as a power profile; the closed-form steady state of
//    each class of GPU (normal, each straggler); the slowest class sets the step.
//  - des: the simulation with a power trace; each stage instance's profile replayed to its
//    periodic steady state (thermal_replay.hpp); the time-averaged derates fed back into
//    the simulation as per-instance compute speeds; iterated until the step time repeats.
#pragma once

#include <cstdint>
#include <vector>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/des/des_evaluator.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_feedback.hpp"
#include "rapid/nonideal/thermal_replay.hpp"
#include "rapid/spec/nonideal_spec.hpp"

namespace rapid {

/// Per stage instance of the last simulation: its steady state (timeline counter tracks).
struct ThermalReport {
  int iterations = 0;  ///< simulations run (1: no thermal feedback)
  int periods = 0;     ///< step periods replayed, summed over instances and iterations
  double unthrottled_step_s = 0;
  double step_s = 0;  ///< the step at the fixed point (the last simulation's)
  /// Per replayed class of GPUs: its steady state, its heating from idle (with traces when
  /// asked; thermal model on), a GPU of it, the simulated instance it belongs to, and
  /// whether it is the normal replicas of a stage that one straggler instance stands for
  /// (they replay its trace, waiting).
  std::vector<ReplayResult> instances;
  std::vector<ColdStart> cold;
  std::vector<int64_t> first_gpu;
  std::vector<int32_t> inst;
  std::vector<bool> waits;
};

class NonIdealEvaluator {
 public:
  /// References must outlive the evaluator (`analytical` times the ops).
  NonIdealEvaluator(const ModelSpec& model, const NetworkSpec& network, const NonIdealSpec& spec,
                    const AnalyticalEvaluator& analytical);

  /// After the analytical evaluation of `w` into the ok row `r`: the closed forms.
  void apply_analytical(const Workload& w, EvalResult& r) const;

  /// The DES with the non-ideal model: fills `r` (and `report`, `timeline` from the last
  /// simulation, `thermal` with the steady states; `record` asks for heating traces).
  void evaluate_des(const DesEvaluator& des, const Workload& w, EvalResult& r,
                    DesReport* report = nullptr, des::Timeline* timeline = nullptr,
                    ThermalReport* thermal = nullptr, bool record = false) const;

  const PowerModel& power() const { return power_; }

 private:
  /// Per stage instance (stage * dp + replica) of layout `par`: the worst of its GPUs.
  void instance_states(const ParallelConfig& par, std::vector<GpuState>& out) const;

  const ModelSpec& model_;
  const NetworkSpec& network_;
  const NonIdealSpec& spec_;
  const AnalyticalEvaluator& analytical_;
  PowerModel power_;
};

}  // namespace rapid
