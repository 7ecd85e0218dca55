// What `rapid predict` prints for a serving layout (mode: inference): memory (weights,
// KV cache, the largest concurrency) and, for every load of the job, the latencies and the
// throughput (the layout's throughput-latency curve).
#pragma once

#include <string>
#include <vector>

#include "rapid/core/eval_result.hpp"
#include "rapid/core/point.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// `by_load[k]` is point `p` at load k (spec.serving.loads[k]).
std::string describe_serving(const SweepSpec& spec, const Point& p,
                             const std::vector<EvalResult>& by_load);

}  // namespace rapid
