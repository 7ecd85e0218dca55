// The pieces of the thermal fixed point (docs/nonideal.md secs 2-4) that the DES
// (nonideal_des.cpp) and a trace replay on a job (trace/job_replay.hpp) share: each GPU's
// own derate and cooling under a scenario, the DVFS policy, the resolution of a replayed
// power profile, when a steady state counts as throttled and when the loop of simulation ->
// periodic steady state -> derates fed back stops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "rapid/core/eval_result.hpp"
#include "rapid/nonideal/thermal_replay.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/nonideal_spec.hpp"

namespace rapid {

/// A GPU's own derate and thermal parameters under a scenario.
struct GpuState {
  Derate base;
  ThermalParams thermal;
  int64_t gpu = -1;  ///< the straggler GPU it comes from (-1: a normal GPU)
  /// The same derate and the same heating (GPUs alike for the simulation).
  bool runs_like(const GpuState& o) const;
};

/// A GPU no straggler covers: the scenario's cooling (no throttle threshold without the
/// thermal model).
GpuState normal_gpu_state(const HardwareSpec& hw, const NonIdealSpec& spec);
/// The state straggler `s` gives the GPUs it covers: its clock and HBM factors, its own
/// cooling when it has one.
GpuState straggler_gpu_state(const HardwareSpec& hw, const NonIdealSpec& spec,
                             const StragglerSpec& s, const GpuState& normal);
/// Merges GPU `g` in state `st` into `x`, the state of GPUs that run as one (a DES stage
/// instance, a replayed rank): when `st` is worse (slower on a half compute-, half
/// memory-bound op, or hotter at TDP), x keeps the lower of each factor and the hotter
/// cooling, and names g.
void merge_gpu_state(GpuState& x, const GpuState& st, int64_t g, double tdp_W);

/// Predictive DVFS (docs/nonideal.md sec 3) when the scenario's mitigation asks for it.
DvfsPolicy dvfs_policy(const NonIdealSpec& spec);

/// Resolution of a replayed profile: 5 ms, or a 200th of the step when that is coarser (a
/// 14 s step in 70 ms pieces: beta x 70 ms = 1% of the air-cooled time constant, whose
/// ripple the merge leaves out; peaks are taken before merging).
inline double merge_s(double step_s) {
  return std::max(5e-3, step_s / 200.0);
}

/// A GPU of `base` throttled (or slowed by DVFS) at its steady state `steady`: it did not
/// keep its own speed.
inline bool throttled(const ReplayResult& steady, const Derate& base) {
  return !(steady.effective == base) && (steady.throttle_fraction > 0 || steady.dvfs_fraction > 0);
}

/// The row's thermal columns from its hottest GPU (docs/nonideal.md sec 7): its die and
/// HBM at the steady state, its share of time throttled (the one definition: under any
/// thermal slowdown) and at the DVFS clock, and its heating from idle; status overheat when
/// a node ends above its shutdown temperature.
void set_thermal_columns(const ThermalParams& p, double die_C, double hbm_C,
                         double throttle_fraction, double dvfs_fraction, const ColdStart& cold,
                         EvalResult& r);

/// The row's power columns (docs/nonideal.md sec 1) from the step's energy over all `gpus`
/// GPUs, its length, the tokens it trains, the highest GPU power and the cluster's swing
/// between its highest and lowest draw: energy per step, average GPU power (energy / (gpus
/// x step)), peak GPU power, tokens per joule, swing in MW.
void set_power_columns(double energy_J, double step_s, double gpus, double tokens,
                       double peak_gpu_W, double swing_W, EvalResult& r);

/// The heating from idle (replay_cold_start) of a GPU that `throttles` (or not) at its
/// periodic steady state. Skipped when nothing can happen on the way: no DVFS, no trace
/// asked, and no throttling at the steady state, which the heating approaches from below
/// (the sink rises towards its periodic temperature; the die and HBM ride on it).
ColdStart heating_from_idle(const ThermalParams& p, std::span<const PowerSegment> profile,
                            const DvfsPolicy& dvfs, double idle_W, const ReplayOptions& o,
                            bool throttles);

/// Simulations of the fixed point at most (the first one included).
constexpr int kMaxThermalSimulations = 8;
/// The fixed point is reached when a simulation's step is within 1e-3 of the one before.
inline bool thermal_settled(double before_s, double after_s) {
  return std::abs(after_s - before_s) <= 1e-3 * before_s;
}

}  // namespace rapid
