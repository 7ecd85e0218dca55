// The lumped thermal model (docs/nonideal.md sec 2) derived by hand: the exact solution of
// dT/dt = alpha P - beta (T - T_amb) at constant power, the calibration rule of alpha, the
// closed-form steady states of both throttle laws, and the periodic replay: constant power,
// a square wave, a Step-law limit cycle and predictive DVFS.
#include "rapid/nonideal/thermal_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_replay.hpp"
#include "rapid/spec/nonideal_spec.hpp"

namespace rapid {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// alpha 0.015 C/J, beta 0.15 /s, ambient 25 C: alpha / beta = 0.1 C/W, so T_inf = 25 + P / 10.
ThermalParams round_params() {
  ThermalParams p;
  p.alpha_C_per_J = 0.015;
  p.beta_per_s = 0.15;
  p.ambient_C = 25;
  return p;
}

// A purely compute-bound op: idle 100 W plus `compute_W` of dynamic power.
WorkPower compute_bound(double compute_W) {
  WorkPower w{.idle_W = 100, .compute_W = compute_W, .compute_share = 1.0};
  return w;
}

double rel(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

// ---------------------------------------------------------------------------------------
// 1a. Constant power: T(t) = T_inf + (T0 - T_inf) e^{-beta t}.
TEST(ThermalModel, ExactSolutionAtConstantPower) {
  const ThermalParams p = round_params();
  // T_inf = 25 + 0.015 x 400 / 0.15 = 25 + 40 = 65 C; holding 65 C takes 0.15 x 40 / 0.015
  // = 400 W.
  EXPECT_NEAR(p.steady_C(400), 65.0, 1e-12);
  EXPECT_NEAR(p.holding_power_W(65), 400.0, 1e-9);
  // From 25 C for 30 s: 65 - 40 e^{-0.15 x 30} = 65 - 40 e^{-4.5} = 65 - 0.44436 = 64.5556 C.
  const double after30 = 65.0 - 40.0 * std::exp(-4.5);
  EXPECT_NEAR(p.after(25, 400, 30), after30, 1e-9 * after30);
  EXPECT_NEAR(p.after(25, 400, 30), 64.5556, 1e-4);
  EXPECT_NEAR(p.after(25, 400, 0), 25.0, 1e-12);
  // Cooling from 80 C at 400 W for 10 s: 65 + 15 e^{-1.5} = 65 + 3.3470 = 68.3470 C.
  EXPECT_NEAR(p.after(80, 400, 10), 65.0 + 15.0 * std::exp(-1.5), 1e-9 * 68.347);

  // 95% of the way, 25 + 0.95 x 40 = 63 C: (25 - 65) / (63 - 65) = 20 = e^{0.15 t},
  // t = ln 20 / 0.15 = 2.99573 / 0.15 = 19.9715 s.
  const double t95 = std::log(20.0) / 0.15;
  EXPECT_NEAR(p.time_to(25, 400, 63), t95, 1e-9 * t95);
  EXPECT_NEAR(p.time_to(25, 400, 63), 19.9715, 1e-4);
  // Cooling 80 -> 70 C towards 65: ln(15 / 5) / 0.15 = ln 3 / 0.15 = 7.3241 s.
  EXPECT_NEAR(p.time_to(80, 400, 70), std::log(3.0) / 0.15, 1e-9 * 7.3241);
  // The target itself: no time. T_inf or beyond, or the wrong side of T0: never.
  EXPECT_EQ(p.time_to(40, 400, 40), 0.0);
  EXPECT_EQ(p.time_to(25, 400, 65), kInf);
  EXPECT_EQ(p.time_to(25, 400, 70), kInf);
  EXPECT_EQ(p.time_to(50, 400, 45), kInf);  // heating: 45 C lies behind

  // Integral over [0, 30] from 25 C: 65 x 30 + (25 - 65)(1 - e^{-4.5}) / 0.15
  //   = 1950 - 266.667 x 0.988891 = 1950 - 263.7043 = 1686.2957 C s.
  const double integral = 65.0 * 30.0 - 40.0 * (1.0 - std::exp(-4.5)) / 0.15;
  EXPECT_NEAR(p.integral(25, 400, 30), integral, 1e-9 * integral);
  EXPECT_NEAR(p.integral(25, 400, 30), 1686.2957, 1e-4);
  // At T_inf the integral is T_inf dt.
  EXPECT_NEAR(p.integral(65, 400, 12), 65.0 * 12.0, 1e-9 * 780);
}

// 1b. The calibration rule: idle -> TDP heats a GPU by rise_C under air cooling.
TEST(ThermalModel, CalibrationRuleGivesTheRiseFromIdleToTdp) {
  HardwareSpec hw;  // A100-like: TDP 400 W, idle 90 W, rise 40 C
  hw.tdp_W = 400;
  hw.power.idle_W = 90;
  hw.thermal.rise_C = 40;
  hw.thermal.throttle_C = 92;
  hw.thermal.span_C = 4;
  hw.thermal.hysteresis_C = 3;
  hw.thermal.law = 1;
  hw.thermal.clock_keep = 0.6;
  hw.thermal.hbm_keep = 0.8;
  const ThermalParams p = thermal_params(hw, 0.15, 25, 0);
  // alpha = rise x 0.15 / (TDP - idle) = 40 x 0.15 / 310 = 0.0193548 C/J.
  const double alpha = 40.0 * 0.15 / 310.0;
  EXPECT_NEAR(p.alpha_C_per_J, alpha, 1e-12 * alpha);
  EXPECT_NEAR(p.alpha_C_per_J, 0.0193548, 1e-7);
  EXPECT_EQ(p.beta_per_s, 0.15);
  EXPECT_EQ(p.ambient_C, 25.0);
  // Steady idle -> steady TDP: alpha (400 - 90) / 0.15 = 40 C.
  EXPECT_NEAR(p.steady_C(400) - p.steady_C(90), 40.0, 1e-9 * 40);
  // 30 s of TDP from the idle equilibrium: 40 (1 - e^{-4.5}) = 39.5556 C, 98.9% of it.
  const double T_idle = p.steady_C(90);
  EXPECT_NEAR(p.after(T_idle, 400, 30) - T_idle, 40.0 * (1.0 - std::exp(-4.5)), 1e-9 * 40);
  EXPECT_GT((p.after(T_idle, 400, 30) - T_idle) / 40.0, 0.988);
  // The law and its limits come from the file.
  EXPECT_EQ(p.throttle_C, 92.0);
  EXPECT_EQ(p.span_C, 4.0);
  EXPECT_EQ(p.hysteresis_C, 3.0);
  EXPECT_EQ(p.law, ThrottleLaw::Step);
  EXPECT_EQ(p.clock_keep, 0.6);
  EXPECT_EQ(p.hbm_keep, 0.8);
  // A cooling's own alpha (> 0) wins over the rule.
  const ThermalParams q = thermal_params(hw, 0.35, 32, 0.02);
  EXPECT_EQ(q.alpha_C_per_J, 0.02);
  EXPECT_EQ(q.beta_per_s, 0.35);
  EXPECT_EQ(q.ambient_C, 32.0);
}

TEST(ThermalModel, DerateAndSlowdown) {
  ThermalParams p = round_params();
  p.clock_keep = 0.5;
  p.hbm_keep = 0.73;
  // Depth 0.4: clock 1 - 0.4 x 0.5 = 0.8, HBM 1 - 0.4 x 0.27 = 0.892.
  const Derate d = derate_at_depth(p, 0.4);
  EXPECT_NEAR(d.clock, 0.8, 1e-12);
  EXPECT_NEAR(d.hbm, 0.892, 1e-12);
  // Work 60% compute-bound, 30% memory-bound: 0.1 + 0.6 / 0.8 + 0.3 / 0.892
  //   = 0.1 + 0.75 + 0.336323 = 1.186323.
  EXPECT_NEAR(d.slowdown(0.6, 0.3), 0.1 + 0.75 + 0.3 / 0.892, 1e-12);
  // Linear depth: 0 at and below the threshold, (T - 95) / 5 across the span, then 1.
  p.throttle_C = 95;
  p.span_C = 5;
  EXPECT_EQ(p.linear_depth(90), 0.0);
  EXPECT_EQ(p.linear_depth(95), 0.0);
  EXPECT_NEAR(p.linear_depth(97), 0.4, 1e-12);
  EXPECT_EQ(p.linear_depth(100), 1.0);
  EXPECT_EQ(p.linear_depth(130), 1.0);
}

// 1c. Step law: a sliding mode at the threshold.
TEST(ThermalSteadyState, StepLawSlidingModeComputeBound) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Step;
  p.throttle_C = 85;
  p.clock_keep = 0.5;
  p.hbm_keep = 0.73;
  // Full power 100 + 600 = 700 W: T_inf = 95 C > 85. Holding 85 C: 0.15 x 60 / 0.015 = 600 W.
  // Throttled (clock 0.5): the work takes 1 / 0.5 = 2x as long with 0.5^2 of its dynamic
  // energy: 100 + 600 x 0.25 / 2 = 175 W (T_inf = 42.5 C < 85: it cools).
  // Duty d = (700 - 600) / (700 - 175) = 100 / 525 = 4 / 21 = 0.190476.
  // Slowdown 1 / ((1 - d) + d / 2) = 1 / (1 - 2 / 21) = 21 / 19 = 1.105263.
  // Power (17/21) x 700 + (4/21) x 175 = 12600 / 21 = 600 W, the holding power.
  const WorkPower w = compute_bound(600);
  EXPECT_NEAR(w.at(derate_at_depth(p, 1.0)), 175.0, 1e-12);
  const ThermalSteadyState s = steady_state(p, w);
  EXPECT_NEAR(s.throttle_fraction, 4.0 / 21.0, 1e-12);
  EXPECT_NEAR(s.slowdown, 21.0 / 19.0, 1e-12);
  EXPECT_NEAR(s.power_W, 600.0, 1e-9);
  EXPECT_EQ(s.temperature_C, 85.0);
  // Time-averaged clock 1 - d x 0.5 = 19 / 21, HBM 1 - d x 0.27.
  EXPECT_NEAR(s.derate.clock, 19.0 / 21.0, 1e-12);
  EXPECT_NEAR(s.derate.hbm, 1.0 - 0.27 * 4.0 / 21.0, 1e-12);
}

TEST(ThermalSteadyState, StepLawSlidingModeMixedWork) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Step;
  p.throttle_C = 85;
  p.clock_keep = 0.5;
  p.hbm_keep = 0.73;
  // 60% compute-bound (500 W), 30% memory-bound (100 W), 10% neither; full 700 W.
  WorkPower w{
      .idle_W = 100, .compute_W = 500, .memory_W = 100, .compute_share = 0.6, .memory_share = 0.3};
  // Throttled: s = 0.1 + 0.6 / 0.5 + 0.3 / 0.73 = 0.1 + 1.2 + 0.410959 = 1.710959;
  // P_thr = 100 + (500 x 0.25 + 100) / 1.710959 = 100 + 131.5052 = 231.5052 W.
  // d = (700 - 600) / (700 - 231.5052) = 0.213450; slowdown 1 / (1 - d + d / s) = 1.097328.
  const double s_full = 0.1 + 0.6 / 0.5 + 0.3 / 0.73;
  const double P_thr = 100.0 + (500.0 * 0.25 + 100.0) / s_full;
  const double d = (700.0 - 600.0) / (700.0 - P_thr);
  const double slowdown = 1.0 / ((1.0 - d) + d / s_full);
  EXPECT_NEAR(d, 0.213450, 1e-6);
  EXPECT_NEAR(slowdown, 1.097328, 1e-6);
  const ThermalSteadyState st = steady_state(p, w);
  EXPECT_NEAR(st.throttle_fraction, d, 1e-9 * d);
  EXPECT_NEAR(st.slowdown, slowdown, 1e-9 * slowdown);
  EXPECT_NEAR(st.power_W, 600.0, 1e-9 * 600);
  EXPECT_EQ(st.temperature_C, 85.0);
}

TEST(ThermalSteadyState, StepLawThrottledForGoodAndNeverReached) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Step;
  p.clock_keep = 0.5;
  // Threshold 40 C: even throttled, 175 W keeps it at 25 + 17.5 = 42.5 C: d = 1, slowdown 2.
  p.throttle_C = 40;
  const ThermalSteadyState s = steady_state(p, compute_bound(600));
  EXPECT_EQ(s.throttle_fraction, 1.0);
  EXPECT_NEAR(s.slowdown, 2.0, 1e-12);
  EXPECT_NEAR(s.power_W, 175.0, 1e-9);
  EXPECT_NEAR(s.temperature_C, 42.5, 1e-9);
  // Threshold 95 C = T_inf of 700 W: never throttled.
  p.throttle_C = 95;
  const ThermalSteadyState n = steady_state(p, compute_bound(600));
  EXPECT_EQ(n.throttle_fraction, 0.0);
  EXPECT_EQ(n.slowdown, 1.0);
  EXPECT_NEAR(n.temperature_C, 95.0, 1e-9);
  EXPECT_NEAR(n.power_W, 700.0, 1e-9);
}

// 1d. Linear law: beta (T - T_amb) = alpha P(depth(T)) inside [threshold, threshold + span].
TEST(ThermalSteadyState, LinearLawMemoryBoundSolvedByHand) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Linear;
  p.throttle_C = 85;
  p.span_C = 5;
  p.hbm_keep = 0.73;
  // Purely memory-bound work: P(depth) = idle + M / (1 / hbm) = 100 + 600 hbm, with
  // hbm = 1 - 0.27 (T - 85) / 5 = 1 - 0.054 x, x = T - 85. The balance, beta / alpha = 10:
  //   10 (60 + x) = 100 + 600 (1 - 0.054 x)  ->  600 + 10 x = 700 - 32.4 x
  //   -> x = 100 / 42.4 = 2.358491, T* = 87.358491 C (inside [85, 90]),
  // depth 0.471698, hbm 0.872642, slowdown 1 / hbm = 1.145946, P = 10 (T* - 25) = 623.5849 W.
  WorkPower w{.idle_W = 100, .memory_W = 600, .memory_share = 1.0};
  const double x = 100.0 / 42.4, T = 85.0 + x, hbm = 1.0 - 0.054 * x;
  const ThermalSteadyState s = steady_state(p, w);
  EXPECT_NEAR(s.temperature_C, T, 1e-9 * T);
  EXPECT_NEAR(s.temperature_C, 87.358491, 1e-6);
  EXPECT_NEAR(s.derate.hbm, hbm, 1e-9);
  EXPECT_NEAR(s.derate.clock, 1.0, 1e-12);  // clock_keep 1: the SM clock is kept
  EXPECT_NEAR(s.slowdown, 1.0 / hbm, 1e-9);
  EXPECT_NEAR(s.slowdown, 1.145946, 1e-6);
  EXPECT_NEAR(s.power_W, 10.0 * (T - 25.0), 1e-9 * 623.58);
  EXPECT_EQ(s.throttle_fraction, 1.0);
}

TEST(ThermalSteadyState, LinearLawBalancesHeatOnMixedWork) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Linear;
  p.throttle_C = 85;
  p.span_C = 5;
  p.clock_keep = 0.5;
  p.hbm_keep = 0.73;
  WorkPower w{
      .idle_W = 100, .compute_W = 500, .memory_W = 100, .compute_share = 0.6, .memory_share = 0.3};
  // Full 700 W -> 95 C > 90; fully derated 231.5 W -> 48.2 C < 85: T* inside the span.
  const ThermalSteadyState s = steady_state(p, w);
  EXPECT_GE(s.temperature_C, 85.0);
  EXPECT_LE(s.temperature_C, 90.0);
  const Derate d = derate_at_depth(p, p.linear_depth(s.temperature_C));
  const double P = w.at(d);
  EXPECT_NEAR(p.beta_per_s * (s.temperature_C - p.ambient_C), p.alpha_C_per_J * P, 1e-6);
  EXPECT_NEAR(s.power_W, P, 1e-6);
  EXPECT_NEAR(s.slowdown, d.slowdown(0.6, 0.3), 1e-9);
  // Past the span: when even the full derate keeps it above threshold + span, full depth.
  p.span_C = 0.5;
  p.throttle_C = 45;  // fully derated: 48.2 C > 45.5
  const ThermalSteadyState f = steady_state(p, w);
  const double s_full = 0.1 + 0.6 / 0.5 + 0.3 / 0.73;
  EXPECT_NEAR(f.slowdown, s_full, 1e-12);
  EXPECT_NEAR(f.power_W, 100.0 + 225.0 / s_full, 1e-9);
  EXPECT_NEAR(f.temperature_C, 25.0 + 0.1 * (100.0 + 225.0 / s_full), 1e-9);
}

// `thermal: true` without `cooling:` is air cooling (its name says so): the air preset's
// beta 0.15 /s and 27 C (ASHRAE's recommended inlet limit, nonideal_spec.cpp), as
// `cooling: air` gives; describe_scenario's own example reads "thermal (air, beta 0.15/s,
// 27 C)".
TEST(ThermalCooling, DefaultCoolingIsTheAirPreset) {
  const NonIdealSpec bare =
      parse_scenarios(YAML::Load("{thermal: true}"), YAML::Node(), "job.yaml").front();
  const NonIdealSpec air =
      parse_scenarios(YAML::Load("{thermal: true, cooling: air}"), YAML::Node(), "job.yaml")
          .front();
  EXPECT_EQ(air.cooling.name, "air");
  EXPECT_EQ(air.cooling.beta_per_s, 0.15);
  EXPECT_EQ(air.cooling.ambient_C, 27.0);
  EXPECT_EQ(bare.cooling.name, air.cooling.name);
  EXPECT_EQ(bare.cooling.beta_per_s, air.cooling.beta_per_s);
  EXPECT_EQ(bare.cooling.ambient_C, air.cooling.ambient_C);
}

TEST(ThermalCooling, PresetsAndOverrides) {
  // liquid: beta 0.35 /s, 32 C (ASHRAE W32); a mapping overrides key by key.
  const NonIdealSpec liquid =
      parse_scenarios(YAML::Load("{thermal: true, cooling: liquid}"), YAML::Node(), "job.yaml")
          .front();
  EXPECT_EQ(liquid.cooling.beta_per_s, 0.35);
  EXPECT_EQ(liquid.cooling.ambient_C, 32.0);
  const NonIdealSpec custom =
      parse_scenarios(YAML::Load("{thermal: true, cooling: {preset: air, ambient_C: 40}}"),
                      YAML::Node(), "job.yaml")
          .front();
  EXPECT_EQ(custom.cooling.beta_per_s, 0.15);
  EXPECT_EQ(custom.cooling.ambient_C, 40.0);
  EXPECT_TRUE(custom.power);  // thermal implies power
}

// ---------------------------------------------------------------------------------------
// 1e. Replay of a constant profile that never reaches the threshold.
TEST(ThermalReplay, ConstantPowerBelowThreshold) {
  const ThermalParams p = round_params();  // threshold 95 C
  // 100 + 200 = 300 W: T_inf = 25 + 30 = 55 C. The replay starts there: the first period
  // repeats the start temperature, then 60 s of 1 s periods are measured.
  const std::vector<PowerSegment> prof = {{1.0, compute_bound(200), true}};
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  EXPECT_NEAR(r.temperature_avg_C, 55.0, 1e-9);
  EXPECT_NEAR(r.temperature_max_C, 55.0, 1e-9);
  EXPECT_EQ(r.slowdown, 1.0);
  EXPECT_NEAR(r.period_s, 1.0, 1e-12);
  EXPECT_EQ(r.throttle_fraction, 0.0);
  EXPECT_EQ(r.dvfs_fraction, 0.0);
  EXPECT_NEAR(r.avg_power_W, 300.0, 1e-9);
  EXPECT_EQ(r.peak_power_W, 300.0);
  EXPECT_EQ(r.effective.clock, 1.0);
  EXPECT_EQ(r.effective.hbm, 1.0);
  EXPECT_LE(r.periods, 62);  // 1 warm-up + 60 measured (+1 for rounding)
}

// 1f. A square wave: P1 = 500 W (T1inf = 75 C) for t1 = 4 s, then P2 = 150 W (T2inf = 40 C)
// for t2 = 6 s, never near the threshold (95 C).
TEST(ThermalReplay, SquareWavePeriodicSteadyState) {
  const ThermalParams p = round_params();
  const std::vector<PowerSegment> prof = {{4.0, compute_bound(400), true},
                                          {6.0, compute_bound(50), true}};
  // Periodic state, Ta at the start of the hot half, Tb at its end (e1 = e^{-b t1}, e2 =
  // e^{-b t2}): Tb = T1 + (Ta - T1) e1, Ta = T2 + (Tb - T2) e2, so
  //   Ta = [T2 (1 - e2) + T1 (1 - e1) e2] / (1 - e1 e2)
  //      = [40 x 0.593430 + 75 x 0.451188 x 0.406570] / 0.776870 = 48.2644 C,
  //   Tb = 75 (1 - e1) + Ta e1 = 33.8391 + 26.4881 = 60.3272 C, the maximum.
  // The time average: over a period the integral of dT is 0, so the average of
  // beta (T - T_amb) equals that of alpha P: T_avg = (75 x 4 + 40 x 6) / 10 = 54 C.
  const double T1 = 75, T2 = 40, e1 = std::exp(-0.15 * 4), e2 = std::exp(-0.15 * 6);
  const double Ta = (T2 * (1 - e2) + T1 * (1 - e1) * e2) / (1 - e1 * e2);
  const double Tb = T1 * (1 - e1) + Ta * e1;
  EXPECT_NEAR(Ta, 48.2644, 1e-4);
  EXPECT_NEAR(Tb, 60.3272, 1e-4);
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  // The warm-up stops within 0.01 C of the periodic state (then e^{-1.5} per period).
  EXPECT_NEAR(r.temperature_max_C, Tb, 0.01);
  EXPECT_LT(rel(r.temperature_avg_C, 54.0), 1e-4);
  EXPECT_NEAR(r.period_s, 10.0, 1e-9);
  EXPECT_EQ(r.slowdown, 1.0);
  EXPECT_EQ(r.throttle_fraction, 0.0);
  EXPECT_NEAR(r.avg_power_W, (500.0 * 4 + 150.0 * 6) / 10, 1e-9);  // 290 W
  EXPECT_EQ(r.peak_power_W, 500.0);
}

// 1g. Step law on a constant compute-bound profile: a limit cycle between the release
// (threshold - hysteresis) and the threshold.
TEST(ThermalReplay, StepLawLimitCycleApproachesTheSlidingMode) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Step;
  p.throttle_C = 85;
  p.hysteresis_C = 2;
  p.clock_keep = 0.5;
  const std::vector<PowerSegment> prof = {{1.0, compute_bound(600), true}};
  // Throttled at 175 W (T_inf 42.5 C) from 85 down to 83 C:
  //   t_thr = ln((85 - 42.5) / (83 - 42.5)) / 0.15 = ln(1.049383) / 0.15 = 0.321347 s;
  // unthrottled at 700 W (T_inf 95 C) from 83 up to 85 C:
  //   t_full = ln((95 - 83) / (95 - 85)) / 0.15 = ln 1.2 / 0.15 = 1.215477 s.
  // Throttled fraction d_h = 0.321347 / 1.536824 = 0.209098 (the sliding mode of the
  // closed form, hysteresis neglected: 4 / 21 = 0.190476); work progresses at 1/2 while
  // throttled: slowdown (t_thr + t_full) / (t_thr / 2 + t_full) = 1.116756 (closed form
  // 21 / 19 = 1.105263). The average power (1 - d_h) 700 + d_h 175 sets the average
  // temperature (the integral of dT over a cycle is 0): 25 + 0.1 x 590.224 = 84.0224 C.
  const double t_thr = std::log(42.5 / 40.5) / 0.15, t_full = std::log(1.2) / 0.15;
  const double d_h = t_thr / (t_thr + t_full);
  const double slow_h = (t_thr + t_full) / (t_thr / 2 + t_full);
  const double T_avg = 25.0 + 0.1 * ((1 - d_h) * 700 + d_h * 175);
  EXPECT_NEAR(d_h, 0.209098, 1e-6);
  EXPECT_NEAR(slow_h, 1.116756, 1e-6);
  ReplayOptions o;
  o.window_s = 600;  // ~390 cycles: the partial cycle at the window's ends weighs < 0.1%
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{}, o);
  EXPECT_LT(r.periods, o.max_periods);
  EXPECT_LT(rel(r.throttle_fraction, d_h), 5e-3) << r.throttle_fraction;
  EXPECT_LT(rel(r.slowdown, slow_h), 5e-3) << r.slowdown;
  EXPECT_LT(rel(r.temperature_avg_C, T_avg), 5e-3) << r.temperature_avg_C;
  EXPECT_NEAR(r.temperature_max_C, 85.0, 1e-6);
  // Close to the closed form's sliding mode (hysteresis 2 C of a 60 C rise: within 2%
  // absolute on d, 1.5% on the slowdown).
  const ThermalSteadyState ss = steady_state(p, prof[0].work);
  EXPECT_NEAR(r.throttle_fraction, ss.throttle_fraction, 0.02);
  EXPECT_LT(rel(r.slowdown, ss.slowdown), 0.015);
  // Every second of this profile is work: the time-averaged clock is 1 - 0.5 d.
  EXPECT_NEAR(r.effective.clock, 1.0 - 0.5 * r.throttle_fraction, 1e-9);
  EXPECT_NEAR(r.period_s, r.slowdown * 1.0, 1e-12);
}

// A limit cycle out of step with the period may never repeat the period's start temperature
// within 0.01 C: the warm-up then ends at max_periods, and the replay must still measure.
TEST(ThermalReplay, WarmUpThatNeverSettlesStillMeasures) {
  ThermalParams p = round_params();
  p.law = ThrottleLaw::Step;
  p.throttle_C = 60;
  p.hysteresis_C = 2;
  p.clock_keep = 0.5;
  // 0.3 s periods of 700 W (T_inf 95 C; 175 W throttled, T_inf 42.5 C). The cycle:
  //   throttled 60 -> 58 C: t_thr = ln(17.5 / 15.5) / 0.15 = 0.809072 s,
  //   full 58 -> 60 C: t_full = ln(37 / 35) / 0.15 = 0.370466 s;
  //   slowdown (t_thr + t_full) / (t_thr / 2 + t_full) = 1.179538 / 0.775002 = 1.521980.
  const double t_thr = std::log(17.5 / 15.5) / 0.15, t_full = std::log(37.0 / 35.0) / 0.15;
  const double slow_h = (t_thr + t_full) / (t_thr / 2 + t_full);
  EXPECT_NEAR(slow_h, 1.521980, 1e-6);
  const std::vector<PowerSegment> prof = {{0.3, compute_bound(600), true}};
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  ASSERT_TRUE(std::isfinite(r.slowdown)) << "periods " << r.periods;
  // 60 s window of ~1.18 s cycles: the partial cycle at its ends weighs up to ~1.5%.
  EXPECT_LT(rel(r.slowdown, slow_h), 0.03) << r.slowdown;
  EXPECT_NEAR(r.temperature_max_C, 60.0, 1e-6);
}

// 1h. Predictive DVFS: every 5 s, dT/dt over the interval > 2 C/s lowers the clock to 0.9.
TEST(ThermalReplay, DvfsLowersTheClockOnTheHeatingTransientOnly) {
  const ThermalParams p = round_params();  // threshold 95 C: never throttles
  // 100 + 550 = 650 W: T_inf = 90 C. From the idle equilibrium (100 W: 35 C) the GPU
  // heats at alpha (650 - 100) = 0.015 x 550 = 8.25 C/s at first; over the first 5 s
  //   55 (1 - e^{-0.75}) / 5 = 55 x 0.527633 / 5 = 5.80397 C/s > 2,
  // so the sample at t = 5 s lowers the clock: T(5) = 35 + 29.0198 = 64.0198 C, and the
  // power after it is 100 + 550 x 0.9^2 / (1 / 0.9) = 100 + 550 x 0.729 = 500.95 W, the next
  // 1 s of work then taking 1 / 0.9 = 1.1111 s (the next trace point, at 6.1111 s).
  const std::vector<PowerSegment> prof = {{1.0, compute_bound(550), true}};
  DvfsPolicy dvfs;
  dvfs.enabled = true;
  ReplayOptions o;
  o.record = true;
  const ReplayResult r = replay_periodic(p, prof, dvfs, o);
  ASSERT_FALSE(r.trace.empty());
  const double T5 = 35.0 + 55.0 * (1.0 - std::exp(-0.75));
  EXPECT_NEAR(T5, 64.0198, 1e-4);
  EXPECT_GT((T5 - 35.0) / 5.0, dvfs.rate_C_per_s);
  bool at5 = false, at6 = false;
  for (const ThermalSample& s : r.trace) {
    if (s.t_s < 5.0 - 1e-9) {
      EXPECT_EQ(s.clock, 1.0) << "t = " << s.t_s;
      EXPECT_NEAR(s.temperature_C, 35.0 + 55.0 * (1.0 - std::exp(-0.15 * s.t_s)), 1e-9);
    } else if (std::fabs(s.t_s - 5.0) < 1e-9) {
      at5 = true;
      EXPECT_NEAR(s.clock, 0.9, 1e-12);
      EXPECT_NEAR(s.temperature_C, T5, 1e-9 * T5);
    } else if (std::fabs(s.t_s - (5.0 + 1.0 / 0.9)) < 1e-9) {
      at6 = true;
      EXPECT_NEAR(s.clock, 0.9, 1e-12);
      EXPECT_NEAR(s.power_W, 500.95, 1e-9);
    }
  }
  EXPECT_TRUE(at5);
  EXPECT_TRUE(at6);
  // The periodic steady state of flat power: the temperature does not move (T_inf = 90 C),
  // dT/dt = 0 at every sample: the clock is never lowered.
  EXPECT_EQ(r.dvfs_fraction, 0.0);
  EXPECT_NEAR(r.temperature_avg_C, 90.0, 1e-9);
  EXPECT_EQ(r.slowdown, 1.0);
  EXPECT_NEAR(r.avg_power_W, 650.0, 1e-9);
}

}  // namespace
}  // namespace rapid
