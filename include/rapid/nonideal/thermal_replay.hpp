// The periodic steady state of one GPU's temperature under a training step's power profile
// repeated step after step (docs/nonideal.md sec 2): an event-driven replay of the
// profile's piecewise-constant power, integrated exactly between events (segment ends,
// throttle-level crossings, DVFS samples), with throttling stretching the work in flight.
// Heating takes minutes while a step takes seconds: the replay starts from the closed-form
// steady state of the step's average power, so a few periods reach the periodic state.
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

/// Predictive DVFS (mitigation (b)): every `sample_s` of simulated time, if dT/dt over the
/// last interval exceeds `rate_C_per_s`, the SM clock is lowered to `clock` of its value;
/// restored at the first sample where the rate is back at or below `rate_C_per_s`.
struct DvfsPolicy {
  bool enabled = false;
  double sample_s = 5.0;
  double rate_C_per_s = 2.0;
  double clock = 0.9;
};

/// One point of the temperature / power / clock trace (the timeline's counter tracks).
struct ThermalSample {
  double t_s = 0, temperature_C = 0, power_W = 0, clock = 1, hbm = 1;
};

struct ReplayResult {
  double period_s = 0;  ///< step time of this GPU at the periodic steady state
  double slowdown = 1;  ///< period / unthrottled period
  double temperature_avg_C = 0, temperature_max_C = 0;
  double throttle_fraction = 0;  ///< time derated (thermally) / time
  double dvfs_fraction = 0;      ///< time at the lowered DVFS clock / time
  double avg_power_W = 0, peak_power_W = 0;
  /// Clock and bandwidth kept, averaged over the time this GPU's work ran: its compute
  /// runs this much slower at the steady state (what the DES feeds back per GPU).
  Derate effective;
  int periods = 0;  ///< step periods replayed to reach and measure the steady state
  std::vector<ThermalSample> trace;  ///< with `record`: from a cold (idle) start
};

struct ReplayOptions {
  /// This GPU's own derate whatever its temperature (a straggler's lower clock limit or
  /// slower HBM): multiplies the thermal and DVFS derates.
  Derate base;
  int linear_levels = 20;  ///< Linear law: derate steps across the span (clock bins)
  int max_periods = 4000;
  double window_s = 60;   ///< measure over at least this much time (DVFS, chatter)
  bool record = false;    ///< trace from an idle GPU: the heating transient (timeline)
  double record_s = 120;  ///< length of the recorded trace
};

/// Replays `profile` (one step) periodically on a GPU of `p` under `dvfs`.
ReplayResult replay_periodic(const ThermalParams& p, std::span<const PowerSegment> profile,
                             const DvfsPolicy& dvfs, const ReplayOptions& opt = {});

}  // namespace rapid
