// Time of one serving iteration (one forward over the running batch) on one replica
// (docs/inference.md sec 2). An iteration carries decode tokens (one per running sequence,
// attending to its whole KV cache) and prefill tokens (prompt chunks, FlashAttention over
// the chunk and what came before it). Each pipeline stage runs its layers' ops, built by
// the same layer graph as training (workload/layer_graph.hpp: one graph, a model feature
// added once) with the iteration's tokens, and timed by the same cost models: GEMMs by the
// tile/wave model (M = the iteration's tokens), prefill attention by the FlashAttention
// model, decode attention by the split-KV decode model (cost/decode_attention.hpp),
// streaming ops by bytes / bandwidth, TP all-reduces and EP all-to-alls by the collective
// model (or the stack's one-shot NVLink all-reduce for small messages), pipeline hand-offs
// as send/recv. The host issues the kernels: eagerly (a
// launch each) or as a replayed CUDA graph; a stage's time is max(GPU time, issue time).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/compute_cost.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/serving_spec.hpp"

namespace rapid {

/// What one iteration of one replica carries.
struct StepBatch {
  int64_t decode_seqs = 0;           ///< sequences producing one token each
  double decode_context_tokens = 0;  ///< their KV cache lengths, summed
  int64_t prefill_tokens = 0;        ///< prompt tokens of this iteration (all chunks)
  int64_t prefill_seqs = 0;          ///< sequences with a prompt chunk in this iteration
  /// Attention work of the chunks: sum over chunks of chunk x (tokens before it + chunk/2).
  double prefill_attention_pairs = 0;
  int64_t logits_seqs = 0;  ///< sequences sampling a token (decodes + prompts that finish)
  int64_t tokens() const { return decode_seqs + prefill_tokens; }
};

/// One iteration's time by op class, on the slowest pipeline stage, and in total.
struct StepTime {
  double stage_s = 0;  ///< the slowest stage (issue-bound or GPU-bound), hand-off included
  double total_s = 0;  ///< all stages in sequence: a token's latency through the pipeline
  double gemm_s = 0, attention_s = 0, memory_bound_s = 0;  ///< slowest stage's compute
  double tp_comm_s = 0, ep_comm_s = 0, pp_comm_s = 0;
  double host_s = 0;  ///< issue time the GPU waits for, plus the per-step host overhead
  int64_t kernels = 0;

  /// Adds w x t's times (not its kernels): sums and weighted means of iterations.
  void add(const StepTime& t, double w = 1.0) {
    for (auto [into, from] : {std::pair{&stage_s, t.stage_s},
                              {&total_s, t.total_s},
                              {&gemm_s, t.gemm_s},
                              {&attention_s, t.attention_s},
                              {&memory_bound_s, t.memory_bound_s},
                              {&tp_comm_s, t.tp_comm_s},
                              {&ep_comm_s, t.ep_comm_s},
                              {&pp_comm_s, t.pp_comm_s},
                              {&host_s, t.host_s}})
      *into += w * from;
  }
};

class StepModel {
 public:
  /// `hw` the GPU, `net` its network, `par` the replica's layout (dp = replicas; tp, pp,
  /// ep; etp = tp / ep when ep <= tp, else 1). All must outlive nothing: the model copies
  /// what it needs.
  StepModel(const ModelSpec& model, const HardwareSpec& hw, const NetworkSpec& net,
            const ServingSpec& serving, const ParallelConfig& par);
  ~StepModel();
  StepModel(StepModel&&) noexcept;

  /// One iteration. No allocation once warm. Rebuilds the model's own op-list scratch: one
  /// StepModel per thread.
  StepTime time(const StepBatch& b) const;

  /// The attention kernel prefill and decode run (the stack's first the GPU has).
  AttentionImpl attention_kernel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rapid
