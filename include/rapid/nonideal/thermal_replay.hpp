// The periodic steady state of one GPU's temperatures under a training step's power profile
// repeated step after step (docs/nonideal.md sec 2): an event-driven replay of the
// profile's piecewise-constant power on the three-node network (die, HBM, sink), integrated
// exactly between events (segment ends, the die's and the HBM's throttle-level crossings,
// DVFS samples), with throttling stretching the work in flight. Heating takes minutes while
// a step takes seconds: the replay starts from the closed-form steady state of the step's
// average power, so a few periods reach the periodic state. A second replay heats the GPU
// from idle, as at a job's start: when DVFS first lowers the clock and when the GPU first
// throttles.
#pragma once

#include <span>
#include <vector>

#include "rapid/nonideal/thermal_model.hpp"

namespace rapid {

/// One piece of a step on one GPU at full speed.
struct PowerSegment {
  double duration_s = 0;  ///< at full clock and bandwidth
  WorkPower work;
  /// Work of this GPU (stretches when it is derated); false: waiting for others (the
  /// network, a slower GPU), a duration the derate does not change.
  bool stretches = true;
  bool operator==(const PowerSegment&) const = default;
};

/// Predictive DVFS (mitigation (b), PRODUCT.md sec 3): every `sample_s` of simulated time,
/// if the die's dT/dt over the last interval exceeds `rate_C_per_s`, the SM clock is
/// lowered to `clock` of its value; restored at the first sample where the rate is back at
/// or below `rate_C_per_s`.
struct DvfsPolicy {
  bool enabled = false;
  double sample_s = 5.0;
  double rate_C_per_s = 2.0;
  double clock = 0.9;
};

/// One point of the temperature / power / clock trace (the timeline's counter tracks).
struct ThermalSample {
  double t_s = 0, die_C = 0, hbm_C = 0, power_W = 0, clock = 1, hbm = 1;
};

struct ReplayResult {
  double period_s = 0;  ///< step time of this GPU at the periodic steady state
  double slowdown = 1;  ///< period / unthrottled period
  double die_avg_C = 0, die_max_C = 0, hbm_avg_C = 0, hbm_max_C = 0;
  /// Share of the time under any thermal slowdown, die or HBM (the one "throttled" figure,
  /// docs/nonideal.md sec 2), and of each node's.
  double throttle_fraction = 0, die_throttle_fraction = 0, hbm_throttle_fraction = 0;
  double dvfs_fraction = 0;  ///< time at the lowered DVFS clock / time
  double avg_power_W = 0, peak_power_W = 0;
  /// Clock and bandwidth kept, averaged over the time this GPU's work ran: its compute
  /// runs this much slower at the steady state (what the DES feeds back per GPU).
  Derate effective;
  int periods = 0;  ///< step periods replayed to reach and measure the steady state
};

/// The heating from idle (a job's start) to its first thermal slowdown or the periodic
/// steady state.
struct ColdStart {
  double first_throttle_s = 0;  ///< first thermal slowdown (infinity: none)
  /// DVFS samples that lowered the clock before that (the predictive policy's purpose:
  /// engaging before the GPU throttles), and the first of them (infinity: none).
  int dvfs_engagements = 0;
  double first_dvfs_s = 0;
  double length_s = 0;               ///< how long it was replayed
  std::vector<ThermalSample> trace;  ///< with `record`
};

struct ReplayOptions {
  /// This GPU's own derate whatever its temperature (a straggler's lower clock limit or
  /// slower HBM): multiplies the thermal and DVFS derates.
  Derate base;
  int linear_levels = 20;  ///< Linear law: derate steps across each node's span (clock bins)
  int max_periods = 4000;
  double window_s = 60;  ///< measure over at least this much time (DVFS, chatter)
  /// A throttle level, once changed, holds this long: the firmware's control period
  /// (NVIDIA does not publish it; docs/nonideal.md sec 2).
  double throttle_period_s = 0.1;
  bool record = false;    ///< cold start: keep the trace (timeline)
  double record_s = 120;  ///< at least this long when recording
};

/// Replays `profile` (one step) periodically on a GPU of `p` under `dvfs`.
ReplayResult replay_periodic(const ThermalParams& p, std::span<const PowerSegment> profile,
                             const DvfsPolicy& dvfs, const ReplayOptions& opt = {});

/// Replays `profile` from the idle GPU's steady state (every node at the temperature of
/// `idle_W` in the die) until its first thermal slowdown, or for five slowest time
/// constants of the network (within 1% of the periodic steady state); when recording, for
/// that long or `opt.record_s`, whichever is longer, whatever throttles.
ColdStart replay_cold_start(const ThermalParams& p, std::span<const PowerSegment> profile,
                            const DvfsPolicy& dvfs, double idle_W, const ReplayOptions& opt = {});

}  // namespace rapid
