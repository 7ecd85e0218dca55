// Human-readable text of one evaluated point (the `rapid predict` output).
#pragma once

#include <optional>
#include <string>

#include "rapid/core/eval_result.hpp"
#include "rapid/core/point.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

/// One TP collective of the layer as the run's collective model times it: what the
/// latency-bound warning quotes (tp_collective_cost()).
struct TpCollectiveCost {
  CollectiveKind kind = CollectiveKind::AllReduce;
  double bytes = 0;      ///< buffer (nccl-tests convention)
  double time_s = 0;     ///< CollectiveCost::time
  double latency_s = 0;  ///< its start-up and per-step latencies (CollectivePlan::latency_s)
};

/// Multi-line summary: layout, status, step time and its breakdown, throughput, MFU/HFU,
/// memory breakdown against capacity, and warnings. `tp`: the layer's TP collective as the
/// run times it (the latency-bound warning states it; without it the warning gives no
/// figure).
std::string describe_result(const SweepSpec& spec, const Point& p, const EvalResult& r,
                            const TpCollectiveCost* tp = nullptr);

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
/// The first TP collective of the layer's forward in `w` (its op templates built) under
/// `eval`'s CollectiveCost; none without TP (or without built templates).
std::optional<TpCollectiveCost> tp_collective_cost(const Workload& w,
                                                   const AnalyticalEvaluator& eval);
}  // namespace rapid
