// The pass-by-pass walk of simulate_pipeline() (pipeline_timing.hpp) compiled once per
// schedule shape (pp, vpp, m): every pass of every device in an order where each pass comes
// after the one it waits for, with the index of that pass and of its duration. Running it
// on a point's pass times is one branch-free loop that does the walk's floating-point
// operations in the walk's order on each device, so its makespan, busy and end times are
// the walk's bit for bit (tests/unit/pipeline_program_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "rapid/analytical/pipeline_timing.hpp"

namespace rapid {

class PipelineProgram {
 public:
  /// The schedule of workload/schedule.hpp on `pp` devices, `vpp` chunks, `m` micro-batches.
  PipelineProgram(int64_t pp, int64_t vpp, int64_t m);

  bool is(int64_t pp, int64_t vpp, int64_t m) const { return pp == pp_ && vpp == vpp_ && m == m_; }

  /// simulate_pipeline(in) into `out` (its vectors reused). Pass times must be finite and
  /// non-negative (runnable() says so): then each device's last pass ends last on it and
  /// the makespan is the latest of those.
  void run(const PipelineInput& in, PipelineTimes& out) const;

  /// Whether run() equals the walk on `in`: its shape, finite non-negative times.
  static bool runnable(const PipelineInput& in);

  /// This thread's program for (pp, vpp, m): the last few shapes are kept (a sweep's
  /// points come in runs that share them, interleaved by the inner axes).
  static const PipelineProgram& of(int64_t pp, int64_t vpp, int64_t m);

 private:
  struct Pass {
    uint32_t input;   ///< 1 + the index of the pass whose output it waits for; 0: none
    uint16_t device;  ///< the device running it
    uint16_t slot;    ///< its duration: 2 (device * vpp + chunk) + (backward ? 1 : 0)
  };
  void order_by_depth();
  int64_t pp_ = 0, vpp_ = 0, m_ = 0;
  std::vector<Pass> passes_;
};

}  // namespace rapid
