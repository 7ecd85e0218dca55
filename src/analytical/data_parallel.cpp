#include "rapid/analytical/data_parallel.hpp"

#include <algorithm>

namespace rapid {

DpTraffic dp_traffic(double params, int zero_stage, double grad_bytes, double param_bytes) {
  DpTraffic t;
  const double grads = params * grad_bytes, weights = params * param_bytes;
  switch (zero_stage) {
    case 0:
      t.all_reduce = grads;
      break;
    case 1:
      t.reduce_scatter = grads;
      t.all_gather = weights;
      break;
    case 2:
      t.mb_reduce_scatter = grads;
      t.all_gather = weights;
      break;
    default:
      t.mb_all_gather = 2.0 * weights;
      t.mb_reduce_scatter = grads;
      break;
  }
  return t;
}

namespace {
double exposed(double comm, double window, double last, bool overlap) {
  if (!overlap) return comm;
  return std::max(comm * last, comm - window);
}
}  // namespace

DpTime dp_time(const DpTraffic& t, const GroupShape& g, const CollectiveCost& cost, double fwd_s,
               double bwd_s, double last_bucket, bool overlap_grad, bool overlap_param) {
  DpTime d;
  if (g.size <= 1) return d;
  auto time = [&](CollectiveKind k, double bytes) {
    return bytes > 0 ? cost.time(k, bytes, g) : 0.0;
  };
  const double ar = time(CollectiveKind::AllReduce, t.all_reduce);
  const double rs = time(CollectiveKind::ReduceScatter, t.reduce_scatter);
  const double ag = time(CollectiveKind::AllGather, t.all_gather);
  // Per step: the gradient reduction hides behind the last micro-batch's backward, the
  // weight gather behind the next step's first forward.
  d.step_total = ar + rs + ag;
  d.step_exposed = exposed(ar + rs, bwd_s, last_bucket, overlap_grad) +
                   exposed(ag, fwd_s, last_bucket, overlap_param);
  // Per micro-batch (ZeRO 2/3): one weight gather per pass, the reduce-scatter in backward.
  const double mb_ag = time(CollectiveKind::AllGather, t.mb_all_gather / 2.0);
  const double mb_rs = time(CollectiveKind::ReduceScatter, t.mb_reduce_scatter);
  d.mb_total = 2.0 * mb_ag + mb_rs;
  if (t.mb_all_gather > 0)
    d.mb_exposed = exposed(mb_ag, fwd_s, last_bucket, overlap_param) +
                   exposed(mb_ag + mb_rs, bwd_s, last_bucket, overlap_grad && overlap_param);
  else
    d.mb_exposed = exposed(mb_rs, bwd_s, last_bucket, overlap_grad);
  return d;
}

}  // namespace rapid
