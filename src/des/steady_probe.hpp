// Steady-state extrapolation (docs/des.md sec 6.2 "Steady state"): a run of the step with g
// periods of `delta` micro-batches fewer watches the cuts where stage 0 (replica 0) starts
// the forward of chunk 0 of a micro-batch that is a multiple of `delta`. When three
// consecutive periods between cuts have the same shape (the same events by kind and whom,
// the same state at the cut: instances, DP streams, pending events), the same times
// relative to the cut and the same accumulator increments (within kSteadyTolerance of the
// period), the run is periodic there: the full step is the short one with g more periods
// (each adds the period to the times after the cut and the increments to the
// accumulators). Otherwise the full step is simulated.
//
// The probe owns what it watches and decides; the simulator observes for it (each event's
// shape, at each cut its state's digest, relative times and accumulators: sim_steady.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "rapid/des/event_queue.hpp"
#include "rapid/des/simulator.hpp"
#include "splitmix.hpp"

namespace rapid::des {

/// Relative difference of period lengths, relative times and increments that still counts
/// as periodic: the simulation's rounding (flows' remaining bytes in double) makes a
/// contended steady state repeat to a few hundred ps in a period of 0.1-1 s, not to the ps.
inline constexpr double kSteadyTolerance = 1e-8;

class SteadyProbe {
 public:
  /// Periods of `delta` micro-batches a run of `w` may leave out (0: none; the run is not
  /// eligible: recorded spans, power traces or link capacities that change are not periodic).
  static int64_t periods_to_skip(const Workload& w, const SimInputs& in, const SimOptions& opt,
                                 int32_t* delta);

  /// A run's start: watching when `periods` > 0 (leaving out that many periods of `delta`),
  /// for `instances` instances and `lanes` DP lanes.
  void begin(int32_t delta, int64_t periods, size_t instances, size_t lanes);

  bool on() const { return on_; }
  bool accepted() const { return accepted_; }
  /// A short run that can no longer be accepted (close_cut() stopped watching it): the rest
  /// of it is not simulated.
  bool refused() const { return periods_ > 0 && !on_ && !accepted_; }
  int32_t delta() const { return delta_; }
  int64_t periods() const { return periods_; }
  SimTime period() const { return period_; }

  /// An event of shape `shape` processed at `time` (in processing order).
  void event(uint64_t shape, SimTime time) {
    if (!on_) return;
    hash_ = splitmix64(hash_ ^ shape);
    event_times_.push_back(time - last_.t);
  }

  /// What the probe keeps of the last cut for the next one's digest: its time, each
  /// instance's pass and hook counters, each DP lane's next op.
  struct LastCut {
    SimTime t = 0;
    std::vector<int32_t> pass, hook, next;
  };
  LastCut& last() { return last_; }

  /// A cut's observation, filled by the simulator between open_cut() and close_cut(): the
  /// times relative to the cut (state, then the pending events' sorted) and the step's
  /// accumulators (integers, then reals), each in one fixed order.
  struct Cut {
    std::vector<SimTime> times;
    std::vector<int64_t> ints;
    std::vector<double> reals;
  };
  Cut& open_cut() {
    cut_.times.clear();
    cut_.ints.clear();
    cut_.reals.clear();
    return cut_;
  }
  /// Closes the cut at `t` of a run of `microbatches`: `state` and `pending` digest the
  /// state's and the pending events' shapes. Accepts the run once three periods matched.
  void close_cut(SimTime t, uint64_t state, uint64_t pending, int64_t microbatches);

  /// Accumulator increments of one period, in the Cut's order (accepted runs).
  const std::vector<int64_t>& int_increments() const { return d_ints_; }
  const std::vector<double>& real_increments() const { return d_reals_; }

 private:
  bool on_ = false, accepted_ = false;
  int32_t delta_ = 1;    ///< micro-batches per period
  int64_t periods_ = 0;  ///< g: periods left out of the short run
  int32_t equal_ = 0;    ///< consecutive periods that matched the one before
  int32_t cuts_ = 0;
  uint64_t hash_ = 0, last_shape_ = 0;  ///< the current period's event shape; the last digest
  SimTime period_ = 0;
  LastCut last_;
  Cut cut_, prev_;                    ///< this cut's observation, the last one's
  std::vector<SimTime> event_times_;  ///< this period's events, relative to the last cut
  std::vector<int64_t> d_ints_;       ///< increments of the last period
  std::vector<double> d_reals_;
};

}  // namespace rapid::des
