#include "rapid/analytical/data_parallel.hpp"

#include <algorithm>
#include <cmath>

namespace rapid {

DpTraffic dp_traffic(double params, int zero_stage, double grad_bytes, double param_bytes) {
  DpTraffic t;
  const ZeroSchedule z = zero_schedule(zero_stage);
  const double grads = params * grad_bytes, weights = params * param_bytes;
  if (z.reduce_every_microbatch)
    t.mb_reduce_scatter = grads;
  else if (z.reduce == CollectiveKind::AllReduce)
    t.all_reduce = grads;
  else
    t.reduce_scatter = grads;
  if (z.gather_per_step) t.all_gather = weights;
  if (z.gather_per_pass) t.mb_all_gather = 2.0 * weights;
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
  auto time = [&](CollectiveKind k, double bytes, double ops) {
    return bytes > 0 ? ops * cost.time(k, bytes / ops, g) : 0.0;
  };
  d.reduce = time(CollectiveKind::AllReduce, t.all_reduce, buckets) +
             time(CollectiveKind::ReduceScatter, t.reduce_scatter, buckets);
  d.gather = time(CollectiveKind::AllGather, t.all_gather, buckets);
  // Per micro-batch (ZeRO 2/3): one weight gather per pass, the reduce-scatter in backward,
  // in buckets (ZeRO 2) or one collective per unit (ZeRO 3).
  const double mb_ops = t.mb_all_gather > 0 && t.units > 0 ? t.units : buckets;
  const double last = 1.0 / mb_ops;
  const double mb_ag = time(CollectiveKind::AllGather, t.mb_all_gather / 2.0, mb_ops);
  const double mb_rs = time(CollectiveKind::ReduceScatter, t.mb_reduce_scatter, mb_ops);
  d.mb_total = 2.0 * mb_ag + mb_rs;
  d.mb_gather = mb_ag;
  d.mb_reduce = mb_rs;
  const bool gather = t.mb_all_gather > 0;
  // The forward waits on its gather; the backward on its gather and the reduction behind it.
  const double fwd_comm = gather ? mb_ag : 0.0, bwd_comm = mb_ag + mb_rs;
  const bool fwd_overlap = overlap_param, bwd_overlap = overlap_grad && (!gather || overlap_param);
  d.mb_exposed_f = fwd_comm > 0 ? dp_exposed(fwd_comm, fwd_s, last, fwd_overlap) : 0.0;
  d.mb_exposed_b = bwd_comm > 0 ? dp_exposed(bwd_comm, bwd_s, last, bwd_overlap) : 0.0;
  d.mb_floor_f = fwd_comm > 0 ? dp_exposed(fwd_comm, INFINITY, last, fwd_overlap) : 0.0;
  d.mb_floor_b = bwd_comm > 0 ? dp_exposed(bwd_comm, INFINITY, last, bwd_overlap) : 0.0;
  d.mb_exposed = d.mb_exposed_f + d.mb_exposed_b;
  return d;
}

double grads_posted_at_end(double chunk_params, double first_params, double bucket_params) {
  const double before = std::max(0.0, chunk_params - first_params);
  return chunk_params - bucket_params * std::floor(before / bucket_params);
}

}  // namespace rapid
