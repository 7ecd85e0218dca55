#include "rapid/nonideal/thermal_report.hpp"

#include <fmt/format.h>

namespace rapid {

std::string describe_thermal(const ThermalReport& t) {
  std::string out = fmt::format(
      "steady state {} simulation{} to the fixed point (step {:.4f} s against {:.4f} s "
      "unthrottled), {} step periods replayed (over every GPU class and simulation)\n",
      t.iterations, t.iterations == 1 ? "" : "s", t.step_s, t.unthrottled_step_s, t.periods);
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < t.instances.size() && i < kShown; ++i) {
    const ReplayResult& r = t.instances[i];
    out += fmt::format(
        "  GPU {:<6} {:5.1f} C mean, {:5.1f} C max, throttled {:3.0f}%, DVFS {:3.0f}%, clock "
        "{:.3f}, HBM {:.3f} kept, {:.0f} W mean, {:.0f} W peak\n",
        t.first_gpu[i], r.temperature_avg_C, r.temperature_max_C, 100 * r.throttle_fraction,
        100 * r.dvfs_fraction, r.effective.clock, r.effective.hbm, r.avg_power_W, r.peak_power_W);
  }
  if (t.instances.size() > kShown)
    out += fmt::format("  ... and {} more\n", t.instances.size() - kShown);
  return out;
}

void add_thermal_counters(const ThermalReport& t, double hbm_bandwidth_Bps,
                          des::Timeline& timeline) {
  for (size_t i = 0; i < t.instances.size(); ++i) {
    // A simulated instance's tracks go on its process; the normal replicas of a stage a
    // straggler stands for get a process of their own.
    const int32_t inst =
        t.waits[i] ? timeline.add_process(fmt::format(
                         "GPU {} (the replicas of stage instance {} waiting for its straggler)",
                         t.first_gpu[i], t.inst[i]))
                   : t.inst[i];
    for (const ThermalSample& s : t.instances[i].trace) {
      timeline.add_counter({inst, "temperature_C", s.t_s, s.temperature_C});
      timeline.add_counter({inst, "power_W", s.t_s, s.power_W});
      timeline.add_counter({inst, "sm_clock", s.t_s, s.clock});
      timeline.add_counter({inst, "hbm_bandwidth_TBps", s.t_s, s.hbm * hbm_bandwidth_Bps / 1e12});
    }
  }
}

}  // namespace rapid
