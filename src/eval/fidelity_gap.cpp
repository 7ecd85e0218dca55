#include "rapid/eval/fidelity_gap.hpp"

#include <cmath>

namespace rapid {

GapCause fidelity_gap_cause(const EvalResult& a, const EvalResult& d) {
  const struct {
    GapCause cause;
    double analytical, des;
  } cols[] = {
      {GapCause::Compute, a.compute_time_s, d.compute_time_s},
      {GapCause::Interference, a.interference_time_s, d.interference_time_s},
      {GapCause::LayerComm, a.layer_comm_time_s(), d.layer_comm_time_s()},
      {GapCause::PpComm, a.pp_comm_time_s, d.pp_comm_time_s},
      {GapCause::DpExposed, a.dp_exposed_time_s, d.dp_exposed_time_s},
      {GapCause::HostBound, a.host_bound_time_s, d.host_bound_time_s},
      {GapCause::Offload, a.offload_time_s, d.offload_time_s},
      {GapCause::Optimizer, a.optimizer_time_s, d.optimizer_time_s},
      {GapCause::Bubble, a.bubble_time_s, d.bubble_time_s},
  };
  const double bound = kFidelityAgreement * d.step_time_s;
  GapCause cause = GapCause::None;
  double largest = 0;
  for (const auto& c : cols) {
    const double diff = std::fabs(c.des - c.analytical);
    if (diff > largest) largest = diff, cause = c.cause;
  }
  // The columns sum to the step in both (the bubble is the rest): a step that differs
  // by more than the bound has a column that differs by at least a ninth of it; the
  // cause is still the largest.
  if (largest <= bound && std::fabs(d.step_time_s - a.step_time_s) <= bound) return GapCause::None;
  return cause;
}

void record_fidelity_gap(const EvalResult& analytical, EvalResult& des) {
  if (des.status != Status::Ok || analytical.status != Status::Ok) return;
  des.step_time_analytical_s = analytical.step_time_s;
  des.fidelity_gap = des.step_time_s / analytical.step_time_s - 1.0;
  des.fidelity_gap_cause = static_cast<uint8_t>(fidelity_gap_cause(analytical, des));
}

bool closed_form_risk(const ParallelConfig& par, const EvalResult& r) {
  if (!(r.step_time_s > 0)) return false;
  if (par.zero_stage >= 2 && r.exposed_comm_time_s >= kRiskExposedShare * r.step_time_s)
    return true;
  return par.vpp > 1 && r.pp_comm_time_s >= kRiskPipelineShare * r.step_time_s;
}

}  // namespace rapid
