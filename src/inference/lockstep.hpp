// A closed loop of clients with fixed lengths runs in lockstep (docs/inference.md sec 4):
// every client sends at once, the prompts are prefilled together, the requests decode
// together, finish together and come back together. What a benchmark client with a fixed
// input and output length and --max-concurrency c measures.
#pragma once

#include "rapid/inference/replica_metrics.hpp"
#include "rapid/inference/step_model.hpp"
#include "rapid/spec/serving_spec.hpp"

namespace rapid::detail {

/// Whether `s` at `load` clients on a replica of `pp` stages and at most `max_batch`
/// running requests runs in lockstep: a closed loop, fixed input and output lengths, one
/// pipeline stage (pp groups take turns and break the lockstep), every client running, and
/// either every prompt in one iteration or prompts and decodes in separate iterations.
bool runs_in_lockstep(const ServingSpec& s, int64_t pp, double load, double max_batch);

/// The lockstep's metrics for c = `load` clients: prompts packed into iterations under
/// max_num_batched_tokens (chunks of it with chunked prefill, whole prompts otherwise; a
/// prompt over the budget alone), then O - 1 decode iterations of all c.
ReplicaMetrics lockstep_metrics(const StepModel& step, const ServingSpec& s, double load);

}  // namespace rapid::detail
