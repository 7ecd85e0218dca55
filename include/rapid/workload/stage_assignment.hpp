// Which transformer layers each pipeline stage runs.
#pragma once

#include <cstdint>
#include <vector>

namespace rapid {

/// Layers per stage for `layers` layers on `pp` stages.
///  - balanced == false: the even split L/pp (requires pp | L; Megatron-LM's default);
///  - balanced == true: each stage gets whole layers so that the slowest stage's load is
///    as small as possible, where stage i's load is its layer count plus `extra[i]` layers'
///    worth of work (the embedding on the first stage, the LM head and loss on the last):
///    layers are handed one at a time to the least-loaded stage, ties to the later stage
///    (the first stage keeps the most micro-batches in flight under 1F1B, so it is the one
///    to keep light); greedy list scheduling of identical jobs, optimal here (Graham 1969).
///    For Llama 3 405B (126 layers, pp 16, LM head ~0.6 layer) this gives the Llama 3
///    paper's split 7, 8 x 14, 7 (Dubey et al. 2024, sec 3.3.2).
/// `extra` has pp entries (missing entries count as 0). Every stage gets at least one layer
/// when layers >= pp. Result: pp counts summing to `layers`.
std::vector<int64_t> assign_layers(int64_t layers, int64_t pp, bool balanced,
                                   const std::vector<double>& extra);

}  // namespace rapid
