// The periodic replay and the heating from idle (docs/nonideal.md secs 2-3) derived by hand
// on the lumped die of thermal_test_params.hpp (T_inf = 25 + 0.1 P, beta 0.15 /s): constant
// power, a square wave, a Step-law limit cycle, predictive DVFS engaging before the die
// throttles; and on the H100 file's three nodes, the replay against the closed form.
#include "rapid/nonideal/thermal_replay.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rapid/nonideal/power_model.hpp"
#include "test_support.hpp"
#include "thermal_test_params.hpp"

namespace rapid {
namespace {

using test::compute_bound;
using test::lumped_die;

double rel(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

TEST(ThermalReplay, ConstantPowerBelowTheLimits) {
  const ThermalParams p = lumped_die();  // die from 87 C
  // 100 + 200 = 300 W: T_inf = 25 + 30 = 55 C. The replay starts there: the first period
  // repeats the start temperatures, then one period is measured (nothing engaged).
  const std::vector<PowerSegment> prof = {{1.0, compute_bound(200), true}};
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  EXPECT_NEAR(r.die_avg_C, 55.0, 1e-5);
  EXPECT_NEAR(r.die_max_C, 55.0, 1e-5);
  EXPECT_NEAR(r.hbm_avg_C, 25.0, 1e-3);  // the HBM sits at the coolant
  EXPECT_EQ(r.slowdown, 1.0);
  EXPECT_NEAR(r.period_s, 1.0, 1e-12);
  EXPECT_EQ(r.throttle_fraction, 0.0);
  EXPECT_EQ(r.dvfs_fraction, 0.0);
  EXPECT_NEAR(r.avg_power_W, 300.0, 1e-9);
  EXPECT_EQ(r.peak_power_W, 300.0);
  EXPECT_EQ(r.effective, (Derate{1.0, 1.0}));
  EXPECT_LE(r.periods, 3);  // 1 warm-up + 1 measured (+1 for rounding)
}

// A square wave: P1 = 500 W (T1inf = 75 C) for t1 = 4 s, then P2 = 150 W (T2inf = 40 C)
// for t2 = 6 s, never near the limits.
TEST(ThermalReplay, SquareWavePeriodicSteadyState) {
  const ThermalParams p = lumped_die();
  const std::vector<PowerSegment> prof = {{4.0, compute_bound(400), true},
                                          {6.0, compute_bound(50), true}};
  // Periodic state, Ta at the start of the hot half, Tb at its end (e1 = e^{-b t1}, e2 =
  // e^{-b t2}): Tb = T1 + (Ta - T1) e1, Ta = T2 + (Tb - T2) e2, so
  //   Ta = [T2 (1 - e2) + T1 (1 - e1) e2] / (1 - e1 e2) = 48.2644 C,
  //   Tb = 75 (1 - e1) + Ta e1 = 60.3272 C, the maximum.
  // The time average: over a period the integral of dT is 0, so the average of
  // beta (T - T_amb) equals that of alpha P: T_avg = (75 x 4 + 40 x 6) / 10 = 54 C.
  const double T1 = 75, T2 = 40, e1 = std::exp(-0.15 * 4), e2 = std::exp(-0.15 * 6);
  const double Ta = (T2 * (1 - e2) + T1 * (1 - e1) * e2) / (1 - e1 * e2);
  const double Tb = T1 * (1 - e1) + Ta * e1;
  EXPECT_NEAR(Ta, 48.2644, 1e-4);
  EXPECT_NEAR(Tb, 60.3272, 1e-4);
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  // The warm-up stops within 0.01 C of the periodic state (then e^{-1.5} per period).
  EXPECT_NEAR(r.die_max_C, Tb, 0.01);
  EXPECT_LT(rel(r.die_avg_C, 54.0), 1e-4);
  EXPECT_NEAR(r.period_s, 10.0, 1e-9);
  EXPECT_EQ(r.slowdown, 1.0);
  EXPECT_EQ(r.throttle_fraction, 0.0);
  EXPECT_NEAR(r.avg_power_W, (500.0 * 4 + 150.0 * 6) / 10, 1e-9);  // 290 W
  EXPECT_EQ(r.peak_power_W, 500.0);
}

// Step law on the die at 85 C: a limit cycle between the release (85 - 2 C) and the onset.
TEST(ThermalReplay, StepLawLimitCycleApproachesTheSlidingMode) {
  ThermalParams p = lumped_die();
  p.law = ThrottleLaw::Step;
  p.die.onset_C = 85;
  p.hysteresis_C = 2;
  const std::vector<PowerSegment> prof = {{1.0, compute_bound(600), true}};
  // Throttled at 175 W (T_inf 42.5 C) from 85 down to 83 C:
  //   t_thr = ln((85 - 42.5) / (83 - 42.5)) / 0.15 = 0.321347 s;
  // unthrottled at 700 W (T_inf 95 C) from 83 up to 85 C:
  //   t_full = ln((95 - 83) / (95 - 85)) / 0.15 = ln 1.2 / 0.15 = 1.215477 s.
  // Throttled fraction d_h = 0.209098 (the closed form's sliding mode, hysteresis
  // neglected: 4 / 21 = 0.190476); work progresses at 1/2 while throttled: slowdown
  // (t_thr + t_full) / (t_thr / 2 + t_full) = 1.116756 (closed form 21 / 19 = 1.105263).
  // The average power (1 - d_h) 700 + d_h 175 sets the average temperature (the integral
  // of dT over a cycle is 0): 25 + 0.1 x 590.224 = 84.0224 C.
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
  EXPECT_EQ(r.throttle_fraction, r.die_throttle_fraction);  // the HBM never throttles
  EXPECT_EQ(r.hbm_throttle_fraction, 0.0);
  EXPECT_LT(rel(r.slowdown, slow_h), 5e-3) << r.slowdown;
  EXPECT_LT(rel(r.die_avg_C, T_avg), 5e-3) << r.die_avg_C;
  EXPECT_NEAR(r.die_max_C, 85.0, 1e-6);
  // Close to the closed form's sliding mode (within 2% absolute on d, 1.5% on the slowdown).
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
  ThermalParams p = lumped_die();
  p.law = ThrottleLaw::Step;
  p.die.onset_C = 60;
  p.hysteresis_C = 2;
  // 0.3 s periods of 700 W (T_inf 95 C; 175 W throttled, T_inf 42.5 C). The cycle:
  //   throttled 60 -> 58 C: t_thr = ln(17.5 / 15.5) / 0.15 = 0.809072 s,
  //   full 58 -> 60 C: t_full = ln(37 / 35) / 0.15 = 0.370466 s;
  //   slowdown (t_thr + t_full) / (t_thr / 2 + t_full) = 1.521980.
  const double t_thr = std::log(17.5 / 15.5) / 0.15, t_full = std::log(37.0 / 35.0) / 0.15;
  const double slow_h = (t_thr + t_full) / (t_thr / 2 + t_full);
  EXPECT_NEAR(slow_h, 1.521980, 1e-6);
  const std::vector<PowerSegment> prof = {{0.3, compute_bound(600), true}};
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  ASSERT_TRUE(std::isfinite(r.slowdown)) << "periods " << r.periods;
  // 60 s window of ~1.18 s cycles: the partial cycle at its ends weighs up to ~1.5%.
  EXPECT_LT(rel(r.slowdown, slow_h), 0.03) << r.slowdown;
  EXPECT_NEAR(r.die_max_C, 60.0, 1e-6);
}

// Predictive DVFS (PRODUCT.md sec 3): every 5 s, if the die's dT/dt over the last interval
// exceeds 2 C/s, the SM clock drops to 0.9. A GPU starting a job from idle (100 W: 35 C)
// on compute-bound work of 100 + 550 = 650 W (T_inf = 90 C, over the die's 87 C):
//  - without DVFS it reaches 87 C when 90 - 55 e^{-0.15 t} = 87: t = ln(55 / 3) / 0.15 =
//    19.3915 s;
//  - with DVFS: T(5) = 90 - 55 e^{-0.75} = 64.0198 C, a rate of 5.804 C/s > 2: the clock
//    drops at 5 s, the power to 100 + 550 x 0.9^3 = 500.95 W (T_inf 75.095 C). T(10) =
//    75.095 - 11.0752 e^{-0.75} = 69.8635 C: 1.169 C/s, restored. T(15) = 90 - 20.1365
//    e^{-0.75} = 80.4882 C: 2.125 C/s, lowered again; T(20) = 75.095 + 5.3932 e^{-0.75} =
//    77.6426 C: falling, restored; T(25) = 90 - 12.3574 e^{-0.75} = 84.1628 C: 1.304 C/s,
//    kept. The die reaches 87 C at 20 + ln(12.3574 / 3) / 0.15 = 29.4376 s: DVFS engaged
//    twice, first at 5 s, and put the first throttle off by 10.05 s. Once the die sits at
//    its limit the rate over 5 s is near 0: DVFS no longer engages.
TEST(ThermalReplay, DvfsEngagesBeforeTheDieThrottles) {
  const ThermalParams p = lumped_die();
  const std::vector<PowerSegment> prof = {{1.0, compute_bound(550), true}};
  const ColdStart off = replay_cold_start(p, prof, DvfsPolicy{}, 100.0);
  EXPECT_NEAR(off.first_throttle_s, std::log(55.0 / 3.0) / 0.15, 1e-4);
  EXPECT_NEAR(off.first_throttle_s, 19.3915, 1e-4);
  EXPECT_EQ(off.dvfs_engagements, 0);
  DvfsPolicy dvfs;
  dvfs.enabled = true;
  ReplayOptions o;
  o.record = true;
  const ColdStart on = replay_cold_start(p, prof, dvfs, 100.0, o);
  const double e = std::exp(-0.75), T20 = 75.095 + (80.48817 - 75.095) * e;
  EXPECT_NEAR(on.first_dvfs_s, 5.0, 1e-9);
  EXPECT_NEAR(on.first_throttle_s, 20 + std::log((90 - T20) / 3) / 0.15, 1e-3);
  EXPECT_NEAR(on.first_throttle_s, 29.4376, 1e-3);
  EXPECT_LT(on.first_dvfs_s, on.first_throttle_s);
  EXPECT_EQ(on.dvfs_engagements, 2);
  EXPECT_GE(on.length_s, 120.0);  // recording: at least 120 s
  // The trace: full clock before 5 s, 0.9 from 5 to 10 s; the die follows the lumped form.
  ASSERT_FALSE(on.trace.empty());
  for (const ThermalSample& s : on.trace) {
    if (s.t_s < 5.0 - 0.1) {
      EXPECT_EQ(s.clock, 1.0) << s.t_s;
      EXPECT_NEAR(s.die_C, 90 - 55 * std::exp(-0.15 * s.t_s), 1e-3) << s.t_s;
    } else if (s.t_s > 5.1 && s.t_s < 9.9) {
      EXPECT_NEAR(s.clock, 0.9, 1e-12) << s.t_s;
      EXPECT_NEAR(s.power_W, 500.95, 1e-9) << s.t_s;
    }
  }
  // At the periodic steady state the die's temperature does not climb: DVFS stays off.
  const ReplayResult steady = replay_periodic(p, prof, dvfs);
  EXPECT_EQ(steady.dvfs_fraction, 0.0);
  EXPECT_GT(steady.throttle_fraction, 0.0);
}

// Both fidelities use the same network: on the H100 file's three nodes (air, 60 C inlet)
// a constant compute-bound load of 560 W over idle settles, in the replay's 20 clock bins,
// where the closed form's continuous law puts it.
TEST(ThermalReplay, H100ReplayMatchesTheClosedForm) {
  const HardwareSpec hw = test::shipped_hardware("h100-sxm5-80gb");
  CoolingSpec air;
  air.ambient_C = 60;
  const ThermalParams p = thermal_params(hw, air);
  const WorkPower w = test::work(130, 520, 40, 0.9, 0.1, 30);
  const std::vector<PowerSegment> prof = {{0.5, w, true}};
  const ThermalSteadyState ss = steady_state(p, w);
  ASSERT_GT(ss.die_depth, 0.0);  // 60 + 0.045 x 690 + 0.018 x 660 = 103 C unthrottled
  ASSERT_LT(ss.die_depth, 1.0);
  const ReplayResult r = replay_periodic(p, prof, DvfsPolicy{});
  EXPECT_LT(rel(r.slowdown, ss.slowdown), 0.01) << r.slowdown << " vs " << ss.slowdown;
  EXPECT_NEAR(r.die_avg_C, ss.die_C, 0.2);
  EXPECT_NEAR(r.hbm_avg_C, ss.hbm_C, 0.2);
  EXPECT_EQ(r.throttle_fraction, 1.0);  // deeper than one 0.1 C bin
  EXPECT_EQ(ss.throttle_fraction, 1.0);
  EXPECT_EQ(r.hbm_throttle_fraction, 0.0);  // the die binds; the HBM stays under 95 C
}

}  // namespace
}  // namespace rapid
