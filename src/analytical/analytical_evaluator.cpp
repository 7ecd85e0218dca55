#include "rapid/analytical/analytical_evaluator.hpp"

#include <algorithm>

#include "rapid/analytical/data_parallel.hpp"
#include "rapid/workload/model_flops.hpp"

namespace rapid {

AnalyticalEvaluator::AnalyticalEvaluator(const ModelSpec& model, const TrainingSpec& training,
                                         const HardwareSpec& hw, const NetworkSpec& net)
    : model_(model),
      training_(training),
      hw_(stack_hardware(hw, training)),
      compute_(hw_, training.dtype, attention_kernel(hw, training)),
      collective_(hw_, net),
      model_flops_per_token_(model_flops_per_token(model, training.seq_length)),
      step_efficiency_(hw_.step_efficiency * training.compute_efficiency) {}

AnalyticalEvaluator::PassTime AnalyticalEvaluator::pass_time(const std::vector<Op>& ops,
                                                             const Workload& w) const {
  PassTime t;
  const size_t n = ops.size();
  t.ops = static_cast<double>(n);
  auto compute_time = [&](const Op& op) { return compute_.time(op) / step_efficiency_; };
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind != OpKind::Collective && op.kind != OpKind::P2P) {
      t.compute += compute_time(op);
      continue;
    }
    double comm = collective_.time(op.collective, op.bytes, w.group(op.group));
    // Communication pipelined with a neighbouring kernel (TP overlap: Megatron-Core
    // --tp-comm-overlap with Transformer Engine userbuffers; CP ring attention) is exposed
    // only for the part that outlasts that kernel.
    const size_t j = i + static_cast<size_t>(op.overlap);
    if (op.overlap != 0 && j < n && ops[j].kind != OpKind::Collective && ops[j].kind != OpKind::P2P)
      comm = std::max(0.0, comm - compute_time(ops[j]));
    t.comm += comm;
  }
  return t;
}

namespace {

struct StageTime {
  double fwd = 0, bwd = 0;       // one micro-batch, compute + exposed TP comm (+ host wait)
  double compute = 0, comm = 0;  // one micro-batch, split
  double host = 0;               // one micro-batch, GPU idle waiting for the host
  double p2p = 0;                // one micro-batch, all virtual stages, both directions
  double dp_per_mb = 0;          // ZeRO-2/3 traffic per micro-batch (exposed part)
  double total() const { return fwd + bwd + p2p + dp_per_mb; }
};

}  // namespace

void AnalyticalEvaluator::fill_rates(const Workload& w, double step_s, EvalResult& r) const {
  const double gpus = static_cast<double>(w.par.num_gpus());
  const double tokens = static_cast<double>(w.tokens_per_step());
  r.step_time_s = step_s;
  r.tokens_per_s = tokens / step_s;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  const double peak = compute_.peak_FLOPs() * gpus * step_s;
  r.mfu = model_flops_per_token_ * tokens / peak;
  // HFU adds the recomputed forward work to the model FLOPs (Chowdhery et al. 2022, App. B).
  const double recompute_flops = workload_step_flops(w, true) - workload_step_flops(w, false);
  r.hfu = (model_flops_per_token_ * tokens + recompute_flops) / peak;
}

void AnalyticalEvaluator::evaluate(const Workload& w, EvalResult& r) const {
  const ParallelConfig& par = w.par;
  const double m = static_cast<double>(w.num_microbatches);

  const PassTime lf = pass_time(w.layer.forward, w), lb = pass_time(w.layer.backward, w);
  const PassTime lr = pass_time(w.layer.recompute, w);
  const PassTime mf = pass_time(w.moe_layer.forward, w), mb = pass_time(w.moe_layer.backward, w);
  const PassTime mr = pass_time(w.moe_layer.recompute, w);
  const PassTime ef = pass_time(w.embedding.forward, w), eb = pass_time(w.embedding.backward, w);
  const PassTime hf = pass_time(w.lm_head.forward, w), hb = pass_time(w.lm_head.backward, w);
  const double p2p_one =
      collective_.time(CollectiveKind::SendRecv, w.p2p.bytes, w.group(CommGroup::PP));

  double t_max = -1, t_sum = 0, dp_total = 0, dp_exposed_max = 0, optimizer_max = 0;
  StageTime c;  // the critical (slowest) stage
  for (const StageInfo& st : w.stages) {
    StageTime s;
    const double dense = static_cast<double>(st.num_layers - st.num_moe_layers);
    const double moe = static_cast<double>(st.num_moe_layers);
    PassTime fwd, bwd;
    fwd.add(lf, dense).add(mf, moe);
    bwd.add(lb, dense).add(lr, static_cast<double>(st.recompute_dense)).add(mb, moe);
    bwd.add(mr, static_cast<double>(st.recompute_moe));
    if (st.has_embedding) fwd.add(ef), bwd.add(eb);
    if (st.has_lm_head) fwd.add(hf), bwd.add(hb);
    // The host issues ops one by one (Python + launch); when a pass's GPU work is shorter
    // than its issue time, the GPU waits (launch-bound small micro-batches).
    const double host_op = training_.host_overhead_per_op_s;
    s.fwd = std::max(fwd.total(), fwd.ops * host_op);
    s.bwd = std::max(bwd.total(), bwd.ops * host_op);
    s.compute = fwd.compute + bwd.compute;
    s.comm = fwd.comm + bwd.comm;
    s.host = std::max(0.0, s.fwd + s.bwd - fwd.total() - bwd.total());
    if (par.pp > 1) s.p2p = 2.0 * par.vpp * p2p_one;

    // Gradients and weights: dense ones over data x context parallel, routed experts over
    // the expert data-parallel group.
    DpTime sync;
    const double groups[2][2] = {
        {st.params - st.expert_params, static_cast<double>(CommGroup::DPCP)},
        {st.expert_params, static_cast<double>(CommGroup::EDP)}};
    for (const auto& [params, group] : groups) {
      if (params <= 0) continue;
      const DpTraffic traffic =
          dp_traffic(params, par.zero_stage, training_.grad_reduce_bytes, 2.0);
      const double last_bucket = std::min(
          1.0, training_.grad_bucket_bytes / std::max(params * training_.grad_reduce_bytes, 1.0));
      const DpTime d =
          dp_time(traffic, w.group(static_cast<CommGroup>(group)), collective_, s.fwd, s.bwd,
                  last_bucket, training_.overlap_grad_reduce, training_.overlap_param_gather);
      sync.step_total += d.step_total;
      sync.step_exposed += d.step_exposed;
      sync.mb_total += d.mb_total;
      sync.mb_exposed += d.mb_exposed;
    }
    s.dp_per_mb = sync.mb_exposed;
    dp_total = std::max(dp_total, sync.step_total + m * sync.mb_total);
    dp_exposed_max = std::max(dp_exposed_max, sync.step_exposed);

    // Adam over the local optimizer shard: read master, m, v, grad (16 B), write master,
    // m, v (12 B) and the 16-bit weights (2 B), plus one read of the grads for the norm.
    const double shard = par.zero_stage >= 1
                             ? (st.params - st.expert_params) / w.group(CommGroup::DPCP).size +
                                   st.expert_params / w.group(CommGroup::EDP).size
                             : st.params;
    optimizer_max =
        std::max(optimizer_max, compute_.memory_time(shard * (16.0 + 12.0 + 2.0 + 4.0)));

    const double t = s.total();
    t_sum += t;
    if (t > t_max) {
      t_max = t;
      c = s;
    }
  }
  const double pipeline = m * t_max + (t_sum - t_max) / par.vpp;
  const double step = pipeline + dp_exposed_max + optimizer_max;

  fill_rates(w, step, r);
  r.compute_time_s = m * c.compute;
  r.host_bound_time_s = m * c.host;
  r.tp_comm_time_s = m * c.comm;
  r.pp_comm_time_s = m * c.p2p;
  r.dp_comm_time_s = dp_total;
  r.dp_exposed_time_s = dp_exposed_max + m * c.dp_per_mb;
  r.bubble_time_s = pipeline - m * t_max;
  r.optimizer_time_s = optimizer_max;
  derive_comm_totals(r);
}

}  // namespace rapid
