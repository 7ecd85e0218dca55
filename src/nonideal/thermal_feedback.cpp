#include "rapid/nonideal/thermal_feedback.hpp"

#include <limits>

#include "rapid/nonideal/power_model.hpp"

namespace rapid {

bool GpuState::runs_like(const GpuState& o) const {
  return base == o.base && thermal.same_as(o.thermal);
}

namespace {

// Without the thermal model nothing throttles: the limits out of reach.
void no_limits(ThermalParams& t) {
  t.die.onset_C = t.hbm.onset_C = std::numeric_limits<double>::infinity();
}

}  // namespace

GpuState normal_gpu_state(const HardwareSpec& hw, const NonIdealSpec& spec) {
  GpuState g;
  g.thermal = thermal_params(hw, spec.cooling);
  if (!spec.thermal) no_limits(g.thermal);
  return g;
}

GpuState straggler_gpu_state(const HardwareSpec& hw, const NonIdealSpec& spec,
                             const StragglerSpec& s, const GpuState& normal) {
  GpuState st = normal;
  st.base = Derate{s.clock_factor, s.hbm_factor};
  if (s.own_cooling) {
    st.thermal = thermal_params(hw, s.cooling);
    if (!spec.thermal) no_limits(st.thermal);
  }
  return st;
}

void merge_gpu_state(GpuState& x, const GpuState& st, int64_t g, double tdp_W) {
  const bool hotter = st.thermal.die_steady_C(tdp_W) > x.thermal.die_steady_C(tdp_W);
  const bool worse = st.base.slowdown(0.5, 0.5) > x.base.slowdown(0.5, 0.5) || hotter;
  if (!worse) return;
  x.base = Derate{std::min(x.base.clock, st.base.clock), std::min(x.base.hbm, st.base.hbm)};
  if (hotter) x.thermal = st.thermal;
  x.gpu = g;
}

DvfsPolicy dvfs_policy(const NonIdealSpec& spec) {
  DvfsPolicy d;
  d.enabled =
      spec.thermal && (spec.mitigation == Mitigation::Dvfs || spec.mitigation == Mitigation::Both);
  return d;
}

ColdStart heating_from_idle(const ThermalParams& p, std::span<const PowerSegment> profile,
                            const DvfsPolicy& dvfs, double idle_W, const ReplayOptions& o,
                            bool throttles) {
  if (throttles || dvfs.enabled || o.record) return replay_cold_start(p, profile, dvfs, idle_W, o);
  ColdStart none;
  none.first_throttle_s = none.first_dvfs_s = std::numeric_limits<double>::infinity();
  return none;
}

void set_power_columns(double energy_J, double step_s, double gpus, double tokens,
                       double peak_gpu_W, double swing_W, EvalResult& r) {
  r.energy_per_step_J = energy_J;
  r.avg_gpu_power_W = energy_J / (gpus * step_s);
  r.peak_gpu_power_W = peak_gpu_W;
  r.tokens_per_J = tokens / energy_J;
  r.cluster_power_swing_MW = swing_W / 1e6;
}

void set_thermal_columns(const ThermalParams& p, double die_C, double hbm_C,
                         double throttle_fraction, double dvfs_fraction, const ColdStart& cold,
                         EvalResult& r) {
  if (die_C > p.die.shutdown_C || hbm_C > p.hbm.shutdown_C) r.status = Status::Overheat;
  r.gpu_temperature_C = die_C;
  r.hbm_temperature_C = hbm_C;
  r.throttle_fraction = throttle_fraction;
  r.dvfs_fraction = dvfs_fraction;
  r.dvfs_warmup_engagements = cold.dvfs_engagements;
  r.time_to_throttle_s = cold.first_throttle_s;
}

}  // namespace rapid
