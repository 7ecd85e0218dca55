// Where the two fidelities part (docs/des.md section 10): on a point evaluated by both, the
// breakdown column in which the DES and the closed form differ most, when they differ by
// more than kFidelityAgreement of the DES step.
#pragma once

#include "rapid/core/eval_result.hpp"
#include "rapid/spec/parallel_config.hpp"

namespace rapid {

/// The breakdown column `c` of `r` (GapCause::None: 0).
double gap_column(const EvalResult& r, GapCause c);

/// The column of the breakdown (compute, interference, layer communication, pipeline
/// transfers, exposed DP traffic, host waits, offload, optimizer, bubble) with the largest
/// difference between `analytical` and `des`, or GapCause::None when the step and every
/// column agree within kFidelityAgreement of des.step_time_s.
GapCause fidelity_gap_cause(const EvalResult& analytical, const EvalResult& des);

/// Fills des.step_time_analytical_s, des.fidelity_gap and des.fidelity_gap_cause from the
/// closed form's result of the same point.
void record_fidelity_gap(const EvalResult& analytical, EvalResult& des);

/// Whether the closed form's answer `r` of layout `par` belongs to a family where it is
/// known to part from the DES by more than kFidelityAgreement (measured over every layout of
/// the demo, Mixtral and Llama 3 405B jobs; docs/des.md section 10): per-micro-batch ZeRO-2/3
/// traffic with at least kRiskExposedShare of the step in exposed communication (the
/// streams share links in ways the closed form approximates), or interleaved pipelines
/// whose transfers take kRiskPipelineShare of it (transfers meeting on the same NICs).
bool closed_form_risk(const ParallelConfig& par, const EvalResult& r);
inline constexpr double kRiskExposedShare = 0.05, kRiskPipelineShare = 0.10;

}  // namespace rapid
