// Data-parallel gradient and parameter traffic of one GPU, by ZeRO stage, and how much of
// it hides behind compute (Rajbhandari et al. 2020, ZeRO, sec 5 and 7; Li et al. 2020,
// PyTorch DDP bucketing; Megatron-Core overlap_grad_reduce / overlap_param_gather).
#pragma once

#include "rapid/cost/collective_cost.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// Buffer sizes (nccl-tests convention, bytes) one GPU syncs for `params` parameters:
///  ZeRO 0: all-reduce of the gradients once per step;
///  ZeRO 1: reduce-scatter of the gradients + all-gather of the updated weights per step;
///  ZeRO 2: reduce-scatter every micro-batch, all-gather of the weights per step;
///  ZeRO 3: weights all-gathered in forward and again in backward, gradients
///          reduce-scattered, every micro-batch.
struct DpTraffic {
  double all_reduce = 0;         ///< per step
  double reduce_scatter = 0;     ///< per step
  double all_gather = 0;         ///< per step
  double mb_reduce_scatter = 0;  ///< per micro-batch
  double mb_all_gather = 0;      ///< per micro-batch (forward + backward)
  /// All bytes of one step with `m` micro-batches.
  double per_step(double m) const {
    return all_reduce + reduce_scatter + all_gather + m * (mb_reduce_scatter + mb_all_gather);
  }
};

/// `grad_bytes`: bytes per reduced gradient element; `param_bytes`: per gathered weight.
DpTraffic dp_traffic(double params, int zero_stage, double grad_bytes, double param_bytes);

/// Seconds of that traffic on group `g`: in total, and exposed when overlapped with the
/// forward (`fwd_s`) and backward (`bwd_s`) of one micro-batch. Overlapped communication
/// leaves at least its last bucket (fraction `last_bucket`) exposed.
struct DpTime {
  double step_total = 0, step_exposed = 0;  ///< per step
  double mb_total = 0, mb_exposed = 0;      ///< per micro-batch
};
DpTime dp_time(const DpTraffic& t, const GroupShape& g, const CollectiveCost& cost, double fwd_s,
               double bwd_s, double last_bucket, bool overlap_grad, bool overlap_param);

}  // namespace rapid
