#include "rapid/trace/rank_trace.hpp"

#include <algorithm>
#include <cmath>

#include "rapid/common/error.hpp"

namespace rapid::trace {

namespace {

bool is_comm(const Op& op) {
  return op.kind == OpKind::Collective || op.kind == OpKind::P2P;
}

/// et_def.proto CollectiveCommType of our collective kinds.
int64_t comm_type_of(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce:
      return static_cast<int64_t>(CommType::AllReduce);
    case CollectiveKind::AllGather:
      return static_cast<int64_t>(CommType::AllGather);
    case CollectiveKind::ReduceScatter:
      return static_cast<int64_t>(CommType::ReduceScatter);
    case CollectiveKind::AllToAll:
      return static_cast<int64_t>(CommType::AllToAll);
    default:
      break;
  }
  RAPID_ASSERT(false, "no Chakra collective type for this kind");
  return 0;
}

uint64_t micros(double seconds) {
  return static_cast<uint64_t>(std::llround(seconds * 1e6));
}
int64_t rounded(double v) {
  return static_cast<int64_t>(std::llround(v));
}

/// A compute node's `num_ops` and `tensor_size` as ASTRA-sim's roofline reads them: time =
/// num_ops / min(peak, bandwidth x num_ops / tensor_size) (feeder_v3 Workload::issue_comp;
/// docs/chakra.md "COMP nodes"). Both stay >= 1 (num_ops 0 makes that time 0/0). A node
/// with few FLOPs per byte (elementwise ops, the optimizer step: no FLOPs counted) carries
/// one operation per 2-byte element it touches: 0.5 FLOP/B sits far below every GPU's ridge
/// point (H100: 989 TFLOP/s / 3.35 TB/s = 295 FLOP/B), so its roofline time stays
/// tensor_size / bandwidth, the memory-bound time it has in our model.
void set_roofline_counts(TraceNode& n, double flops, double bytes) {
  const int64_t size = std::max<int64_t>(1, rounded(bytes));
  n.tensor_size = static_cast<uint64_t>(size);
  n.num_ops = std::max<int64_t>({1, rounded(flops), (size + 1) / 2});
}

RapidGroup rapid_group(const GroupShape& g) {
  return {g.size, g.per_node, g.nodes, g.stride};
}

/// The op lists a template kind runs (the DES's: forward; recompute then backward; the
/// *Plain kinds backward alone).
void template_ops(const Workload& w, des::TemplateKind kind, std::vector<const Op*>& out) {
  out.clear();
  const OpTemplate* tt[] = {&w.layer, &w.moe_layer, &w.embedding, &w.lm_head};
  const auto k = static_cast<int>(kind);
  auto add = [&](const std::vector<Op>& v) {
    for (const Op& op : v) out.push_back(&op);
  };
  if (k >= static_cast<int>(des::TemplateKind::DenseBPlain)) {
    add(tt[k - static_cast<int>(des::TemplateKind::DenseBPlain)]->backward);
  } else if (k % 2 == 0) {
    add(tt[k / 2]->forward);
  } else {
    add(tt[k / 2]->recompute);
    add(tt[k / 2]->backward);
  }
}

}  // namespace

/// Where the compute stream stands: the nodes the next op depends on.
struct RankTraceBuilder::Cursor {
  std::vector<uint64_t> deps;
};

RankTraceBuilder::RankTraceBuilder(const TraceInputs& in) : in_(in) {
  const Workload& w = *in.workload;
  tpcp_ = int64_t{w.par.tp} * w.par.cp;
  dp_ = w.par.dp;
  pp_ = w.par.pp;
  vpp_ = w.par.vpp;
  world_ = tpcp_ * dp_ * pp_;
  programs_.resize(static_cast<size_t>(pp_));
  for (int64_t s = 0; s < pp_; ++s)
    des::build_stage_program(w, *in.model, *in.training, s, programs_[static_cast<size_t>(s)]);
}

uint64_t RankTraceBuilder::push(TraceNode&& n) {
  n.id = out_->size();
  out_->push_back(std::move(n));
  return out_->back().id;
}

uint64_t RankTraceBuilder::emit_compute(const Op& op, std::vector<uint64_t> deps) {
  TraceNode n;
  n.name = op.name;
  n.type = NodeType::Comp;
  n.data_deps = std::move(deps);
  n.duration_micros = micros(in_.compute->time(op) / in_.step_efficiency);
  set_roofline_counts(n, op.flops, op.bytes);
  RapidOp r;
  r.kind = static_cast<RapidOpKind>(op.kind);  // Gemm 0, Attention 1, MemoryBound 2
  r.m = op.m, r.n = op.n, r.k = op.k, r.batch = op.batch;
  r.causal = op.causal, r.fp8 = op.fp8, r.gqa_group = op.gqa_group;
  r.flops = op.flops, r.bytes = op.bytes;
  n.rapid_op = r;
  return push(std::move(n));
}

uint64_t RankTraceBuilder::emit_collective(const char* name, CollectiveKind kind, CommGroup group,
                                           double bytes, std::vector<uint64_t> deps,
                                           std::vector<uint64_t> ctrl) {
  const GroupShape& g = in_.workload->group(group);
  TraceNode n;
  n.name = name;
  n.type = NodeType::CommColl;
  n.data_deps = std::move(deps);
  n.ctrl_deps = std::move(ctrl);
  n.duration_micros = micros(in_.collective->time(kind, bytes, g));
  n.comm_type = comm_type_of(kind);
  // Our sizes are nccl-tests' (an all-gather's gathered output); ASTRA-sim's all-gather
  // takes each rank's input and multiplies it by the group (Ring.cc: final_data_size =
  // data_size x nodes_in_ring), as Chakra's PyTorch converter records it (the kernel's
  // input tensors). Reduce-scatter, all-reduce and all-to-all take the whole buffer on both
  // sides (docs/chakra.md "Collective sizes").
  n.comm_size =
      rounded(kind == CollectiveKind::AllGather ? bytes / static_cast<double>(g.size) : bytes);
  n.rapid_bytes = bytes;
  n.pg_name = std::to_string(groups_->add(group, rank_, g, world_));
  n.involved_dim = {g.per_node > 1, g.nodes > 1};
  n.rapid_group = rapid_group(g);
  return push(std::move(n));
}

uint64_t RankTraceBuilder::emit_p2p(NodeType type, const char* name, int64_t peer, int32_t tag,
                                    double bytes, const GroupShape& g, std::vector<uint64_t> deps) {
  TraceNode n;
  n.name = name;
  n.type = type;
  n.data_deps = std::move(deps);
  n.duration_micros = micros(in_.collective->time(CollectiveKind::SendRecv, bytes, g));
  const bool send = type == NodeType::CommSend;
  n.comm_src = static_cast<int32_t>(send ? rank_ : peer);
  n.comm_dst = static_cast<int32_t>(send ? peer : rank_);
  n.comm_tag = tag;
  n.comm_size = rounded(bytes);
  n.rapid_bytes = bytes;
  n.rapid_group = rapid_group(g);
  return push(std::move(n));
}

// The DES's shape of a pipeline transfer (sim_setup.cpp make_p2p_desc): the PP group's,
// or a pair on one node / on two nodes where the two GPUs are placed otherwise.
GroupShape RankTraceBuilder::pipeline_shape(int64_t peer) const {
  GroupShape g = in_.workload->group(CommGroup::PP);
  const bool same_node = rank_ / in_.gpus_per_node == peer / in_.gpus_per_node;
  if (same_node != (g.per_node > 1)) g = GroupShape{2, same_node ? 2 : 1, same_node ? 1 : 2, 1};
  return g;
}

void RankTraceBuilder::emit_ops(const std::vector<const Op*>& ops, Cursor& c) {
  const int n = static_cast<int>(ops.size());
  std::vector<uint64_t> held;          // collectives pipelined with the next compute op
  std::vector<uint64_t> compute_deps;  // what the last compute op depended on
  for (int i = 0; i < n; ++i) {
    const Op& op = *ops[static_cast<size_t>(i)];
    if (!is_comm(op)) {
      compute_deps = c.deps;
      const uint64_t id = emit_compute(op, c.deps);
      c.deps = {id};
      c.deps.insert(c.deps.end(), held.begin(), held.end());
      held.clear();
      continue;
    }
    const int j = i + op.overlap;
    const bool paired =
        op.overlap != 0 && j >= 0 && j < n && !is_comm(*ops[static_cast<size_t>(j)]);
    const std::vector<uint64_t> deps = paired && j < i ? compute_deps : c.deps;
    std::vector<uint64_t> ids;
    if (op.kind == OpKind::P2P) {  // inside a group (CP ring attention): to the next member
      const GroupShape& g = in_.workload->group(op.group);
      const int64_t base = group_base(rank_, g), pos = (rank_ - base) / g.stride;
      const int64_t next = base + ((pos + 1) % g.size) * g.stride;
      const int64_t prev = base + ((pos + g.size - 1) % g.size) * g.stride;
      const int32_t tag = (1 << 30) + template_p2p_++;
      ids.push_back(emit_p2p(NodeType::CommSend, op.name, next, tag, op.bytes, g, deps));
      ids.push_back(emit_p2p(NodeType::CommRecv, op.name, prev, tag, op.bytes, g, deps));
    } else {
      ids.push_back(emit_collective(op.name, op.collective, op.group, op.bytes, deps, {}));
    }
    if (paired && j > i) {
      held.insert(held.end(), ids.begin(), ids.end());
    } else if (paired) {
      c.deps.insert(c.deps.end(), ids.begin(), ids.end());
    } else {
      c.deps = ids;
    }
  }
  c.deps.insert(c.deps.end(), held.begin(), held.end());  // a pipelined op without its partner
}

void RankTraceBuilder::build(int64_t rank, std::vector<TraceNode>& out, ProcessGroups& groups) {
  RAPID_ASSERT(rank >= 0 && rank < world_, "rank out of range");
  out.clear();
  out_ = &out;
  groups_ = &groups;
  rank_ = rank;
  template_p2p_ = 0;
  const Workload& w = *in_.workload;
  const int64_t stage = rank / (tpcp_ * dp_);
  const des::StageProgram& sp = programs_[static_cast<size_t>(stage)];
  const int64_t stage_stride = tpcp_ * dp_;  // ranks between a GPU and its next stage's

  std::vector<int64_t> dp_node(sp.dp_ops.size(), -1);
  int64_t last_on_stream[2] = {-1, -1};  // parameter gathers, gradient reductions
  Cursor c;
  auto post = [&](int32_t k, const std::vector<uint64_t>& at) {
    const des::DpOpSpec& d = sp.dp_ops[static_cast<size_t>(k)];
    std::vector<uint64_t> ctrl = at;
    int64_t& prev = last_on_stream[d.grad ? 1 : 0];
    if (prev >= 0) ctrl.push_back(static_cast<uint64_t>(prev));
    const char* name = d.grad ? "dp_grad_reduce" : "dp_param_gather";
    dp_node[static_cast<size_t>(k)] = prev =
        static_cast<int64_t>(emit_collective(name, d.kind, d.group, d.bytes, {}, std::move(ctrl)));
  };
  auto gate = [&](int32_t k) {
    RAPID_ASSERT(dp_node[static_cast<size_t>(k)] >= 0, "a gate before its post");
    c.deps.push_back(static_cast<uint64_t>(dp_node[static_cast<size_t>(k)]));
  };
  for (int32_t k = 0; k < sp.start_posts; ++k) post(k, {});

  std::vector<uint64_t> sends;  // the previous pass's
  std::vector<const Op*> ops;
  for (size_t p = 0; p < sp.passes.size(); ++p) {
    const PassRef& pr = sp.passes[p];
    const bool fwd = pr.dir == PassDir::Forward;
    // The input: from the previous stage (forward) or the next (backward); interleaved, the
    // first stage's chunk c > 0 from the last stage's chunk c - 1 (and back).
    const bool input = fwd ? (stage > 0 || pr.chunk > 0) : (stage < pp_ - 1 || pr.chunk < vpp_ - 1);
    std::vector<uint64_t> start = c.deps;
    start.insert(start.end(), sends.begin(), sends.end());
    if (input) {
      const int64_t from =
          fwd ? (stage > 0 ? stage - 1 : pp_ - 1) : (stage < pp_ - 1 ? stage + 1 : 0);
      const int64_t peer = rank + (from - stage) * stage_stride;
      const int32_t tag = static_cast<int32_t>(2 * (pr.mb * vpp_ + pr.chunk) + (fwd ? 0 : 1));
      start.push_back(emit_p2p(NodeType::CommRecv, fwd ? "recv_forward" : "recv_backward", peer,
                               tag, w.p2p.bytes, pipeline_shape(peer), c.deps));
    }
    c.deps = std::move(start);
    sends.clear();
    const int32_t n = sp.num_owners(pr.chunk);
    const auto [seg_begin, seg_end] = sp.segment_range(pr.chunk, pr.dir);
    int32_t hook = sp.hook_begin[p];
    const int32_t hook_end = sp.hook_begin[p + 1];
    int32_t seg = seg_begin;
    for (int32_t pos = 0; pos <= n; ++pos) {
      for (; hook < hook_end && sp.hooks[static_cast<size_t>(hook)].boundary == pos; ++hook) {
        const des::Hook& h = sp.hooks[static_cast<size_t>(hook)];
        if (h.gate)
          gate(h.dp_op);
        else
          post(h.dp_op, c.deps);
      }
      if (pos == n) break;
      while (seg < seg_end && sp.segments[static_cast<size_t>(seg)].first_pos +
                                      sp.segments[static_cast<size_t>(seg)].count <=
                                  pos)
        ++seg;
      template_ops(w, sp.segments[static_cast<size_t>(seg)].tmpl, ops);
      emit_ops(ops, c);
    }
    // The output, to the consumer of this pass (des/sim_comm.cpp send()).
    int64_t to = -1;
    PassRef msg = pr;
    if (fwd && stage + 1 < pp_) {
      to = stage + 1;
    } else if (fwd && pr.chunk + 1 < vpp_) {
      to = 0, msg.chunk = pr.chunk + 1;
    } else if (!fwd && stage > 0) {
      to = stage - 1;
    } else if (!fwd && pr.chunk > 0) {
      to = pp_ - 1, msg.chunk = pr.chunk - 1;
    }
    if (to >= 0) {
      const int64_t peer = rank + (to - stage) * stage_stride;
      const int32_t tag = static_cast<int32_t>(2 * (msg.mb * vpp_ + msg.chunk) + (fwd ? 0 : 1));
      sends.push_back(emit_p2p(NodeType::CommSend, fwd ? "send_forward" : "send_backward", peer,
                               tag, w.p2p.bytes, pipeline_shape(peer), c.deps));
    }
  }
  // The last pass's sends are not waited for (the DES goes to the tail gate at once).
  if (sp.tail_gate >= 0) gate(sp.tail_gate);
  TraceNode opt;
  opt.name = "optimizer_step";
  opt.type = NodeType::Comp;
  opt.data_deps = c.deps;
  opt.duration_micros = micros(in_.compute->memory_time(sp.optimizer_bytes));
  set_roofline_counts(opt, 0.0, sp.optimizer_bytes);
  RapidOp r;
  r.kind = RapidOpKind::Optimizer;
  r.bytes = sp.optimizer_bytes;
  opt.rapid_op = r;
  const uint64_t opt_id = push(std::move(opt));
  for (size_t k = static_cast<size_t>(sp.end_posts_begin); k < sp.dp_ops.size(); ++k)
    post(static_cast<int32_t>(k), {opt_id});
  out_ = nullptr;
  groups_ = nullptr;
}

}  // namespace rapid::trace
