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

/// The "thermal" line of describe_result: the hottest GPU's mean temperature at its steady
/// state and throttled share, the step against the unthrottled step (`slowdown` = ratio - 1).
std::string describe_thermal_line(double temperature_C, double throttle_fraction, double slowdown);

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
