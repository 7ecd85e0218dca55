#include "rapid/spec/legality.hpp"

namespace rapid {

namespace {
int64_t par_microbatches(const TrainingSpec& t, const ParallelConfig& c) {
  const int64_t per_step = int64_t{c.dp} * c.mbs;
  return per_step > 0 ? t.global_batch_size / per_step : 0;
}
}  // namespace

const char* illegal_reason(const ModelSpec& model, const TrainingSpec& training,
                           const NetworkSpec& network, const SearchSpace& space,
                           const ParallelConfig& c) {
  if (c.dp < 1 || c.tp < 1 || c.pp < 1 || c.cp < 1 || c.ep < 1 || c.etp < 1 || c.vpp < 1 ||
      c.mbs < 1)
    return "every degree must be >= 1";
  if (model.num_attention_heads % c.tp != 0) return "tp must divide num_attention_heads";
  if (model.num_kv_heads % c.tp != 0) return "tp must divide num_kv_heads";
  if (!space.allow_tp_across_nodes &&
      (c.tp > network.gpus_per_node || network.gpus_per_node % c.tp != 0))
    return "tp must divide gpus_per_node (tp inside one NVLink domain)";
  if (space.allow_uneven_pp ? c.pp > model.num_layers : model.num_layers % c.pp != 0)
    return "pp must divide num_layers";
  if (c.vpp > 1) {
    if (c.pp == 1) return "vpp > 1 needs pp > 1";
    // Megatron-Core as of core_r0.8.0 refuses the interleaved schedule with 2 stages
    // (parallel_state.py initialize_model_parallel: "pipeline-model-parallel size should be
    // greater than 2 with interleaved schedule"; README "Distributed Pretraining").
    if (c.pp == 2 && !training.framework.interleaved_pp2)
      return "the stack's interleaved schedule needs pp > 2 (supports.interleaved_pp2)";
    if (space.allow_uneven_pp ? model.num_layers < int64_t{c.pp} * c.vpp
                              : (model.num_layers / c.pp) % c.vpp != 0)
      return "vpp must divide the layers per stage";
  }
  if (training.global_batch_size % (int64_t{c.dp} * c.mbs) != 0)
    return "global_batch_size must be divisible by dp*mbs";
  if (c.sp && c.tp == 1) return "sp needs tp > 1 (set sp false)";
  if (c.sp && training.seq_length % c.tp != 0) return "sp needs seq_length divisible by tp";
  if (c.cp > 1 && training.seq_length % (2 * c.cp) != 0)
    return "cp needs seq_length divisible by 2*cp";
  if (!model.moe.enabled()) {
    if (c.ep != 1 || c.etp != 1) return "ep and etp > 1 need a mixture-of-experts model";
  } else {
    if (model.moe.num_experts % c.ep != 0) return "ep must divide num_experts";
    if ((int64_t{c.tp} * c.cp * c.dp) % (int64_t{c.ep} * c.etp) != 0)
      return "ep*etp must divide tp*cp*dp (expert data parallel = tp*cp*dp / (ep*etp))";
    if (model.moe.expert_ffn_hidden_size % c.etp != 0)
      return "etp must divide expert_ffn_hidden_size";
    if (!space.allow_tp_across_nodes && c.etp > network.gpus_per_node)
      return "etp must fit in one NVLink domain";
    if (c.tp > 1 && !c.sp) return "MoE with tp > 1 needs sequence parallel (Megatron-Core)";
  }
  if (c.vpp > 1 && par_microbatches(training, c) % c.pp != 0)
    return "the interleaved schedule needs micro-batches divisible by pp";
  if (c.zero_stage < 0 || c.zero_stage > 3) return "zero_stage must be 0-3";
  // Partial full recompute (Megatron --recompute-method / --recompute-num-layers), counted
  // per model chunk of the largest stage.
  const int64_t stage_layers = max_stage_layers(model, c);
  const int64_t chunk = max_chunk_layers(model, c);
  if (c.recompute_layers < 1) return "recompute_num_layers must be >= 1";
  if (c.recompute == Recompute::Op) {
    if (!training.framework.supports_op_recompute)
      return "the stack has no per-op recompute (supports.op_recompute)";
    // The saved matmuls are counted for a dense block of one fused QKV, a gated MLP and
    // fused attention (docs/model.md sec 3).
    if (model.moe.enabled() || model.mla.enabled() || !is_gated(model.activation) ||
        !training.fused_attention())
      return "per-op recompute is modelled for dense gated-MLP models with fused attention";
  }
  if (c.recompute != Recompute::Full &&
      (c.recompute_method != RecomputeMethod::Uniform || c.recompute_layers != 1))
    return "recompute_method and recompute_num_layers apply to full recompute only";
  if (c.partial_recompute()) {
    if (!training.framework.supports_recompute_num_layers)
      return "the stack has no partial full recompute (supports.recompute_num_layers)";
    if (c.recompute_method == RecomputeMethod::Block && c.recompute_layers >= chunk)
      return "block recompute of every layer of a model chunk is full recompute: use fewer "
             "recompute_num_layers than the layers per chunk (layers / pp / vpp), or uniform";
    if (c.recompute_method == RecomputeMethod::Every && c.recompute_layers < 2)
      return "every-n-th layer recompute needs a period of 2 or more (1 is full recompute)";
    if (c.recompute_method == RecomputeMethod::Every && c.recompute_layers > chunk)
      return "every-n-th layer recompute with a period longer than a model chunk recomputes no "
             "layer: use at most the layers per chunk (layers / pp / vpp)";
    if (c.recompute_method == RecomputeMethod::Uniform && c.recompute_layers > chunk)
      return "uniform recompute groups larger than a model chunk: use at most the layers per "
             "chunk (layers / pp / vpp) as recompute_num_layers";
  }
  // Activation offload (Megatron-Core cpu_offloading): no recompute beside it, fewer layers
  // than the model has, and pipeline parallelism only where the stack supports it.
  if (c.offload_layers < 0) return "cpu_offload_layers must be >= 0";
  if (c.offload_layers > 0) {
    if (!training.framework.supports_cpu_offload)
      return "the stack has no activation offload (supports.cpu_offload)";
    if (c.pp > 1 && !training.framework.cpu_offload_with_pp)
      return "the stack offloads activations only without pipeline parallelism";
    if (c.recompute != Recompute::None) return "activation offload does not run with recompute";
    if (c.offload_layers >= stage_layers) return "cpu_offload_layers must be below the layers";
  }
  // Megatron-Core's distributed optimizer and FSDP (torchtitan shards over its dp_shard x cp
  // mesh) shard over the data and context ranks together, the ranks that hold the same
  // dense weights (CommGroup::DPCP).
  if (c.zero_stage > 0 && c.dp * c.cp == 1) return "ZeRO needs dp x cp > 1";
  return nullptr;
}

const char* serving_illegal_reason(const SweepSpec& s, const ParallelConfig& c) {
  const ModelSpec& model = s.model;
  if (c.dp < 1 || c.tp < 1 || c.pp < 1 || c.ep < 1) return "every degree must be >= 1";
  if (model.num_attention_heads % c.tp != 0) return "tp must divide num_attention_heads";
  if (model.num_kv_heads % c.tp != 0 && c.tp % model.num_kv_heads != 0)
    return "tp and num_kv_heads must divide one another";
  const int64_t per_node = s.network.gpus_per_node;
  if (!s.search.allow_tp_across_nodes && (c.tp > per_node || per_node % c.tp != 0))
    return "tp must divide gpus_per_node (tp inside one NVLink domain)";
  if (c.pp > model.num_layers) return "pp must not exceed num_layers";
  if (c.ep > 1) {
    if (!model.moe.enabled()) return "ep > 1 needs a mixture-of-experts model";
    if (model.moe.num_experts % c.ep != 0) return "ep must divide num_experts";
    if ((int64_t{c.tp} * c.dp) % c.ep != 0) return "ep must divide tp * replicas";
    if (c.ep % c.tp != 0 && c.tp % c.ep != 0) return "ep and tp must divide one another";
  }
  return nullptr;
}

}  // namespace rapid
