// Human-readable text of one evaluated point (the `rapid predict` output).
#pragma once

#include <string>

#include "rapid/eval/eval_result.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"

namespace rapid {

/// Multi-line summary: layout, status, step time and its breakdown, throughput, MFU/HFU,
/// memory breakdown against capacity, and warnings.
std::string describe_result(const SweepSpec& spec, const Point& p, const EvalResult& r);

/// The "thermal" line of describe_result: the hottest GPU's die and HBM temperatures at its
/// steady state, its share of time throttled (under any thermal slowdown: the figure every
/// line uses) and at the DVFS clock, the step against the unthrottled step with the same
/// stack settings, and its heating from idle (first throttled, DVFS engagements).
std::string describe_thermal_line(const EvalResult& r);

/// "zero_stage 2", "recompute full, recompute_method block, recompute_num_layers 3", ...
std::string describe_fit_hint(FitHint h, int32_t value);

}  // namespace rapid

namespace rapid {
class AnalyticalEvaluator;
struct Workload;
/// One line per op of a layer's forward, backward and recompute passes and of the stage
/// extras: name, kind, shape, GFLOP, MB moved, time (us) under `eval`'s cost models.
std::string describe_ops(const Workload& w, const AnalyticalEvaluator& eval);
}  // namespace rapid
