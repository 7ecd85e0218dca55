// The workload of one configuration as a compact graph (docs/architecture.md "The workload":
// one compact graph, three consumers): per-layer templates of ordered ops (forward, backward,
// recompute), extras of the first and last pipeline stage, a stage program (layers per
// stage and the pipeline schedule), the groups' placement on nodes and the per-step
// gradient/parameter traffic. Ranks are not materialized: TP/CP ranks of one stage and DP
// replicas are symmetric, so building and evaluating a workload costs the same whatever
// the GPU count.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

/// Ordered ops of one pass of a layer (or of a stage extra) on one GPU.
struct OpTemplate {
  std::vector<Op> forward;
  std::vector<Op> backward;   ///< in execution order (reverse of forward)
  std::vector<Op> recompute;  ///< replayed before backward under the recompute policy
};

/// Where a process group's members sit: `size` ranks, `per_node` of them in each node
/// (NVLink domain), over `nodes` nodes (Megatron rank order tp, cp, dp, pp).
struct GroupShape {
  int64_t size = 1;
  int64_t per_node = 1;
  int64_t nodes = 1;
  int64_t stride = 1;  ///< global ranks between consecutive members (the DES places flows)
};

/// One pipeline stage (one GPU's share of the layers).
struct StageInfo {
  int64_t first_layer = 0;     ///< index of its first layer (model order)
  int64_t num_layers = 0;      ///< all its layers
  int64_t num_moe_layers = 0;  ///< of which MoE layers
  bool has_embedding = false;  ///< first stage: input embedding
  bool has_lm_head = false;    ///< last stage: final norm, LM head, loss
  double params = 0;           ///< parameters held by one GPU of this stage (after TP/EP)
  double expert_params = 0;    ///< of which routed-expert weights (reduced over EDP, not DP)
  /// Parameters of the optimizer shard one GPU of this stage steps: all of `params`, or
  /// under ZeRO >= 1 the dense ones over DPCP and the experts over EDP.
  double optimizer_params = 0;
  /// Model chunks (num_layers / vpp layers of one micro-batch) whose activations are alive
  /// at the schedule's peak; with vpp == 1 this is the micro-batches in flight.
  int64_t chunks_in_flight = 0;
  /// Dense and MoE layers that replay their forward (the template's recompute ops) before
  /// their backward, per micro-batch: all of them under selective or uniform full
  /// recompute, the first recompute_layers of each model chunk under block recompute.
  int64_t recompute_dense = 0, recompute_moe = 0;
};

/// HBM bytes per parameter of an Adam step over the optimizer shard: read the fp32 master
/// weights, m, v and the gradient (16 B), write master, m, v (12 B) and the 16-bit weights
/// (2 B), and read the gradients once more for the global norm (4 B) (Kingma & Ba 2015,
/// Algorithm 1; Megatron-Core DistributedOptimizer keeps fp32 master weights and states).
inline constexpr double kAdamStepBytesPerParam = 16.0 + 12.0 + 2.0 + 4.0;

enum class Schedule : uint8_t { OneFOneB, Interleaved };

struct Workload {
  ParallelConfig par;
  int64_t global_batch_size = 0;
  int64_t seq_length = 0;
  int64_t num_microbatches = 0;  ///< m = gbs / (dp * mbs)
  Schedule schedule = Schedule::OneFOneB;

  OpTemplate layer;      ///< one dense transformer layer
  OpTemplate moe_layer;  ///< one MoE layer (empty for dense models)
  OpTemplate embedding;  ///< first-stage extras
  OpTemplate lm_head;    ///< last-stage extras
  Op p2p;                ///< activation (or its gradient) sent between stages, per micro-batch
  std::vector<StageInfo> stages;                    ///< pp entries
  std::array<GroupShape, kNumCommGroups> groups{};  ///< indexed by CommGroup

  double layer_params = 0;       ///< one dense layer's parameters on one GPU (after TP)
  double moe_layer_params = 0;   ///< one MoE layer's parameters on one GPU (after TP/EP/ETP)
  double moe_expert_params = 0;  ///< of which its routed experts
  double embedding_params = 0;   ///< input embedding on one GPU (after TP)
  double lm_head_params = 0;     ///< LM head (+ final norm) on one GPU of the last stage

  const GroupShape& group(CommGroup g) const { return groups[static_cast<int>(g)]; }
  int64_t tokens_per_step() const { return global_batch_size * seq_length; }
};

/// Builds the workload of one layout into `out`, reusing its vectors' capacity (no
/// allocation once warm: this is on the per-point path).
/// Inputs: shapes from `model`, batch/precision/attention kernel from `training`, the node
/// size from `network`, a legal `par` (see legality.hpp). Ops follow Megatron-LM's
/// transformer layer (Shoeybi et al. 2019, Fig. 3; Korthikanti et al. 2022, Fig. 5 for
/// sequence parallelism). Throws nothing for legal inputs.
void build_workload(const ModelSpec& model, const TrainingSpec& training,
                    const NetworkSpec& network, const ParallelConfig& par, Workload& out);

/// The two halves of build_workload: the layout (schedule, groups, parameters, stages:
/// all the memory model reads) and the op templates (what the evaluators time). An
/// out-of-memory point needs only the first.
void build_workload_layout(const ModelSpec& model, const TrainingSpec& training,
                           const NetworkSpec& network, const ParallelConfig& par, Workload& out);
void build_workload_ops(const ModelSpec& model, const TrainingSpec& training, Workload& out);

/// Whether layouts `a` and `b` differ at most in the knobs set_layout_knobs reads (ZeRO
/// stage, recompute option, offloaded layers): a sweep's neighbours (enumerator.hpp puts
/// those axes innermost), whose build_workload_layout differs only there.
bool same_layout_frame(const ParallelConfig& a, const ParallelConfig& b);
/// The part of build_workload_layout that reads those knobs: `par` itself, each stage's
/// optimizer shard and recompute counts. On a workload built by build_workload_layout for
/// a layout of the same frame, the result equals build_workload_layout's for `par`.
void set_layout_knobs(const ModelSpec& model, const ParallelConfig& par, Workload& w);

/// Model chunks alive on stage `stage` at the peak of the 1F1B (vpp == 1) or interleaved
/// schedule with `m` micro-batches (Megatron-LM schedules.py warm-up counts).
int64_t chunks_in_flight(int64_t stage, int64_t pp, int64_t vpp, int64_t m);

/// Layers of chunk `chunk` of a stage of `layers` layers split into `vpp` chunks as evenly
/// as possible, the first chunks taking the remainder (the DES stage program's split).
inline int64_t chunk_layers(int64_t layers, int64_t vpp, int64_t chunk) {
  return layers / vpp + (chunk < layers % vpp ? 1 : 0);
}

/// Whether layer `pos` (0-based within its chunk) replays its forward in backward under
/// the recompute policy of `par`.
inline bool layer_recomputed(const ParallelConfig& par, int64_t pos) {
  if (par.recompute == Recompute::None) return false;
  if (par.recompute == Recompute::Full && par.recompute_method == RecomputeMethod::Block)
    return pos < par.recompute_layers;
  if (par.recompute == Recompute::Full && par.recompute_method == RecomputeMethod::Every)
    return (pos + 1) % par.recompute_layers == 0;  // the n-th, 2n-th, ... layer of the chunk
  return true;
}

/// Model chunk `chunk` of stage `st`: its layers by kind, and how many of each replay their
/// forward in backward under the recompute policy of `par`.
struct ChunkLayers {
  int64_t dense = 0, moe = 0, dense_rc = 0, moe_rc = 0;
};
inline ChunkLayers chunk_layers_of(const ModelSpec& model, const ParallelConfig& par,
                                   const StageInfo& st, int64_t chunk) {
  ChunkLayers c;
  const int64_t n = chunk_layers(st.num_layers, par.vpp, chunk);
  if (!model.moe.enabled()) {  // closed form: all layers dense, the first k under block
    c.dense = n;
    if (par.recompute == Recompute::Full && par.recompute_method == RecomputeMethod::Every)
      c.dense_rc = n / par.recompute_layers;  // positions n-1, 2n-1, ... below n
    else if (par.recompute != Recompute::None)
      c.dense_rc = layer_recomputed(par, n - 1) ? n : std::min<int64_t>(n, par.recompute_layers);
    return c;
  }
  // The chunk's first layer: the earlier chunks take layers / vpp each, the first
  // layers % vpp one more (chunk_layers).
  const int64_t base = st.num_layers / par.vpp, extra = st.num_layers % par.vpp;
  const int64_t first = st.first_layer + chunk * base + std::min(chunk, extra);
  for (int64_t k = 0; k < n; ++k) {
    const bool moe = model.moe.is_moe_layer(first + k);
    ++(moe ? c.moe : c.dense);
    if (layer_recomputed(par, k)) ++(moe ? c.moe_rc : c.dense_rc);
  }
  return c;
}

/// Placement of a group of `size` ranks whose members are `stride` ranks apart, among the
/// job's `ranks` (0: unbounded). When the groups' blocks and the nodes do not tile each
/// other, the shape of the worst group: the most nodes, the fewest members in one.
GroupShape group_shape(int64_t size, int64_t stride, int64_t gpus_per_node, int64_t ranks = 0);

/// Floating-point operations of one training step, summed over all GPUs and ops of the
/// workload (forward + backward, plus recompute when `with_recompute`).
double workload_step_flops(const Workload& w, bool with_recompute);

/// Floating-point operations of one micro-batch through each op template (the part of
/// workload_step_flops that depends on the templates only).
struct TemplateFlops {
  double layer = 0, moe_layer = 0;                ///< forward + backward
  double layer_recompute = 0, moe_recompute = 0;  ///< the replayed forward
  double embedding = 0, lm_head = 0;              ///< forward + backward
};
TemplateFlops template_flops(const Workload& w);
/// workload_step_flops from the templates' flops `t` and the stages of `w`.
double step_flops(const Workload& w, const TemplateFlops& t, bool with_recompute);

}  // namespace rapid
