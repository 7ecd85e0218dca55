// Data-parallel gradient and parameter traffic of one GPU, by ZeRO stage, and how much of
// it hides behind compute (Rajbhandari et al. 2020, ZeRO, sec 5 and 7; Li et al. 2020,
// PyTorch DDP bucketing; Megatron-Core overlap_grad_reduce / overlap_param_gather).
#pragma once

#include <algorithm>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/workload/workload.hpp"
#include "rapid/workload/zero_schedule.hpp"

namespace rapid {

/// Buffer sizes (nccl-tests convention, bytes) one GPU syncs for `params` parameters, by
/// the ZeRO stage's schedule (workload/zero_schedule.hpp).
struct DpTraffic {
  double all_reduce = 0;         ///< per step
  double reduce_scatter = 0;     ///< per step
  double all_gather = 0;         ///< per step
  double mb_reduce_scatter = 0;  ///< per micro-batch
  double mb_all_gather = 0;      ///< per micro-batch (forward + backward)
  /// ZeRO 3: collectives of each kind per pass, one per FSDP unit (a transformer layer,
  /// the embedding, the LM head; Zhao et al. 2023, "PyTorch FSDP", sec. 3.2); 0: buckets.
  double units = 0;
  /// All bytes of one step with `m` micro-batches.
  double per_step(double m) const {
    return all_reduce + reduce_scatter + all_gather + m * (mb_reduce_scatter + mb_all_gather);
  }
};

/// `grad_bytes`: bytes per reduced gradient element; `param_bytes`: per gathered weight.
DpTraffic dp_traffic(double params, int zero_stage, double grad_bytes, double param_bytes);

/// Seconds of that traffic on group `g`, in buckets of `bucket_bytes` of gradients
/// (ceil(grad bytes / bucket) collectives of each kind, each paying its start-up; Li et al.
/// 2020, PyTorch DDP; Megatron-Core param_and_grad_buffer), and the per-micro-batch part
/// exposed when overlapped with the forward (`fwd_s`) and backward (`bwd_s`) of one
/// micro-batch (ZeRO 2/3). Overlapped communication leaves at least its last bucket
/// exposed.
struct DpTime {
  double reduce = 0, gather = 0;        ///< per step: gradient reduction, weight gather
  double mb_total = 0, mb_exposed = 0;  ///< per micro-batch
  double mb_gather = 0, mb_reduce = 0;  ///< per micro-batch: one pass's gather, the reduction
  /// Of mb_exposed, the forward's and the backward's, and of each what no window hides
  /// (the last bucket).
  double mb_exposed_f = 0, mb_exposed_b = 0, mb_floor_f = 0, mb_floor_b = 0;
  double step_total() const { return reduce + gather; }
  /// mb_exposed when the passes run `ext_f` and `ext_b` seconds longer beside the traffic
  /// (interference): each pass's window grows by that much, down to its floor.
  double mb_exposed_extended(double ext_f, double ext_b) const {
    return std::max(mb_floor_f, mb_exposed_f - ext_f) + std::max(mb_floor_b, mb_exposed_b - ext_b);
  }
};
DpTime dp_time(const DpTraffic& t, const GroupShape& g, const CollectiveCost& cost, double fwd_s,
               double bwd_s, double bucket_bytes, bool overlap_grad, bool overlap_param);

/// ZeRO-2 with overlap_grad_reduce: of a chunk's `chunk_params` gradients, filled into buckets
/// of `bucket_params` in backward order and each posted as it fills (Megatron-Core
/// param_and_grad_buffer: buckets in reverse parameter order; the DES's chunk_buckets), the
/// parameters posted only as the chunk's backward ends: every bucket holding any of its
/// first owner's `first_params` (the whole buckets of the later owners went before).
double grads_posted_at_end(double chunk_params, double first_params, double bucket_params);

/// Of `comm` seconds overlapped with `window` seconds, what is exposed: all of it without
/// overlap, else what outlasts the window but at least the last bucket (`last_share`).
double dp_exposed(double comm, double window, double last_share, bool overlap);

}  // namespace rapid
