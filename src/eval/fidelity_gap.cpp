#include "rapid/eval/fidelity_gap.hpp"

#include <cmath>
#include <iterator>

namespace rapid {

double gap_column(const EvalResult& r, GapCause c) {
  switch (c) {
    case GapCause::Compute:
      return r.compute_time_s;
    case GapCause::Interference:
      return r.interference_time_s;
    case GapCause::LayerComm:
      return r.layer_comm_time_s();
    case GapCause::PpComm:
      return r.pp_comm_time_s;
    case GapCause::DpExposed:
      return r.dp_exposed_time_s;
    case GapCause::HostBound:
      return r.host_bound_time_s;
    case GapCause::Offload:
      return r.offload_time_s;
    case GapCause::Optimizer:
      return r.optimizer_time_s;
    case GapCause::Bubble:
      return r.bubble_time_s;
    case GapCause::None:
      break;
  }
  return 0.0;
}

GapCause fidelity_gap_cause(const EvalResult& a, const EvalResult& d) {
  const double bound = kFidelityAgreement * d.step_time_s;
  GapCause cause = GapCause::None;
  double largest = 0;
  for (size_t k = 1; k < std::size(kGapCauseNames); ++k) {
    const auto c = static_cast<GapCause>(k);
    const double diff = std::fabs(gap_column(d, c) - gap_column(a, c));
    if (diff > largest) largest = diff, cause = c;
  }
  // The columns sum to the step in both (the bubble is the rest): a step that differs
  // by more than the bound has a column that differs by at least a ninth of it; the
  // cause is still the largest.
  if (largest <= bound && std::fabs(d.step_time_s - a.step_time_s) <= bound) return GapCause::None;
  return cause;
}

void record_fidelity_gap(const EvalResult& analytical, EvalResult& des) {
  des.step_time_analytical_s = analytical.step_time_s;
  if (des.status != Status::Ok || analytical.status != Status::Ok) return;
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
