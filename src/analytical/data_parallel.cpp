#include "rapid/analytical/data_parallel.hpp"

#include <algorithm>
#include <cmath>

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

double dp_exposed(double comm, double window, double last_share, bool overlap) {
  if (!overlap) return comm;
  return std::max(comm * last_share, comm - window);
}

DpTime dp_time(const DpTraffic& t, const GroupShape& g, const CollectiveCost& cost, double fwd_s,
               double bwd_s, double bucket_bytes, bool overlap_grad, bool overlap_param) {
  DpTime d;
  if (g.size <= 1) return d;
  const double grads = std::max(t.all_reduce + t.reduce_scatter + t.mb_reduce_scatter,
                                t.mb_all_gather / 2.0 + t.all_gather);
  const double buckets = std::max(1.0, std::ceil(grads / std::max(bucket_bytes, 1.0) - 1e-9));
  auto time = [&](CollectiveKind k, double bytes) {
    return bytes > 0 ? buckets * cost.time(k, bytes / buckets, g) : 0.0;
  };
  d.reduce = time(CollectiveKind::AllReduce, t.all_reduce) +
             time(CollectiveKind::ReduceScatter, t.reduce_scatter);
  d.gather = time(CollectiveKind::AllGather, t.all_gather);
  // Per micro-batch (ZeRO 2/3): one weight gather per pass, the reduce-scatter in backward.
  const double last = 1.0 / buckets;
  const double mb_ag = time(CollectiveKind::AllGather, t.mb_all_gather / 2.0);
  const double mb_rs = time(CollectiveKind::ReduceScatter, t.mb_reduce_scatter);
  d.mb_total = 2.0 * mb_ag + mb_rs;
  if (t.mb_all_gather > 0)
    d.mb_exposed = dp_exposed(mb_ag, fwd_s, last, overlap_param) +
                   dp_exposed(mb_ag + mb_rs, bwd_s, last, overlap_grad && overlap_param);
  else
    d.mb_exposed = dp_exposed(mb_rs, bwd_s, last, overlap_grad);
  return d;
}

}  // namespace rapid
