// The layer graph's dimensions for one serving iteration (workload/layer_graph.hpp): what
// an inference engine runs differs from training in the batch (prompt chunks and decode
// tokens, sampled sequences), in what the stack fuses and in how MoE routing lands on a
// small batch. Internal to src/inference; docs/inference.md sec 2.
#pragma once

#include "rapid/inference/step_model.hpp"
#include "rapid/workload/layer_graph.hpp"

namespace rapid::detail {

/// The iteration-independent part: shapes on this GPU and the engine's kernels.
LayerDims serving_layer_dims(const ModelSpec& model, const ServingSpec& serving,
                             const ParallelConfig& par);

/// Sets `D`'s token counts, attention phases and expert routing for batch `b`.
void set_iteration(LayerDims& D, const StepBatch& b);

}  // namespace rapid::detail
