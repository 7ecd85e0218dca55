// The thermal model's laws and closed form (docs/nonideal.md sec 2) derived by hand: the
// die's and the HBM's derates, the power split between them, the closed-form steady states
// of both throttle laws with the die or the HBM binding, the one "throttled" figure, the
// hardware file's limits and the cooling presets with their overrides.
#include "rapid/nonideal/thermal_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rapid/common/error.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "rapid/spec/nonideal_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"
#include "thermal_test_params.hpp"

namespace rapid {
namespace {

using test::compute_bound;
using test::lumped_die;

TEST(ThermalModel, DerateSlowdownAndPowerSplit) {
  ThermalParams p = lumped_die();
  p.die.keep = 0.5;
  p.hbm.keep = 0.73;
  // Die depth 0.4: clock 1 - 0.4 x 0.5 = 0.8; HBM depth 0.5: 1 - 0.5 x 0.27 = 0.865.
  const Derate d = derate_at_depth(p, 0.4, 0.5);
  EXPECT_NEAR(d.clock, 0.8, 1e-12);
  EXPECT_NEAR(d.hbm, 0.865, 1e-12);
  // Work 60% compute-bound, 30% memory-bound: 0.1 + 0.6 / 0.8 + 0.3 / 0.865.
  EXPECT_NEAR(d.slowdown(0.6, 0.3), 0.1 + 0.75 + 0.3 / 0.865, 1e-12);
  // Linear depth: 0 at and below the onset, (T - 87) / 2 across the span, then 1.
  EXPECT_EQ(p.die.depth(80), 0.0);
  EXPECT_EQ(p.die.depth(87), 0.0);
  EXPECT_NEAR(p.die.depth(87.5), 0.25, 1e-12);
  EXPECT_EQ(p.die.depth(89), 1.0);
  EXPECT_EQ(p.die.depth(120), 1.0);
  // Idle 100 W, 400 W compute-bound (50% of the time), 200 W of data movement of which the
  // HBM's own 150 W (30% memory-bound), under clock 0.8 and HBM 0.9: s = 0.2 + 0.5 / 0.8 +
  // 0.3 / 0.9 = 1.158333; board 100 + (400 x 0.64 + 200) / s = 100 + 456 / 1.158333 =
  // 493.669 W, of which the HBM 150 / s = 129.496 W and the die the rest, 364.173 W.
  const WorkPower w = test::work(100, 400, 200, 0.5, 0.3, 150);
  const Derate e{0.8, 0.9};
  const double s = 0.2 + 0.5 / 0.8 + 0.3 / 0.9;
  const NodeVector n = w.nodes_at(e);
  EXPECT_NEAR(w.at(e), 100 + 456 / s, 1e-9);
  EXPECT_NEAR(n[kHbm], 150 / s, 1e-9);
  EXPECT_NEAR(n[kDie], 100 + 456 / s - 150 / s, 1e-9);
  EXPECT_NEAR(n[kDie], 364.173, 1e-3);
  EXPECT_EQ(n[kSink], 0.0);
}

// Step law on the die: a sliding mode at the onset.
TEST(ThermalSteadyState, StepLawSlidingModeComputeBound) {
  ThermalParams p = lumped_die();
  p.law = ThrottleLaw::Step;
  p.die.onset_C = 85;
  // Full power 100 + 600 = 700 W: T_inf = 25 + 0.1 x 700 = 95 C > 85. Holding 85 C takes
  // 600 W. Throttled (clock 0.5): the work takes 1 / 0.5 = 2x as long with 0.5^2 of its
  // dynamic energy: 100 + 600 x 0.25 / 2 = 175 W. Duty d = (700 - 600) / (700 - 175) =
  // 4 / 21; slowdown 1 / ((1 - d) + d / 2) = 21 / 19; power 600 W, the holding power.
  // (The lumped die's circuit matches 25 + 0.1 P to 1e-7 C: tolerances 1e-7.)
  const WorkPower w = compute_bound(600);
  EXPECT_NEAR(w.at(derate_at_depth(p, 1.0, 0.0)), 175.0, 1e-12);
  const ThermalSteadyState s = steady_state(p, w);
  EXPECT_NEAR(s.die_depth, 4.0 / 21.0, 1e-7);
  EXPECT_NEAR(s.throttle_fraction, 4.0 / 21.0, 1e-7);  // Step: the duty
  EXPECT_NEAR(s.slowdown, 21.0 / 19.0, 1e-7);
  EXPECT_NEAR(s.power_W, 600.0, 1e-5);
  EXPECT_NEAR(s.die_C, 85.0, 1e-6);
  EXPECT_NEAR(s.derate.clock, 19.0 / 21.0, 1e-7);  // 1 - d x 0.5
  EXPECT_EQ(s.derate.hbm, 1.0);                    // the HBM stays cool
  EXPECT_EQ(s.hbm_depth, 0.0);
}

TEST(ThermalSteadyState, StepLawSlidingModeMixedWork) {
  ThermalParams p = lumped_die();
  p.law = ThrottleLaw::Step;
  p.die.onset_C = 85;
  // 60% compute-bound (500 W), 30% memory-bound (100 W of on-die data movement), 10%
  // neither; full 700 W. The die's derate is the clock's alone: throttled s = 0.1 + 0.6 /
  // 0.5 + 0.3 = 1.6, P_thr = 100 + (500 x 0.25 + 100) / 1.6 = 240.625 W; d = (700 - 600) /
  // (700 - 240.625) = 800 / 3675 = 32 / 147; slowdown 1 / (1 - d + d / 1.6) =
  // 1 / (1 - (32 / 147)(3 / 8)) = 147 / 135.
  const WorkPower w = test::work(100, 500, 100, 0.6, 0.3, 0);
  const ThermalSteadyState st = steady_state(p, w);
  EXPECT_NEAR(st.die_depth, 32.0 / 147.0, 1e-7);
  EXPECT_NEAR(st.slowdown, 147.0 / 135.0, 1e-7);
  EXPECT_NEAR(st.power_W, 600.0, 1e-5);
  EXPECT_NEAR(st.die_C, 85.0, 1e-6);
}

TEST(ThermalSteadyState, StepLawThrottledForGoodAndNeverReached) {
  ThermalParams p = lumped_die();
  p.law = ThrottleLaw::Step;
  // Onset 40 C: even throttled, 175 W keeps the die at 25 + 17.5 = 42.5 C: d = 1, slowdown 2.
  p.die.onset_C = 40;
  const ThermalSteadyState s = steady_state(p, compute_bound(600));
  EXPECT_EQ(s.die_depth, 1.0);
  EXPECT_EQ(s.throttle_fraction, 1.0);
  EXPECT_NEAR(s.slowdown, 2.0, 1e-12);
  EXPECT_NEAR(s.power_W, 175.0, 1e-9);
  EXPECT_NEAR(s.die_C, 42.5, 1e-6);
  // Onset 95 C = T_inf of 700 W: never throttled.
  p.die.onset_C = 95.001;
  const ThermalSteadyState n = steady_state(p, compute_bound(600));
  EXPECT_EQ(n.throttle_fraction, 0.0);
  EXPECT_EQ(n.slowdown, 1.0);
  EXPECT_NEAR(n.die_C, 95.0, 1e-6);
  EXPECT_NEAR(n.power_W, 700.0, 1e-9);
}

// The HBM binding (Linear law): the die -> sink 0.02 C/W, HBM -> sink 0.02 C/W, sink ->
// coolant 0.08 C/W, die and HBM 1e7 C/W apart, 25 C coolant; HBM from 85 C over 5 C to
// 73% of its bandwidth.
TEST(ThermalSteadyState, LinearLawOnTheHbmSolvedByHand) {
  ThermalParams p = test::with_resistances(0.02, 0.02, 1e7, 0.08);
  p.hbm = NodeLimit{85, 5, 0.73, 102};
  // Memory-bound work whose 600 W of data movement is the HBM's own: at bandwidth h the
  // HBM dissipates 600 h, the die the idle 100 W. T_hbm = 25 + 0.08 (100 + 600 h) + 0.02 x
  // 600 h = 33 + 60 h, with h = 1 - 0.27 (T - 85) / 5 = 1 - 0.054 x, x = T - 85:
  //   85 + x = 93 - 3.24 x  ->  x = 8 / 4.24 = 1.886792, T* = 86.886792 C,
  // h = 0.898113, slowdown 1 / h = 1.113445, board 100 + 600 h = 638.868 W. The die: 25 +
  // 0.08 (100 + 600 h) + 0.02 x 100 = 35 + 48 h = 78.109 C, under its 87 C.
  const WorkPower w = test::work(100, 0, 600, 0, 1.0, 600);
  const double x = 8 / 4.24, h = 1 - 0.054 * x;
  const ThermalSteadyState s = steady_state(p, w);
  EXPECT_NEAR(s.hbm_C, 85 + x, 1e-6);
  EXPECT_NEAR(s.hbm_C, 86.886792, 1e-6);
  EXPECT_NEAR(s.derate.hbm, h, 1e-7);
  EXPECT_EQ(s.derate.clock, 1.0);
  EXPECT_NEAR(s.slowdown, 1 / h, 1e-7);
  EXPECT_NEAR(s.slowdown, 1.113445, 1e-6);
  EXPECT_NEAR(s.power_W, 100 + 600 * h, 1e-5);
  EXPECT_NEAR(s.die_C, 35 + 48 * h, 1e-6);
  EXPECT_EQ(s.die_depth, 0.0);
  EXPECT_NEAR(s.hbm_depth, x / 5, 1e-7);
  // Throttled all the time: depth 0.377 steps 0.377 x 20 = 7.5 of the replay's 20 bins.
  EXPECT_EQ(s.throttle_fraction, 1.0);
}

// A die just over its onset (Linear law, 85 C over 2 C to clock 0.5): compute-bound work of
// 510 W (full 610 W: 25 + 61 = 86 C) holds where T = 35 + 51 c^3 (the power at clock c is
// 100 + 510 c^2 / (1 / c)) meets c = 1 - (T - 85) / 4. With y = T - 85: 50 + y = 51 (1 -
// y / 4)^3; Newton from 0 gives y = 0.025637 (the cube's expansion: 39.25 y - 9.5625 y^2 +
// 0.797 y^3 = 1). Depth y / 2 = 0.0128: the replay's first of 20 clock bins (0.1 C wide)
// engages 0.256 of the time, the one "throttled" figure.
TEST(ThermalSteadyState, ThrottledShareOfALightLinearThrottle) {
  ThermalParams p = lumped_die();
  p.die.onset_C = 85;
  const ThermalSteadyState s = steady_state(p, compute_bound(510));
  const double y = s.die_C - 85;
  EXPECT_NEAR(50 + y, 51 * std::pow(1 - y / 4, 3), 1e-5);
  EXPECT_NEAR(y, 0.025637, 1e-5);
  EXPECT_NEAR(s.die_depth, y / 2, 1e-7);
  EXPECT_NEAR(s.throttle_fraction, 20 * y / 2, 1e-5);
  EXPECT_NEAR(s.throttle_fraction, 0.256, 1e-3);
  EXPECT_NEAR(steady_state(p, compute_bound(510), 40).throttle_fraction, 40 * y / 2, 1e-5);
}

// Both nodes at once: each settles where its temperature meets its own law.
TEST(ThermalSteadyState, DieAndHbmBothBalanced) {
  ThermalParams p = test::with_resistances(0.02, 0.03, 1.0, 0.08);
  p.die = NodeLimit{85, 2, 0.5, 92};
  p.hbm = NodeLimit{79, 5, 0.73, 102};
  const WorkPower w = test::work(100, 450, 250, 0.6, 0.3, 200);
  // Unthrottled: 800 W; the sink alone is 25 + 64 = 89 C, over both onsets.
  const ThermalSteadyState s = steady_state(p, w);
  ASSERT_GT(s.die_depth, 0.0);
  ASSERT_LT(s.die_depth, 1.0);
  ASSERT_GT(s.hbm_depth, 0.0);
  ASSERT_LT(s.hbm_depth, 1.0);
  EXPECT_NEAR(s.die_C, 85 + 2 * s.die_depth, 1e-6);
  EXPECT_NEAR(s.hbm_C, 79 + 5 * s.hbm_depth, 1e-6);
  const Derate d = derate_at_depth(p, s.die_depth, s.hbm_depth);
  const NodeVector T = p.steady_C(w.nodes_at(d));
  EXPECT_NEAR(T[kDie], s.die_C, 1e-6);
  EXPECT_NEAR(T[kHbm], s.hbm_C, 1e-6);
  EXPECT_NEAR(s.slowdown, d.slowdown(0.6, 0.3), 1e-9);
  EXPECT_NEAR(s.power_W, w.at(d), 1e-6);
}

// The H100 file's limits (nvidia-smi's GPU Max Operating, Slowdown and Shutdown Temps and
// Memory Max Operating Temp) become the two laws.
TEST(ThermalModel, HardwareFileLimits) {
  const ThermalParams p = thermal_params(test::shipped_hardware("h100-sxm5-80gb"), CoolingSpec{});
  EXPECT_EQ(p.die, (NodeLimit{87, 2, 0.5, 92}));
  EXPECT_EQ(p.hbm, (NodeLimit{95, 5, 0.73, 102}));
  EXPECT_EQ(p.law, ThrottleLaw::Linear);
  const ThermalParams a = thermal_params(test::shipped_hardware("a100-sxm4-80gb"), CoolingSpec{});
  EXPECT_EQ(a.die, (NodeLimit{85, 4, 0.5, 92}));
  // The keys are read strictly: a HW slowdown below the SW slowdown, a resistance of 0 or a
  // key the file format lacks is an input error naming the file, key and value.
  const std::string path = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  const std::string text = read_text_file(path);
  auto bad = [&](const std::string& from, const std::string& to, const std::string& key,
                 const std::string& value) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    try {
      parse_hardware(load_yaml_text(t, "hw.yaml"), "hw.yaml");
      ADD_FAILURE() << "no InputError for " << to;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "hw.yaml");
      EXPECT_EQ(e.key(), key);
      EXPECT_EQ(e.value(), value);
    }
  };
  bad("die_hw_slowdown_C: 89", "die_hw_slowdown_C: 80", "thermal.die_hw_slowdown_C", "80");
  bad("die_sink_C_per_W: 0.018", "die_sink_C_per_W: 0", "thermal.die_sink_C_per_W", "0");
  bad("sink_C_per_W: 0.045", "sink_C_per_W: -1", "thermal.air.sink_C_per_W", "-1");
  bad("die_J_per_C: 1.0", "die_heat: 1.0", "thermal.die_heat", "die_heat");
}

// `thermal: true` without `cooling:` is air cooling (its name says so): the hardware's air
// heatsink at 27 C (ASHRAE's recommended inlet limit, nonideal_spec.cpp), as `cooling:
// air` gives.
TEST(ThermalCooling, DefaultCoolingIsTheAirPreset) {
  const NonIdealSpec bare =
      parse_scenarios(YAML::Load("{thermal: true}"), YAML::Node(), "job.yaml").front();
  const NonIdealSpec air =
      parse_scenarios(YAML::Load("{thermal: true, cooling: air}"), YAML::Node(), "job.yaml")
          .front();
  EXPECT_EQ(air.cooling.name, "air");
  EXPECT_FALSE(air.cooling.liquid);
  EXPECT_EQ(air.cooling.ambient_C, 27.0);
  EXPECT_EQ(bare.cooling.name, air.cooling.name);
  EXPECT_EQ(bare.cooling.liquid, air.cooling.liquid);
  EXPECT_EQ(bare.cooling.ambient_C, air.cooling.ambient_C);
}

TEST(ThermalCooling, PresetsAndOverrides) {
  const HardwareSpec hw = test::shipped_hardware("h100-sxm5-80gb");
  auto cooling = [](const char* yaml) {
    return parse_scenarios(YAML::Load(yaml), YAML::Node(), "job.yaml").front().cooling;
  };
  // Presets: the file's air heatsink (1134 J/C, 0.045 C/W) at 27 C and liquid cold plate
  // (260 J/C, 0.025 C/W) at 32 C (ASHRAE W32).
  const ThermalParams air = thermal_params(hw, cooling("{thermal: true}"));
  EXPECT_EQ(air.circuit().sink_J_per_C, 1134.0);
  EXPECT_EQ(air.circuit().sink_coolant_C_per_W, 0.045);
  const CoolingSpec liquid = cooling("{thermal: true, cooling: liquid}");
  EXPECT_EQ(liquid.ambient_C, 32.0);
  const ThermalParams cold = thermal_params(hw, liquid);
  EXPECT_EQ(cold.circuit().sink_J_per_C, 260.0);
  EXPECT_EQ(cold.circuit().sink_coolant_C_per_W, 0.025);
  EXPECT_EQ(cold.ambient_C, 32.0);
  // The lumped form's rates set the sink: C = 1 / alpha = 50 J/C, R = 1 / (beta C) =
  // 1 / (0.05 x 50) = 0.4 C/W.
  const ThermalParams lumped = thermal_params(
      hw,
      cooling("{thermal: true, cooling: {preset: air, alpha_C_per_J: 0.02, beta_per_s: 0.05}}"));
  EXPECT_NEAR(lumped.circuit().sink_J_per_C, 50.0, 1e-12);
  EXPECT_NEAR(lumped.circuit().sink_coolant_C_per_W, 0.4, 1e-12);
  EXPECT_NEAR(lumped.alpha_C_per_J(), 0.02, 1e-15);
  EXPECT_NEAR(lumped.beta_per_s(), 0.05, 1e-15);
  // A failed fan: a third of the conductance, 0.045 / 0.333 = 0.135135 C/W; the capacity stays.
  const ThermalParams fan = thermal_params(
      hw, cooling("{thermal: true, cooling: {preset: air, conductance_factor: 0.333}}"));
  EXPECT_NEAR(fan.circuit().sink_coolant_C_per_W, 0.045 / 0.333, 1e-12);
  EXPECT_EQ(fan.circuit().sink_J_per_C, 1134.0);
  // A mapping overrides key by key; thermal implies power.
  const NonIdealSpec custom =
      parse_scenarios(YAML::Load("{thermal: true, cooling: {preset: air, ambient_C: 40}}"),
                      YAML::Node(), "job.yaml")
          .front();
  EXPECT_EQ(custom.cooling.ambient_C, 40.0);
  EXPECT_TRUE(custom.power);
  // The same sink set two ways is an input error naming the key.
  try {
    cooling("{thermal: true, cooling: {alpha_C_per_J: 0.02, sink_J_per_C: 50}}");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "nonideal.cooling.alpha_C_per_J");
  }
  EXPECT_THROW(cooling("{thermal: true, cooling: {conductance_factor: 0}}"), InputError);
}

}  // namespace
}  // namespace rapid
