// Per-GPU memory of a serving replica (docs/inference.md sec 3): weights of the GPU's stage
// and shards, the activations of the largest iteration the scheduler allows (vLLM sizes them
// by profiling one forward of max_num_batched_tokens tokens), the stack's workspace, and the
// KV cache, which takes what the stack's memory rule leaves (memory_budget: total, static or
// free; docs/inference.md sec 3), in whole paged blocks.
// KV bytes per token = layers of the stage x kv_cache_elements_per_token(tp) x kv dtype bytes
// (2 x kv_heads/tp x head_dim for MHA/GQA; kv_lora_rank + rope dims for MLA).
#pragma once

#include <cstdint>

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/serving_spec.hpp"

namespace rapid {

struct ServingMemory {
  double weights_bytes = 0;      ///< the fullest GPU's weights
  double activations_bytes = 0;  ///< one iteration of max_num_batched_tokens tokens
  double workspace_bytes = 0;
  double capacity_bytes = 0;       ///< gpu_memory_utilization x HBM
  double kv_bytes_per_token = 0;   ///< per GPU of the stage with the most layers
  double kv_budget_bytes = 0;      ///< what is left for the cache (may be negative)
  int64_t kv_blocks = 0;           ///< paged blocks of kv_block_tokens tokens, per GPU
  int64_t blocks_per_request = 0;  ///< a request of the longest length
  /// Requests of the longest length whose KV cache fits at once, capped by max_num_seqs.
  int64_t max_batch = 0;
  bool fits() const { return max_batch >= 1; }
  int64_t block_tokens = 16;
  double kv_capacity_tokens() const { return static_cast<double>(kv_blocks) * block_tokens; }
};

ServingMemory serving_memory(const ModelSpec& model, const HardwareSpec& hw,
                             const ServingSpec& serving, const ParallelConfig& par);

}  // namespace rapid
