// How a trace replay times a compute node (trace_replay.hpp "Compute time") and, with the
// power model, the full-speed work it does (the thermal model's input, as the DES's power
// trace: des/power_trace.hpp). Internal to src/trace.
#pragma once

#include <cstdint>

#include "rapid/des/event_queue.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/trace/trace_replay.hpp"

namespace rapid::trace {

class ReplayCompute {
 public:
  /// `in` and `res` must outlive this; `res` counts the nodes by how they were timed.
  ReplayCompute(const ReplayInputs& in, ReplayResult& res) : in_(in), res_(res) {}

  /// The time of node `n` (a compute node, an is_cpu_op node or a recorded collective) on
  /// rank `rank`, under the TDP cap and the rank's derate. With `work` and the power model,
  /// a GPU compute node's full-speed energy and roofline split go there (time_s 0 for the
  /// rest): rapid ops as the DES's (PowerModel::op_energy of the capped op, the cap's time
  /// compute-bound); roofline nodes op_energy of their FLOPs and bytes with the replay's own
  /// split; a recorded duration draws TDP (the board limit large kernels run at,
  /// docs/nonideal.md sec 1: an upper bound for a kernel whose work is unknown), all
  /// compute-bound.
  des::SimTime time(const TraceNode& n, int64_t rank, OpEnergy* work);

 private:
  const Derate* derate(int64_t rank) const;  ///< null when at full speed
  double op_scale(int64_t rank, const Op& op, double alone_s, OpEnergy* work) const;
  double compute_share(double full_s, double flops) const;
  double slowdown(int64_t rank, double full_s, double flops) const;

  const ReplayInputs& in_;
  ReplayResult& res_;
};

}  // namespace rapid::trace
