#include "rapid/nonideal/thermal_feedback.hpp"

#include <limits>

#include "nonideal_internal.hpp"
#include "rapid/nonideal/power_model.hpp"

namespace rapid {

bool GpuState::runs_like(const GpuState& o) const {
  return base == o.base && nonideal_detail::same_cooling(thermal, o.thermal);
}

GpuState normal_gpu_state(const HardwareSpec& hw, const NonIdealSpec& spec) {
  GpuState g;
  g.thermal = thermal_params(hw, spec.cooling.beta_per_s, spec.cooling.ambient_C,
                             spec.cooling.alpha_C_per_J);
  if (!spec.thermal) g.thermal.throttle_C = std::numeric_limits<double>::infinity();
  return g;
}

GpuState straggler_gpu_state(const HardwareSpec& hw, const NonIdealSpec& spec,
                             const StragglerSpec& s, const GpuState& normal) {
  GpuState st = normal;
  st.base = Derate{s.clock_factor, s.hbm_factor};
  if (s.own_cooling) {
    st.thermal =
        thermal_params(hw, s.cooling.beta_per_s, s.cooling.ambient_C, s.cooling.alpha_C_per_J);
    if (!spec.thermal) st.thermal.throttle_C = normal.thermal.throttle_C;
  }
  return st;
}

void merge_gpu_state(GpuState& x, const GpuState& st, int64_t g, double tdp_W) {
  const bool hotter = st.thermal.steady_C(tdp_W) > x.thermal.steady_C(tdp_W);
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

}  // namespace rapid
