// One serving point (mode: inference, docs/inference.md): a hardware entry, a replica
// layout (dp = replicas, tp, pp, ep) and a load. Memory decides whether the longest request
// fits beside the weights (else status oom) and how many fit at once; the load is split
// evenly over the replicas (a concurrency C over dp replicas: C mod dp of them take one
// more); each distinct replica load is evaluated by the closed form or the simulation and
// the row combines them: throughputs add up, latencies are means over the requests.
#pragma once

#include "rapid/core/eval_result.hpp"
#include "rapid/core/point.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Evaluates `p` of serving job `spec` into `r` (analytical closed form, or the DES when
/// `des`). Thread-safe; allocates (the DES's requests).
void evaluate_serving(const SweepSpec& spec, const Point& p, EvalResult& r, bool des);

/// The point's load in its row (concurrency or arrival_rate_per_s; the other stays NaN), so
/// that a row the evaluator failed on still says which load it is.
void set_serving_load(const SweepSpec& spec, const Point& p, EvalResult& r);

}  // namespace rapid
