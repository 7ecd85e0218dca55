// The pass-by-pass walk of simulate_pipeline() (pipeline_timing.hpp) compiled once per
// schedule shape (pp, vpp, m): every pass of every device in an order where each pass comes
// after the one it waits for, with the index of that pass and of its duration. Running it
// on a point's pass times is one branch-free loop that does the walk's floating-point
// operations in the walk's order on each device, so its makespan, busy and end times are
// the walk's bit for bit (tests/unit/pipeline_program_test.cpp).
//
// Many micro-batches: an interleaved schedule's steady state repeats every pp micro-batches
// (one round: pp vpp forwards and backwards on every device, each the one before it moved
// on by pp micro-batches). Cut every device's order at the same position in two successive
// rounds: when every pass time that crosses the first cut (each device's clock, each output
// a later pass waits for) comes back at the second cut moved on by one and the same lambda,
// the walk's maxima and additions repeat (a max-plus system: max(a + l, b + l) =
// max(a, b) + l), so every later round adds lambda and the walk of m = m_s + g pp ends
// g lambda after that of m_s (Baccelli et al. 1992, "Synchronization and Linearity", the
// periodic regime of max-plus linear systems). extend() runs a short program and extends
// it so; the test of the crossing times is exact up to rounding (relative 1e-12).
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

  /// The walk of `in` (runnable): for interleaved schedules of more than kShortGroups
  /// rounds, this thread's program of kShortGroups rounds extended over the steady state
  /// (within rounding of the walk) when its rounds repeat, else the program of in's shape.
  static void walk(const PipelineInput& in, PipelineTimes& out);
  /// Rounds (pp micro-batches each) of the short program walk() extends.
  static constexpr int64_t kShortGroups = 4;

  /// run() of this program's shape on in's pass times, extended to in.m = m + g pp
  /// micro-batches (g >= 0) through the repeating rounds: false (out unspecified) when no
  /// two successive rounds of this program repeat.
  bool extend(const PipelineInput& in, PipelineTimes& out) const;

 private:
  struct Pass {
    uint32_t input;   ///< 1 + the index of the pass whose output it waits for; 0: none
    uint16_t device;  ///< the device running it
    uint16_t slot;    ///< its duration: 2 (device * vpp + chunk) + (backward ? 1 : 0)
  };
  /// Reorders passes_ (by depth) and returns each old index's new one.
  std::vector<uint32_t> order_by_depth();
  /// Finds the cuts whose crossing times extend() compares (`position`: each pass's place
  /// in its device's order, by passes_ before order_by_depth; `placed`: new indices).
  void find_rounds(const std::vector<uint32_t>& position, const std::vector<uint32_t>& placed);
  /// The walk on in's pass times (any m: the shape is this program's); leaves each pass's
  /// output time in the returned array (index 1 + pass, [0] = 0).
  const double* run_passes(const PipelineInput& in, PipelineTimes& out) const;
  int64_t pp_ = 0, vpp_ = 0, m_ = 0;
  std::vector<Pass> passes_;
  /// Two successive cuts a round apart: 1 + the index of each pass whose output time crosses
  /// the first (a later pass waits for it, or it is its device's last before the cut) and,
  /// entry for entry, of the same pass a round on, crossing the second.
  struct Round {
    std::vector<uint32_t> from, to;
  };
  std::vector<Round> rounds_;
};

}  // namespace rapid
