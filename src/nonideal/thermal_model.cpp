#include "rapid/nonideal/thermal_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rapid {

// Exact solution of dT/dt = alpha P - beta (T - T_amb) for constant P (a linear first-order
// ODE): T(t) = T_inf + (T0 - T_inf) e^{-beta t}, T_inf = T_amb + alpha P / beta.
double ThermalParams::after(double T0_C, double power_W, double dt_s) const {
  const double inf = steady_C(power_W);
  return inf + (T0_C - inf) * std::exp(-beta_per_s * dt_s);
}

// Inverting the solution: t = ln((T0 - T_inf) / (target - T_inf)) / beta, when the target
// lies strictly between T0 and T_inf (T_inf itself is only approached).
double ThermalParams::time_to(double T0_C, double power_W, double target_C) const {
  if (target_C == T0_C) return 0.0;
  const double inf = steady_C(power_W);
  const double a = T0_C - inf, b = target_C - inf;
  if (b == 0 || (a > 0) != (b > 0) || std::abs(b) >= std::abs(a))
    return std::numeric_limits<double>::infinity();
  return std::log(a / b) / beta_per_s;
}

// Integral of the solution: T_inf dt + (T0 - T_inf)(1 - e^{-beta dt}) / beta.
double ThermalParams::integral(double T0_C, double power_W, double dt_s) const {
  const double inf = steady_C(power_W);
  return inf * dt_s + (T0_C - inf) * (1.0 - std::exp(-beta_per_s * dt_s)) / beta_per_s;
}

double ThermalParams::linear_depth(double T_C) const {
  if (T_C <= throttle_C) return 0.0;
  if (span_C <= 0) return 1.0;
  return std::min(1.0, (T_C - throttle_C) / span_C);
}

Derate derate_at_depth(const ThermalParams& p, double depth) {
  return Derate{1.0 - depth * (1.0 - p.clock_keep), 1.0 - depth * (1.0 - p.hbm_keep)};
}

namespace {

// The work's progress rate under a derate that holds a fraction `d` of the time (1 when
// never): (1 - d) + d / slowdown, and the time-averaged clock and bandwidth kept.
ThermalSteadyState duty_cycle(const ThermalParams& p, const WorkPower& w, double d) {
  ThermalSteadyState s;
  const Derate full = derate_at_depth(p, 1.0);
  const double slow = full.slowdown(w.compute_share, w.memory_share);
  s.throttle_fraction = d;
  s.slowdown = 1.0 / ((1.0 - d) + d / slow);
  s.power_W = (1.0 - d) * w.full_W() + d * w.at(full);
  s.derate = Derate{1.0 - d * (1.0 - full.clock), 1.0 - d * (1.0 - full.hbm)};
  return s;
}

}  // namespace

ThermalSteadyState steady_state(const ThermalParams& p, const WorkPower& w) {
  const double full = w.full_W();
  if (p.steady_C(full) <= p.throttle_C) {  // never reaches the threshold
    ThermalSteadyState s;
    s.temperature_C = p.steady_C(full);
    s.power_W = full;
    return s;
  }
  const Derate deepest = derate_at_depth(p, 1.0);
  const double floor_W = w.at(deepest);
  if (p.law == ThrottleLaw::Step) {
    // Sliding mode at the threshold: the duty d solves d P_thr + (1 - d) P_full = P_hold;
    // throttled for good (d = 1) when even P_thr keeps it above.
    if (p.steady_C(floor_W) >= p.throttle_C) {
      ThermalSteadyState s = duty_cycle(p, w, 1.0);
      s.temperature_C = p.steady_C(floor_W);
      return s;
    }
    const double hold = p.holding_power_W(p.throttle_C);
    ThermalSteadyState s = duty_cycle(p, w, (full - hold) / (full - floor_W));
    s.temperature_C = p.throttle_C;
    return s;
  }
  // Linear law: f(T) = beta (T - T_amb) - alpha P(depth(T)) rises with T (P falls as the
  // derate deepens): bisection on [threshold, threshold + span].
  auto power_at = [&](double T) { return w.at(derate_at_depth(p, p.linear_depth(T))); };
  double lo = p.throttle_C, hi = p.throttle_C + p.span_C;
  if (p.steady_C(floor_W) >= hi) {
    ThermalSteadyState s;
    s.temperature_C = p.steady_C(floor_W);
    s.throttle_fraction = 1.0;
    s.derate = deepest;
    s.slowdown = deepest.slowdown(w.compute_share, w.memory_share);
    s.power_W = floor_W;
    return s;
  }
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (p.beta_per_s * (mid - p.ambient_C) < p.alpha_C_per_J * power_at(mid) ? lo : hi) = mid;
  }
  ThermalSteadyState s;
  s.temperature_C = 0.5 * (lo + hi);
  s.throttle_fraction = 1.0;
  s.derate = derate_at_depth(p, p.linear_depth(s.temperature_C));
  s.slowdown = s.derate.slowdown(w.compute_share, w.memory_share);
  s.power_W = power_at(s.temperature_C);
  return s;
}

}  // namespace rapid
