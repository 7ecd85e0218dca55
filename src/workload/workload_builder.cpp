// Builds the per-GPU op templates of a Megatron-LM GPT/Llama layer and the stage program.
// Sources: Shoeybi et al. 2019 (Megatron-LM tensor parallelism, f/g operators);
// Korthikanti et al. 2022 (sequence parallelism: all-gather / reduce-scatter replacing the
// all-reduces, Fig. 5); Narayanan et al. 2021 (pipeline schedules, p2p of activations);
// Dao 2023 (FlashAttention-2 FLOPs). docs/model.md lists every op with its shape.
#include <algorithm>
#include <numeric>

#include "rapid/common/eval_context.hpp"
#include "rapid/workload/layer_graph.hpp"
#include "rapid/workload/model_flops.hpp"
#include "rapid/workload/stage_assignment.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

const char* comm_group_name(CommGroup g) {
  static const char* names[] = {"none", "tp", "cp", "ep", "dp", "pp", "etp", "edp", "dp_cp"};
  return names[static_cast<int>(g)];
}

const char* collective_name(CollectiveKind c) {
  static const char* names[] = {"none",           "all_reduce", "all_gather",
                                "reduce_scatter", "all_to_all", "send_recv"};
  return names[static_cast<int>(c)];
}

// The groups of a layout run their collectives in lockstep: the step waits for the
// slowest. When a group's block (size x stride ranks) and the NVLink domain do not tile
// each other (a 72-GPU NVL72 rack with TP 8 x CP 2: the block of ranks 64-79 spans two
// racks), some groups straddle a domain boundary: the shape is the worst group's, its
// domains and the fewest members it has in one of them (whose NICs carry the most).
GroupShape group_shape(int64_t size, int64_t stride, int64_t gpus_per_node, int64_t ranks) {
  GroupShape g;
  g.size = size;
  g.stride = stride;
  const int64_t G = std::max<int64_t>(gpus_per_node, 1);
  g.per_node = stride >= G ? 1 : std::min(size, G / stride);
  g.per_node = std::max<int64_t>(g.per_node, 1);
  g.nodes = (size + g.per_node - 1) / g.per_node;
  const int64_t block = size * stride;
  const bool tiled =
      stride >= G || (block <= G ? G % block == 0 : block % G == 0 && G % stride == 0);
  if (tiled) return g;
  // Every group of one period of both tilings (lcm of block and G ranks; after it the
  // pattern repeats), of the job's ranks when given.
  const int64_t period = std::lcm(block, G);
  const int64_t end = ranks > 0 ? std::min(period, ranks) : period;
  for (int64_t start = 0; start < end; start += block)
    for (int64_t base = start; base < start + stride; ++base) {
      int64_t nodes = 0, fewest = size, run = 0, node = -1;
      for (int64_t j = 0; j < size; ++j) {
        const int64_t n = (base + j * stride) / G;
        if (n != node) {
          if (run > 0) fewest = std::min(fewest, run);
          node = n, run = 0, ++nodes;
        }
        ++run;
      }
      fewest = std::min(fewest, run);
      if (nodes > g.nodes || (nodes == g.nodes && fewest < g.per_node))
        g.nodes = nodes, g.per_node = fewest;
    }
  return g;
}

// Model chunks (a stage's layers / vpp) whose forward activations are alive on stage i at
// the peak of the schedule (Megatron-LM schedules.py warm-up counts): 1F1B keeps
// min(pp - i, m) micro-batches; interleaved keeps (pp - i - 1) * 2 + (vpp - 1) * pp + 1
// chunks, which on stage 0 is L * (1 + (pp-1)/(pp*vpp)) layers' worth (Korthikanti et al.
// 2022, sec 4.2.3).
int64_t chunks_in_flight(int64_t stage, int64_t pp, int64_t vpp, int64_t m) {
  if (vpp == 1) return std::min(pp - stage, m);
  return std::min((pp - stage - 1) * 2 + (vpp - 1) * pp + 1, m * vpp);
}

void build_workload(const ModelSpec& model, const TrainingSpec& training,
                    const NetworkSpec& network, const ParallelConfig& par, Workload& w) {
  build_workload_layout(model, training, network, par, w);
  build_workload_ops(model, training, w);
}

void build_workload_ops(const ModelSpec& model, const TrainingSpec& training, Workload& w) {
  const ParallelConfig& par = w.par;
  const LayerDims D = LayerDims::for_training(model, training, par);
  build_dense_layer(D, par.recompute, w.layer);
  if (model.moe.enabled())
    build_moe_layer(D, par.recompute, w.moe_layer);
  else
    w.moe_layer = OpTemplate{};
  build_embedding(D, w.embedding);
  build_lm_head(D, w.lm_head);
}

namespace {

// Parameters of the optimizer shard one GPU of stage `st` steps (StageInfo::optimizer_params):
// ZeRO >= 1 shards the dense ones over DPCP and the experts over EDP (Rajbhandari et al.
// 2020, sec. 5; Megatron-Core distributed optimizer).
double optimizer_shard_params(const Workload& w, const StageInfo& st) {
  if (w.par.zero_stage < 1) return st.params;
  return (st.params - st.expert_params) / static_cast<double>(w.group(CommGroup::DPCP).size) +
         st.expert_params / static_cast<double>(w.group(CommGroup::EDP).size);
}

// What build_workload_layout derives from the layout's frame (same_layout_frame): all but
// the per-stage optimizer shard and recompute counts (set_layout_knobs).
void build_layout_frame(const ModelSpec& model, const TrainingSpec& training,
                        const NetworkSpec& network, const ParallelConfig& par, Workload& w) {
  w.par = par;
  w.global_batch_size = training.global_batch_size;
  w.seq_length = training.seq_length;
  w.num_microbatches = par.num_microbatches(training.global_batch_size);
  w.schedule = par.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  w.p2p = Op{};
  w.p2p.name = "pp_send_recv";
  w.p2p.kind = OpKind::P2P;
  w.p2p.group = CommGroup::PP;
  w.p2p.collective = CollectiveKind::SendRecv;
  w.p2p.stream = Stream::PPComm;
  // SP: each TP rank sends its shard (scatter-gather).
  w.p2p.bytes = LayerDims::training_norm_tokens(training, par) *
                static_cast<double>(model.hidden_size) *
                LayerDims::training_element_bytes(training);

  // Megatron rank order: tp fastest, then cp, dp, pp; expert layers fold tp*cp*dp into
  // etp (fastest), ep, edp (Megatron-Core MoE parallel folding).
  const int64_t G = network.gpus_per_node;
  const int64_t tp = par.tp, cp = par.cp, dp = par.dp, pp = par.pp, ep = par.ep, etp = par.etp;
  const int64_t edp = tp * cp * dp / (ep * etp);
  w.groups = {};
  const int64_t R = tp * cp * dp * pp;  // the job's ranks
  w.groups[static_cast<int>(CommGroup::TP)] = group_shape(tp, 1, G, R);
  w.groups[static_cast<int>(CommGroup::CP)] = group_shape(cp, tp, G, R);
  w.groups[static_cast<int>(CommGroup::DP)] = group_shape(dp, tp * cp, G, R);
  w.groups[static_cast<int>(CommGroup::DPCP)] = group_shape(dp * cp, tp, G, R);
  w.groups[static_cast<int>(CommGroup::PP)] = group_shape(pp, tp * cp * dp, G, R);
  w.groups[static_cast<int>(CommGroup::ETP)] = group_shape(etp, 1, G, R);
  w.groups[static_cast<int>(CommGroup::EP)] = group_shape(ep, etp, G, R);
  w.groups[static_cast<int>(CommGroup::EDP)] = group_shape(edp, etp * ep, G, R);

  // Parameters on one GPU: weight matrices split by TP (experts by EP and ETP), norms and
  // the router replicated, and MLA's down projections W_DQ, W_DKV with their latent norms
  // (Megatron-Core builds them duplicated on every TP rank:
  // megatron/core/transformer/multi_latent_attention.py).
  const double h = static_cast<double>(model.hidden_size);
  const double replicated = static_cast<double>(model.attention_tp_replicated_params());
  const double attention =
      (static_cast<double>(model.attention_params()) - replicated) / tp + replicated;
  w.layer_params = (static_cast<double>(model.layer_params()) - replicated) / tp + replicated;
  if (model.moe.enabled()) {
    const MoeSpec& moe = model.moe;
    w.moe_expert_params = static_cast<double>(moe.num_experts / ep) *
                          static_cast<double>(model.expert_params()) / etp;
    const double shared = static_cast<double>(model.moe_layer_params() - model.attention_params() -
                                              model.hidden_size * moe.num_experts -
                                              moe.num_experts * model.expert_params()) /
                          tp;
    w.moe_layer_params =
        attention + h * static_cast<double>(moe.num_experts) + shared + w.moe_expert_params;
  } else {
    w.moe_layer_params = w.moe_expert_params = 0;
  }
  const double vocab_shard =
      static_cast<double>(LayerDims::vocab_per_gpu(model.vocab_size, par.tp)) * h;
  w.embedding_params = vocab_shard;
  // Tied embeddings on one stage share the matrix; across stages the last stage keeps a copy.
  w.lm_head_params = (model.tied_embeddings && pp == 1 ? 0.0 : vocab_shard) +
                     (model.norm == NormKind::LayerNorm ? 2 : 1) * h;

  // Layers per stage: even split, or balanced with the LM head counted in layers' worth of
  // FLOPs per token (6 V h against a layer's 6 N_layer + 12 s a d, or MLA's core).
  const double layer_flops = 6.0 * static_cast<double>(model.layer_params()) +
                             attention_core_flops_per_token(model, training.seq_length);
  struct ExtraSite;  // this call's buffer, in the thread's evaluation context
  std::vector<double>& extra = EvalContext::current().buffer<ExtraSite, std::vector<double>>();
  extra.assign(static_cast<size_t>(pp), 0.0);
  extra.back() += 6.0 * static_cast<double>(model.vocab_size) * h / layer_flops;
  const bool balanced = model.num_layers % pp != 0 || training.balance_pipeline_stages;
  const std::vector<int64_t> layers = assign_layers(model.num_layers, pp, balanced, extra);

  w.stages.resize(static_cast<size_t>(pp));
  int64_t first = 0;
  for (int64_t i = 0; i < pp; ++i) {
    StageInfo& st = w.stages[static_cast<size_t>(i)];
    st.first_layer = first;
    st.num_layers = layers[static_cast<size_t>(i)];
    st.num_moe_layers = model.moe.moe_layers_in(first, first + st.num_layers);
    first += st.num_layers;
    st.has_embedding = i == 0;
    st.has_lm_head = i == pp - 1;
    const double dense = static_cast<double>(st.num_layers - st.num_moe_layers);
    const double moe_layers = static_cast<double>(st.num_moe_layers);
    st.expert_params = w.moe_expert_params * moe_layers;
    st.params = w.layer_params * dense + w.moe_layer_params * moe_layers +
                (st.has_embedding ? w.embedding_params : 0.0) +
                (st.has_lm_head ? w.lm_head_params : 0.0);
    st.chunks_in_flight = chunks_in_flight(i, pp, par.vpp, w.num_microbatches);
  }
}

}  // namespace

void build_workload_layout(const ModelSpec& model, const TrainingSpec& training,
                           const NetworkSpec& network, const ParallelConfig& par, Workload& w) {
  build_layout_frame(model, training, network, par, w);
  set_layout_knobs(model, par, w);
}

bool same_layout_frame(const ParallelConfig& a, const ParallelConfig& b) {
  ParallelConfig k = b;
  k.zero_stage = a.zero_stage;
  k.recompute = a.recompute;
  k.recompute_method = a.recompute_method;
  k.recompute_layers = a.recompute_layers;
  k.offload_layers = a.offload_layers;
  return k == a;
}

void set_layout_knobs(const ModelSpec& model, const ParallelConfig& par, Workload& w) {
  w.par = par;
  const StageInfo* prev = nullptr;
  for (StageInfo& st : w.stages) {
    st.optimizer_params =
        prev && prev->params == st.params && prev->expert_params == st.expert_params
            ? prev->optimizer_params
            : optimizer_shard_params(w, st);
    // Layers replaying their forward: every layer, or under block recompute the first
    // recompute_layers of each chunk (counted layer by layer: MoE layers fall where they do).
    // Dense layers only: a stage of as many layers as the one before replays as many.
    if (prev && !model.moe.enabled() && prev->num_layers == st.num_layers) {
      st.recompute_dense = prev->recompute_dense;
      st.recompute_moe = prev->recompute_moe;
    } else {
      st.recompute_dense = st.recompute_moe = 0;
      for (int64_t c = 0; c < (par.recompute == Recompute::None ? 0 : par.vpp); ++c) {
        const ChunkLayers L = chunk_layers_of(model, par, st, c);
        st.recompute_dense += L.dense_rc;
        st.recompute_moe += L.moe_rc;
      }
    }
    prev = &st;
  }
}

TemplateFlops template_flops(const Workload& w) {
  auto sum = [](const std::vector<Op>& ops) {
    double f = 0;
    for (const Op& op : ops) f += op.flops;
    return f;
  };
  auto pass = [&](const OpTemplate& t) { return sum(t.forward) + sum(t.backward); };
  return {pass(w.layer),     pass(w.moe_layer), sum(w.layer.recompute), sum(w.moe_layer.recompute),
          pass(w.embedding), pass(w.lm_head)};
}

double step_flops(const Workload& w, const TemplateFlops& t, bool with_recompute) {
  double per_mb = 0;
  for (const StageInfo& st : w.stages) {
    per_mb += t.layer * static_cast<double>(st.num_layers - st.num_moe_layers) +
              t.moe_layer * static_cast<double>(st.num_moe_layers);
    if (with_recompute)
      per_mb += t.layer_recompute * static_cast<double>(st.recompute_dense) +
                t.moe_recompute * static_cast<double>(st.recompute_moe);
    if (st.has_embedding) per_mb += t.embedding;
    if (st.has_lm_head) per_mb += t.lm_head;
  }
  // Each stage's ops are per GPU; tp*cp GPUs share one stage of one micro-batch and dp
  // replicas run their own micro-batches.
  const double gpus_per_stage = static_cast<double>(w.par.tp) * w.par.cp;
  return per_mb * gpus_per_stage * static_cast<double>(w.num_microbatches) * w.par.dp;
}

double workload_step_flops(const Workload& w, bool with_recompute) {
  return step_flops(w, template_flops(w), with_recompute);
}

}  // namespace rapid
