#include "rapid/inference/step_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "iteration_dims.hpp"
#include "rapid/cost/decode_attention.hpp"
#include "rapid/workload/layer_graph.hpp"

namespace rapid {

namespace {

/// Element bytes of activations (bf16/fp16 engines keep activations in 16 bits).
constexpr double kActBytes = 2.0;

/// What one stage's ops add up to.
struct Accum {
  double gemm = 0, attention = 0, memory = 0, tp = 0, ep = 0;
  int64_t kernels = 0;
  double gpu() const { return gemm + attention + memory + tp + ep; }
  /// Adds n layers of `o`.
  void add(const Accum& o, int64_t n) {
    gemm += n * o.gemm;
    attention += n * o.attention;
    memory += n * o.memory;
    tp += n * o.tp;
    ep += n * o.ep;
    kernels += n * o.kernels;
  }
};

}  // namespace

struct StepModel::Impl {
  /// The batch's shape: what the graph's ops depend on, all but the decode cache length.
  using Shape = std::array<int64_t, 7>;

  HardwareSpec hw;
  ServingStack stack;
  ParallelConfig par;
  int64_t gpus_per_node = 8;
  int64_t hidden_size = 0;
  bool moe = false;
  AttentionImpl kernel = AttentionImpl::FA2;
  ComputeCost compute;
  CollectiveCost collectives;
  GroupShape tp_group, ep_group, pp_group;
  std::vector<int64_t> stage_layers;  // layers per pipeline stage
  std::vector<int64_t> stage_moe;     // MoE layers per pipeline stage
  LayerDims dims;                     // the layer graph's shapes; the batch set per time()
  // The graph of the last batch shape (refresh()).
  OpTemplate ops, embedding, head;
  std::array<Accum, 2> shape_layers{};  // a dense and an MoE layer but their decode attention
  Shape built_shape{};
  bool built = false;

  Impl(const ModelSpec& m, const HardwareSpec& h, const NetworkSpec& net, const ServingSpec& s,
       const ParallelConfig& p, AttentionImpl k)
      : hw(h),
        stack(s.stack),
        par(p),
        gpus_per_node(net.gpus_per_node),
        hidden_size(m.hidden_size),
        moe(m.moe.enabled()),
        kernel(k),
        compute(h, s.dtype == DType::FP8 ? DType::BF16 : s.dtype, k),
        collectives(h, net),
        dims(detail::serving_layer_dims(m, s, p)) {
    // A replica's stages sit tp GPUs apart (a replica takes tp x pp consecutive GPUs); its
    // groups are those of its GPUs (group_shape's worst group among them).
    const int64_t replica = std::max<int64_t>(p.tp * p.pp, p.ep);
    tp_group = group_shape(p.tp, 1, net.gpus_per_node, replica);
    ep_group = group_shape(p.ep, 1, net.gpus_per_node, replica);
    pp_group = group_shape(p.pp, p.tp, net.gpus_per_node, replica);
    // Layers split as evenly as possible, the first stages taking the remainder (vLLM
    // get_pp_indices without a partition override).
    int64_t first = 0;
    for (int64_t st = 0; st < p.pp; ++st) {
      const int64_t n = chunk_layers(m.num_layers, p.pp, st);  // the workload's even split
      stage_layers.push_back(n);
      stage_moe.push_back(m.moe.moe_layers_in(first, first + n));
      first += n;
    }
  }

  /// A TP all-reduce of `bytes`: the stack's NVLink kernel below its size limit inside a
  /// node, else NCCL. One-shot below the stack's switch size for the TP (always at TP 2):
  /// every GPU reads its peers' buffers, (tp - 1) x bytes in, behind one barrier. Two-shot
  /// from it: a reduce-scatter then an all-gather, 2 (tp - 1) / tp x bytes, each phase
  /// behind its barrier (vLLM csrc/custom_all_reduce.cuh; TensorRT-LLM
  /// AllreducePlugin::selectImplementation; docs/inference.md "Serving stacks").
  double all_reduce(double bytes) const {
    if (stack.custom_all_reduce && bytes <= stack.custom_all_reduce_max_bytes &&
        par.tp <= gpus_per_node) {
      const double nv = hw.nvlink_bandwidth_Bps * hw.nvlink_efficiency;
      const double tp = static_cast<double>(par.tp);
      const double switch_bytes = par.tp <= 2   ? std::numeric_limits<double>::infinity()
                                  : par.tp <= 4 ? stack.custom_all_reduce_one_shot_max_tp4_bytes
                                                : stack.custom_all_reduce_one_shot_max_tp8_bytes;
      const double L = stack.custom_all_reduce_latency_s;
      return bytes < switch_bytes ? L + (tp - 1) * bytes / nv
                                  : 2 * L + 2 * (tp - 1) / tp * bytes / nv;
    }
    return collectives.time(CollectiveKind::AllReduce, bytes, tp_group);
  }

  /// A layer-graph collective: TP by the all-reduce rule above or the collective model, EP
  /// all-to-alls by the collective model; none on a group of one.
  void add_collective(Accum& a, const Op& op) const {
    if (op.group == CommGroup::TP && par.tp > 1) {
      a.tp += op.collective == CollectiveKind::AllReduce
                  ? all_reduce(op.bytes)
                  : collectives.time(op.collective, op.bytes, tp_group);
      ++a.kernels;
    } else if (op.group == CommGroup::EP && par.ep > 1) {
      a.ep += collectives.time(op.collective, op.bytes, ep_group);
      ++a.kernels;
    }
  }

  /// Times the forward ops of `list` into `a`, by class. The decode attention, which alone
  /// depends on the cache length, is left to layers().
  void add_forward(Accum& a, const std::vector<Op>& list) const {
    for (const Op& op : list) {
      switch (op.kind) {
        case OpKind::Gemm:
          a.gemm += compute.time(op);
          break;
        case OpKind::Attention:
          a.attention += compute.time(op);
          break;
        case OpKind::DecodeAttention:
          continue;
        case OpKind::MemoryBound:
          a.memory += compute.time(op);
          break;
        case OpKind::Collective:
        case OpKind::P2P:
          add_collective(a, op);
          continue;
      }
      ++a.kernels;
    }
  }

  Shape shape() const {
    return {dims.T,           dims.b,          dims.s, dims.flash_kv, dims.flash_causal ? 1 : 0,
            dims.decode_seqs, dims.head_tokens};
  }

  /// Rebuilds the graph when the batch's shape changed: one layer of each kind (dense,
  /// MoE) timed once for all stages, and the embedding's and LM head's ops. Iterations of
  /// one shape (decode steps of a steady batch) differ only in the decode attention.
  void refresh() {
    const Shape now = shape();
    if (built && now == built_shape) return;
    shape_layers = {};
    build_dense_layer(dims, Recompute::None, ops);
    add_forward(shape_layers[0], ops.forward);
    if (moe) {
      build_moe_layer(dims, Recompute::None, ops);
      add_forward(shape_layers[1], ops.forward);
    }
    build_embedding(dims, embedding);
    build_lm_head(dims, head);
    built_shape = now;
    built = true;
  }

  /// The layers of the iteration: the shape's, plus each layer's decode attention (the last
  /// attention op of a layer: the sums keep the graph's order).
  std::array<Accum, 2> layers() const {
    std::array<Accum, 2> l = shape_layers;
    if (dims.decode_seqs > 0) {
      const double decode = decode_attention_time(hw, decode_attention_op(dims),
                                                  hw.attention_kernel_efficiency(kernel).forward)
                                .time_s;
      for (Accum& a : l) {
        a.attention += decode;
        a.kernels += 2;  // split-KV and its reduction
      }
    }
    return l;
  }

  Accum stage(int64_t st, const std::array<Accum, 2>& layer) const {
    Accum a;
    if (st == 0) add_forward(a, embedding.forward);  // the embedding and its all-reduce
    // Layers of one kind cost the same: one's time, multiplied.
    for (int kind = 0; kind < 2; ++kind) {
      const int64_t n = kind == 0 ? stage_layers[st] - stage_moe[st] : stage_moe[st];
      if (n > 0) a.add(layer[kind], n);
    }
    if (st == par.pp - 1) add_forward(a, head.forward);  // final norm, LM head, sampling
    return a;
  }
};

StepModel::StepModel(const ModelSpec& model, const HardwareSpec& hw, const NetworkSpec& net,
                     const ServingSpec& serving, const ParallelConfig& par) {
  // The stack's first attention kernel the GPU has (as the training stacks pick theirs).
  const std::vector<AttentionImpl> available = hw.attention_kernels();
  AttentionImpl k = AttentionImpl::FA2;
  for (AttentionImpl want : serving.stack.attention)
    if (std::find(available.begin(), available.end(), want) != available.end()) {
      k = want;
      break;
    }
  impl_ = std::make_unique<Impl>(model, hw, net, serving, par, k);
}

StepModel::~StepModel() = default;
StepModel::StepModel(StepModel&&) noexcept = default;

AttentionImpl StepModel::attention_kernel() const {
  return impl_->kernel;
}

StepTime StepModel::time(const StepBatch& b) const {
  Impl& m = *impl_;
  StepTime t;
  if (b.tokens() <= 0) return t;
  detail::set_iteration(m.dims, b);
  m.refresh();
  const bool graph =
      m.stack.cuda_graphs && b.prefill_tokens == 0 && b.decode_seqs <= m.stack.cuda_graph_max_batch;
  // Hand-off to the next stage: the hidden states of the iteration's tokens.
  const double p2p = m.par.pp > 1
                         ? m.collectives.time(CollectiveKind::SendRecv,
                                              b.tokens() * m.hidden_size * kActBytes, m.pp_group)
                         : 0.0;
  // The host's per-iteration work: a fixed part and a part per running sequence.
  const double host =
      m.stack.host_overhead_per_step_s +
      m.stack.host_overhead_per_seq_s * static_cast<double>(b.decode_seqs + b.prefill_seqs);
  t.total_s = host;
  const std::array<Accum, 2> layers = m.layers();
  for (int64_t st = 0; st < m.par.pp; ++st) {
    const Accum a = m.stage(st, layers);
    // Every kernel leaves the GPU idle for its scheduling gap (graph_launch: the gap
    // between kernels of a replayed graph, the same between queued eager kernels). Eager,
    // the host also issues each kernel while the GPU runs earlier ones: the stage takes the
    // longer of the GPU's time and the host's issue time (docs/inference.md "Host").
    const double gpu = a.gpu();
    const double kernels = static_cast<double>(a.kernels);
    const double on_gpu = gpu + kernels * m.stack.graph_launch_s;
    const double busy = graph ? on_gpu : std::max(on_gpu, kernels * m.stack.eager_launch_s);
    const double hand = st + 1 < m.par.pp ? p2p : 0.0;
    t.total_s += busy + hand;
    const double stage_s = busy + hand + (st == 0 ? host : 0.0);
    if (stage_s >= t.stage_s) {
      t.stage_s = stage_s;
      t.gemm_s = a.gemm;
      t.attention_s = a.attention;
      t.memory_bound_s = a.memory;
      t.tp_comm_s = a.tp;
      t.ep_comm_s = a.ep;
      t.pp_comm_s = hand;
      t.host_s = (busy - gpu) + (st == 0 ? host : 0.0);
      t.kernels = a.kernels;
    }
  }
  return t;
}

}  // namespace rapid
