// Which parallel layouts are legal for a job (Megatron-LM's own constraints). The
// enumerator yields only points that pass; a job's baseline must pass too.
#pragma once

#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// Returns nullptr when `c` is legal for the job, else a static string naming the rule it
/// breaks. Rules: tp divides attention and KV heads and the node (tp <= gpus_per_node
/// unless allow_tp_across_nodes); pp divides num_layers (unless allow_uneven_pp, then
/// pp <= num_layers); vpp > 1 needs pp > 1 and layers per stage divisible by vpp;
/// gbs divisible by dp*mbs; sp needs tp > 1 and seq divisible by tp; cp > 1 needs seq
/// divisible by 2*cp (load-balanced causal chunks); ep and etp must be 1 for dense models,
/// else ep divides num_experts, ep*etp divides tp*cp*dp, etp divides the expert FFN and
/// fits in a node; the interleaved schedule needs m divisible by pp (Megatron-LM);
/// ZeRO > 0 needs dp > 1 (with one replica every stage is the same point).
const char* illegal_reason(const ModelSpec& model, const TrainingSpec& training,
                           const NetworkSpec& network, const SearchSpace& space,
                           const ParallelConfig& c);

/// Layers of the largest stage and of the largest model chunk of layout `c`, what partial
/// recompute and activation offload are counted against.
inline int64_t max_stage_layers(const ModelSpec& model, const ParallelConfig& c) {
  return (model.num_layers + c.pp - 1) / c.pp;
}
inline int64_t max_chunk_layers(const ModelSpec& model, const ParallelConfig& c) {
  return (max_stage_layers(model, c) + c.vpp - 1) / c.vpp;
}

inline const char* illegal_reason(const SweepSpec& s, const ParallelConfig& c) {
  return illegal_reason(s.model, s.training, s.network, s.search, c);
}

/// Why serving layout `c` of job `s` (mode: inference) is not a point, or nullptr: tp must
/// divide num_attention_heads, and num_kv_heads and tp must divide one another (vLLM
/// replicates K/V heads when tp > num_kv_heads), tp must fit in an NVLink domain unless
/// allowed across nodes, pp <= num_layers (vLLM splits uneven layer counts), ep > 1 only for
/// MoE models with ep dividing num_experts and tp * dp, and ep and tp dividing one another
/// (ep <= tp: experts split over ep GPUs of the replica, the rest as expert TP; ep > tp:
/// ep / tp replicas share their MoE layers, data-parallel attention).
const char* serving_illegal_reason(const SweepSpec& s, const ParallelConfig& c);

}  // namespace rapid
