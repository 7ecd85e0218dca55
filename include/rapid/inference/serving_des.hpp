// Discrete-event simulation of continuous batching on one replica (docs/inference.md sec 4):
// requests arrive (closed loop: each of c clients sends its next request when the last one
// finishes; open loop: Poisson arrivals), wait, are admitted when the KV cache has blocks for
// their whole length (TensorRT-LLM's GUARANTEED_NO_EVICT capacity policy; no preemption) and
// max_num_seqs allows, prefill in chunks that fill the iteration's token budget beside the
// running decodes (or alone, without mixed batches), decode one token per iteration and
// leave. Every iteration is timed by the StepModel on its exact batch (each sequence's own
// context); with pipeline parallelism pp groups of requests take turns through the stages.
// Lengths are drawn from the job's mix with its seed (reproducible).
#pragma once

#include <cstdint>

#include "rapid/inference/replica_metrics.hpp"
#include "rapid/inference/serving_memory.hpp"
#include "rapid/inference/step_model.hpp"

namespace rapid {

/// `load` as in serving_closed_form; `stream` selects an independent random stream (the
/// replica's load value) so that points do not share draws by accident. Throws LimitError
/// past 50 million iterations.
ReplicaMetrics serving_simulate(const StepModel& step, const ServingSpec& serving,
                                const ServingMemory& memory, int64_t pp, double load,
                                uint64_t stream = 0);

}  // namespace rapid
