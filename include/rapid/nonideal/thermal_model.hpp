// The lumped thermal model of one GPU (docs/nonideal.md sec 2):
//   dT/dt = alpha * P - beta * (T - T_ambient)
// integrated exactly for piecewise-constant power (T relaxes exponentially towards
// T_inf = T_ambient + alpha P / beta with rate beta), and the throttle law above the
// threshold: the SM clock and/or HBM bandwidth kept, as a function of the temperature.
#pragma once

#include <cstdint>

namespace rapid {

/// How a hot GPU derates (hardware file `thermal: law:`).
///  Linear: the derate grows linearly from none at throttle_C to its full depth at
///          throttle_C + span_C (firmware steps clocks down progressively: NVIDIA's "SW
///          thermal slowdown"); a unique steady state above the threshold.
///  Step:   full depth at throttle_C, released below throttle_C - hysteresis_C.
enum class ThrottleLaw : uint8_t { Linear, Step };

struct ThermalParams {
  double alpha_C_per_J = 0.015;  ///< 1 / heat capacity
  double beta_per_s = 0.15;      ///< heat-removal rate (cooling)
  double ambient_C = 35;
  double throttle_C = 95;   ///< throttle threshold (HBM max operating temperature)
  double span_C = 5;        ///< Linear: degrees over which the derate reaches full depth
  double hysteresis_C = 2;  ///< Step: release below throttle_C - hysteresis_C
  ThrottleLaw law = ThrottleLaw::Linear;
  double clock_keep = 1.0;  ///< SM clock fraction at full depth
  double hbm_keep = 0.73;   ///< HBM bandwidth fraction at full depth
  double shutdown_C = 102;  ///< hotter at the steady state: the GPU cannot run (overheat)

  /// Steady temperature under constant power P: T_ambient + alpha P / beta.
  double steady_C(double power_W) const { return ambient_C + alpha_C_per_J * power_W / beta_per_s; }
  /// Power that holds the GPU at temperature T: beta (T - T_ambient) / alpha.
  double holding_power_W(double T_C) const {
    return beta_per_s * (T_C - ambient_C) / alpha_C_per_J;
  }
  /// Temperature after `dt_s` at constant power from `T0_C` (exact solution).
  double after(double T0_C, double power_W, double dt_s) const;
  /// Time from T0 to reach `target_C` at constant power (infinity when it is never reached).
  double time_to(double T0_C, double power_W, double target_C) const;
  /// Integral of T over [0, dt] from T0 at constant power (for time averages).
  double integral(double T0_C, double power_W, double dt_s) const;
  /// Derate depth in [0, 1] of the linear law at temperature T (0 below the threshold).
  double linear_depth(double T_C) const;
};

/// What a GPU keeps of its clock and HBM bandwidth at derate depth `d` in [0, 1].
struct Derate {
  double clock = 1.0, hbm = 1.0;
  bool operator==(const Derate&) const = default;
  /// Time multiplier of work whose full-speed time is `compute_share` compute-bound and
  /// `memory_share` memory-bound (the rest unaffected): shares / what is kept.
  double slowdown(double compute_share, double memory_share) const {
    return (1.0 - compute_share - memory_share) + compute_share / clock + memory_share / hbm;
  }
};
Derate derate_at_depth(const ThermalParams& p, double depth);

/// Power of work under a derate: the idle part stays, the compute-bound dynamic part's
/// energy scales with the square of the clock (dynamic power C V^2 f with the voltage
/// tracking the clock, docs/nonideal.md sec 2), the memory part's energy stays, and the
/// work takes `slowdown` times longer.
struct WorkPower {
  double idle_W = 0;     ///< static power, drawn whatever runs
  double compute_W = 0;  ///< dynamic power of the compute-bound part at full clock
  double memory_W = 0;   ///< dynamic power of the data movement
  double compute_share = 0, memory_share = 0;  ///< of the full-speed time (roofline)
  double full_W() const { return idle_W + compute_W + memory_W; }
  bool operator==(const WorkPower&) const = default;
  double at(const Derate& d) const {
    const double s = d.slowdown(compute_share, memory_share);
    return idle_W + (compute_W * d.clock * d.clock + memory_W) / s;
  }
};

/// The closed form of the analytical mode (docs/nonideal.md sec 2): the steady state of a
/// GPU whose step draws `w` on average. Linear law: the temperature T* in [throttle,
/// throttle + span] where beta (T* - T_amb) = alpha P(depth(T*)) (bisection, monotone);
/// Step law: the GPU holds the threshold throttled a fraction d of the time with
/// d P_throttled + (1 - d) P_full = holding power (a sliding mode; hysteresis neglected).
struct ThermalSteadyState {
  double temperature_C = 0;  ///< time-average temperature
  double throttle_fraction = 0;
  double slowdown = 1.0;  ///< time of the work / its time unthrottled
  double power_W = 0;     ///< average power at the steady state
  Derate derate;          ///< time-averaged clock and HBM kept
};
ThermalSteadyState steady_state(const ThermalParams& p, const WorkPower& w);

}  // namespace rapid
