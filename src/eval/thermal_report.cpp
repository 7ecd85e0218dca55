#include "rapid/eval/thermal_report.hpp"

#include <fmt/format.h>

#include <cmath>

namespace rapid {

namespace {

// "at 12.3 s" or "never" (within the heating replayed).
std::string when(double t_s) {
  return std::isfinite(t_s) ? fmt::format("at {:.1f} s", t_s) : std::string("never");
}

}  // namespace

std::string describe_thermal(const ThermalReport& t) {
  std::string out = fmt::format(
      "steady state {} simulation{} to the fixed point (step {:.4f} s against {:.4f} s "
      "unthrottled), {} step periods replayed (over every GPU class and simulation)\n",
      t.iterations, t.iterations == 1 ? "" : "s", t.step_s, t.unthrottled_step_s, t.periods);
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < t.instances.size() && i < kShown; ++i) {
    const ReplayResult& r = t.instances[i];
    // One "throttled" figure per GPU, the same as the row's (docs/nonideal.md sec 2): the
    // share of time under any thermal slowdown; the die's and the HBM's own shares after.
    out += fmt::format(
        "  GPU {:<6} die {:5.1f} C mean, {:5.1f} C max; HBM {:5.1f} C mean; {}, DVFS {:3.0f}%; "
        "clock {:.3f}, HBM {:.3f} kept; {:.0f} W mean, {:.0f} W peak\n",
        t.first_gpu[i], r.die_avg_C, r.die_max_C, r.hbm_avg_C,
        describe_throttling(r.throttle_fraction, r.die_throttle_fraction, r.hbm_throttle_fraction),
        100 * r.dvfs_fraction, r.effective.clock, r.effective.hbm, r.avg_power_W, r.peak_power_W);
    if (i < t.cold.size() && t.cold[i].length_s > 0) {
      const ColdStart& c = t.cold[i];
      out += fmt::format(
          "         heating from idle: first throttled {}; DVFS lowered the clock {} time{} "
          "before (first {})\n",
          when(c.first_throttle_s), c.dvfs_engagements, c.dvfs_engagements == 1 ? "" : "s",
          when(c.first_dvfs_s));
    }
  }
  if (t.instances.size() > kShown)
    out += fmt::format("  ... and {} more\n", t.instances.size() - kShown);
  return out;
}

std::string describe_throttling(double any, double die, double hbm) {
  return fmt::format("throttled {:.0f}% of the time (die {:.0f}%, HBM {:.0f}%)", 100 * any,
                     100 * die, 100 * hbm);
}

void add_thermal_counters(const ThermalReport& t, double hbm_bandwidth_Bps,
                          des::Timeline& timeline) {
  for (size_t i = 0; i < t.instances.size() && i < t.cold.size(); ++i) {
    // A simulated instance's tracks go on its process; the normal replicas of a stage a
    // straggler stands for get a process of their own.
    const int32_t inst =
        t.waits[i] ? timeline.add_process(fmt::format(
                         "GPU {} (the replicas of stage instance {} waiting for its straggler)",
                         t.first_gpu[i], t.inst[i]))
                   : t.inst[i];
    for (const ThermalSample& s : t.cold[i].trace) {
      timeline.add_counter({inst, "temperature_C", s.t_s, s.die_C});
      timeline.add_counter({inst, "hbm_temperature_C", s.t_s, s.hbm_C});
      timeline.add_counter({inst, "power_W", s.t_s, s.power_W});
      timeline.add_counter({inst, "sm_clock", s.t_s, s.clock});
      timeline.add_counter({inst, "hbm_bandwidth_TBps", s.t_s, s.hbm * hbm_bandwidth_Bps / 1e12});
    }
  }
}

}  // namespace rapid
