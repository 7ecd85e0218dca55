// Time of a pipeline-parallel step from the durations of its passes (both evaluators run
// the same schedule, workload/schedule.hpp): device j runs its passes in Megatron's order;
// a pass starts when the device is free and its input has arrived; a pass with an output
// sends it to the next virtual stage in `p2p_s` and the device waits for that send
// (Megatron's blocking batched p2p), so its output arrives p2p_s after the pass ends.
//
// simulate_pipeline() walks every pass (O(pp vpp m)): the reference. pipeline_timing()
// gives the same makespan and per-device times in O(pp vpp): the critical path runs
// through the bottleneck device, whose idle time is its wait for the first input, the
// round trip of the first micro-batch before its first backward beyond the forwards it
// can run meanwhile, the same round trip at the end beyond its remaining backwards, and
// the drain of the last backward through the devices before it (docs/model.md
// "Pipeline critical path").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rapid {

struct PipelineInput {
  int64_t pp = 1, vpp = 1, m = 1;
  std::vector<double> fwd, bwd;  ///< seconds per pass, index device * vpp + chunk
  double p2p_s = 0;              ///< one activation (or gradient) transfer
  double f(int64_t j, int64_t c) const { return fwd[static_cast<size_t>(j * vpp + c)]; }
  double b(int64_t j, int64_t c) const { return bwd[static_cast<size_t>(j * vpp + c)]; }
};

struct PipelineTimes {
  double makespan = 0;       ///< the last pass's end
  std::vector<double> busy;  ///< per device: passes and the sends it waits for
  std::vector<double> end;   ///< per device: its last pass's end
};

/// Every pass in order (the reference; tests and small cases).
PipelineTimes simulate_pipeline(const PipelineInput& in);

/// The same makespan and per-device busy time in O(pp vpp) under 1F1B, and interleaved
/// when every chunk of every device takes the same time within 3% but for the first
/// device's first and the last device's last chunk (their extras); otherwise
/// simulate_pipeline(). `end` is the closed form's estimate of each device's last pass.
PipelineTimes pipeline_timing(const PipelineInput& in);
/// The same into `out`, its vectors reused (the walk: PipelineProgram, bit for bit).
void pipeline_timing(const PipelineInput& in, PipelineTimes& out);

}  // namespace rapid
