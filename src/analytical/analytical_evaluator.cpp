#include "rapid/analytical/analytical_evaluator.hpp"

#include <algorithm>

#include "rapid/workload/model_flops.hpp"

namespace rapid {

AnalyticalEvaluator::AnalyticalEvaluator(const ModelSpec& model, const TrainingSpec& training,
                                         const HardwareSpec& hw, const NetworkSpec& net)
    : model_(model),
      training_(training),
      compute_(hw, training.dtype),
      collective_(hw, net),
      model_flops_per_token_(model_flops_per_token(model, training.seq_length)),
      step_efficiency_(hw.step_efficiency * training.framework_efficiency) {}

AnalyticalEvaluator::PassTime AnalyticalEvaluator::pass_time(const std::vector<Op>& ops,
                                                             const Workload& w) const {
  PassTime t;
  const size_t n = ops.size();
  t.ops = static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind != OpKind::Collective && op.kind != OpKind::P2P) {
      t.compute += compute_.time(op) / step_efficiency_;
      continue;
    }
    double comm = collective_.time(op.collective, op.bytes, w.group(op.group));
    // TP communication overlap (Megatron-core --tp-comm-overlap, Transformer Engine
    // userbuffers; Wang et al. 2023): each TP all-gather / reduce-scatter is pipelined with
    // the GEMM it feeds or follows, so only the part longer than that GEMM stays exposed.
    if (training_.tp_comm_overlap && op.group == CommGroup::TP) {
      const Op* gemm = (i + 1 < n && ops[i + 1].kind == OpKind::Gemm) ? &ops[i + 1]
                       : (i > 0 && ops[i - 1].kind == OpKind::Gemm)   ? &ops[i - 1]
                                                                      : nullptr;
      if (gemm) comm = std::max(0.0, comm - compute_.time(*gemm));
    }
    t.comm += comm;
  }
  return t;
}

namespace {

// Communication hidden behind `window` seconds of compute, split in buckets: at least the
// last bucket (fraction `last`) stays exposed.
double exposed(double comm, double window, double last, bool overlap) {
  if (!overlap) return comm;
  return std::max(comm * last, comm - window);
}

struct StageTime {
  double fwd = 0, bwd = 0;       // one micro-batch, compute + exposed TP comm (+ host wait)
  double compute = 0, comm = 0;  // one micro-batch, split
  double host = 0;               // one micro-batch, GPU idle waiting for the host
  double p2p = 0;                // one micro-batch, all virtual stages, both directions
  double dp_per_mb = 0;          // ZeRO-2/3 traffic per micro-batch (exposed part)
  double total() const { return fwd + bwd + p2p + dp_per_mb; }
};

}  // namespace

void AnalyticalEvaluator::evaluate(const Workload& w, EvalResult& r) const {
  const ParallelConfig& par = w.par;
  const double m = static_cast<double>(w.num_microbatches);
  const GroupShape& dp_group = w.group(CommGroup::DP);

  const PassTime lf = pass_time(w.layer.forward, w);
  const PassTime lb = pass_time(w.layer.backward, w);
  const PassTime lr = pass_time(w.layer.recompute, w);
  const PassTime ef = pass_time(w.embedding.forward, w), eb = pass_time(w.embedding.backward, w);
  const PassTime hf = pass_time(w.lm_head.forward, w), hb = pass_time(w.lm_head.backward, w);
  const double p2p_one =
      collective_.time(CollectiveKind::SendRecv, w.p2p.bytes, w.group(CommGroup::PP));

  const double grad_bytes_per_param = training_.grad_reduce_bytes;
  const double param_bytes = 2.0;
  const bool overlap_grad = training_.overlap_grad_reduce;
  const bool overlap_param = training_.overlap_param_gather;

  double t_max = -1, t_sum = 0, dp_total = 0, dp_exposed_max = 0, optimizer_max = 0;
  StageTime c;  // the critical (slowest) stage
  for (const StageInfo& st : w.stages) {
    StageTime s;
    const double L = static_cast<double>(st.num_layers);
    PassTime fwd, bwd;
    fwd.add(lf, L);
    bwd.add(lb, L).add(lr, L);
    if (st.has_embedding) fwd.add(ef), bwd.add(eb);
    if (st.has_lm_head) fwd.add(hf), bwd.add(hb);
    // The host issues ops one by one (Python + launch); when a pass's GPU work is shorter
    // than its issue time, the GPU waits (launch-bound small micro-batches).
    const double host_op = training_.host_overhead_per_op_s;
    s.fwd = std::max(fwd.total(), fwd.ops * host_op);
    s.bwd = std::max(bwd.total(), bwd.ops * host_op);
    s.compute = fwd.compute + bwd.compute;
    s.comm = fwd.comm + bwd.comm;
    s.host = s.fwd + s.bwd - fwd.total() - bwd.total();
    if (par.pp > 1) s.p2p = 2.0 * par.vpp * p2p_one;

    // DP / ZeRO traffic of this stage.
    const double grads = st.params * grad_bytes_per_param;
    const double params = st.params * param_bytes;
    const double last_bucket = std::min(1.0, training_.grad_bucket_bytes / std::max(grads, 1.0));
    double step_comm = 0, step_exposed = 0, per_mb_comm = 0;
    if (par.dp > 1) {
      const double rs = collective_.time(CollectiveKind::ReduceScatter, grads, dp_group);
      const double ag = collective_.time(CollectiveKind::AllGather, params, dp_group);
      switch (par.zero_stage) {
        case 0: {
          double ar = collective_.time(CollectiveKind::AllReduce, grads, dp_group);
          step_comm = ar;
          step_exposed = exposed(ar, s.bwd, last_bucket, overlap_grad);
          break;
        }
        case 1:
          step_comm = rs + ag;
          step_exposed = exposed(rs, s.bwd, last_bucket, overlap_grad) +
                         exposed(ag, s.fwd, last_bucket, overlap_param);
          break;
        case 2:
          per_mb_comm = rs;
          s.dp_per_mb = exposed(rs, s.bwd, last_bucket, overlap_grad);
          step_comm = ag;
          step_exposed = exposed(ag, s.fwd, last_bucket, overlap_param);
          break;
        default:  // 3: gathers in forward and backward, reduce-scatter in backward
          per_mb_comm = 2.0 * ag + rs;
          s.dp_per_mb = exposed(ag, s.fwd, last_bucket, overlap_param) +
                        exposed(ag + rs, s.bwd, last_bucket, overlap_grad && overlap_param);
          break;
      }
    }
    dp_total = std::max(dp_total, step_comm + m * per_mb_comm);
    dp_exposed_max = std::max(dp_exposed_max, step_exposed);

    // Adam over the local optimizer shard: read master, m, v, grad (16 B), write master,
    // m, v (12 B) and the 16-bit weights (2 B), plus one read of the grads for the norm.
    const double shard = st.params / (par.zero_stage >= 1 ? par.dp : 1);
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
  const double gpus = static_cast<double>(par.num_gpus());
  const double tokens = static_cast<double>(w.tokens_per_step());

  r.step_time_s = step;
  r.tokens_per_s = tokens / step;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  const double peak = compute_.peak_FLOPs() * gpus * step;
  r.mfu = model_flops_per_token_ * tokens / peak;
  // HFU adds the recomputed forward work to the model FLOPs (Chowdhery et al. 2022, App. B).
  const double recompute_flops = workload_step_flops(w, true) - workload_step_flops(w, false);
  r.hfu = (model_flops_per_token_ * tokens + recompute_flops) / peak;
  r.compute_time_s = m * c.compute;
  r.host_bound_time_s = m * c.host;
  r.tp_comm_time_s = m * c.comm;
  r.pp_comm_time_s = m * c.p2p;
  r.dp_comm_time_s = dp_total;
  r.dp_exposed_time_s = dp_exposed_max + m * c.dp_per_mb;
  r.bubble_time_s = pipeline - m * t_max;
  r.optimizer_time_s = optimizer_max;
  r.exposed_comm_time_s = r.tp_comm_time_s + r.pp_comm_time_s + r.dp_exposed_time_s;
  r.comm_compute_ratio =
      (r.tp_comm_time_s + r.pp_comm_time_s + r.dp_comm_time_s) / r.compute_time_s;
}

}  // namespace rapid
