// The three-node thermal network (die, HBM, sink; docs/nonideal.md sec 2) against hand
// derivations: its steady state by nodal analysis, its modes and step response where the
// symmetry reduces it to two nodes, the lumped form as its limit, the H100 file's sink time
// constant, and level crossings on a path that rises and falls.
#include "rapid/nonideal/thermal_network.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rapid/nonideal/power_model.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ThermalNetwork, SteadyStateByNodalAnalysis) {
  const ThermalNetwork net(ThermalCircuit{.die_sink_C_per_W = 0.02,
                                          .hbm_sink_C_per_W = 0.1,
                                          .die_hbm_C_per_W = 1.0,
                                          .sink_coolant_C_per_W = 0.05});
  // 500 W in the die, 50 W in the HBM. All 550 W leave through the sink: x_s = 0.05 x 550 =
  // 27.5 C. The die's and the HBM's balances (rises x over the coolant):
  //   (x_d - 27.5) / 0.02 + (x_d - x_m) / 1 = 500  ->  51 x_d - x_m = 1875
  //   (x_m - 27.5) / 0.1  + (x_m - x_d) / 1 = 50   ->  11 x_m - x_d = 325
  // so x_m = 51 x_d - 1875, 561 x_d - 20625 - x_d = 325: x_d = 20950 / 560 = 37.410714 C,
  // x_m = 51 x 37.410714 - 1875 = 32.946429 C.
  const NodeVector x = net.steady_rise({500, 50, 0});
  EXPECT_NEAR(x[kSink], 27.5, 1e-10);
  EXPECT_NEAR(x[kDie], 20950.0 / 560.0, 1e-10);
  EXPECT_NEAR(x[kHbm], 51.0 * 20950.0 / 560.0 - 1875.0, 1e-9);
  EXPECT_NEAR(x[kDie], 37.410714, 1e-6);
  EXPECT_NEAR(x[kHbm], 32.946429, 1e-6);
  // A path starting at the steady state stays there.
  const ThermalPath p = net.path(x, {500, 50, 0});
  for (size_t i = 0; i < kThermalNodes; ++i) EXPECT_NEAR(net.at(p, i, 17.0), x[i], 1e-9);
}

// Die and HBM alike (0.5 J/C, 0.2 C/W to the sink each), coupled by 1 C/W, on a sink of
// 100 J/C with 0.1 C/W to the coolant.
ThermalCircuit symmetric() {
  ThermalCircuit c;
  c.die_J_per_C = c.hbm_J_per_C = 0.5;
  c.die_sink_C_per_W = c.hbm_sink_C_per_W = 0.2;
  c.die_hbm_C_per_W = 1.0;
  c.sink_J_per_C = 100;
  c.sink_coolant_C_per_W = 0.1;
  return c;
}

TEST(ThermalNetwork, ModesOfASymmetricCircuit) {
  const ThermalNetwork net(symmetric());
  // Die and HBM moving together (the coupling carries nothing) are one node of 1 J/C with
  // 10 W/C to the sink; C^-1 G of that node and the sink is [[10, -10], [-0.1, 0.2]]
  // (the sink: (10 + 10 W/C) / 100 J/C). Its rates solve l^2 - 10.2 l + (2 - 1) = 0:
  // l = (10.2 -+ sqrt(100.04)) / 2 = 0.0990001 and 10.1010000 /s. Die and HBM moving
  // against each other (the sink still): 0.5 dx/dt = -(5 + 2 x 1) x, rate 14 /s.
  const double root = std::sqrt(10.2 * 10.2 - 4.0);
  EXPECT_NEAR(net.rates()[0], (10.2 - root) / 2, 1e-12);
  EXPECT_NEAR(net.rates()[1], (10.2 + root) / 2, 1e-10);
  EXPECT_NEAR(net.rates()[2], 14.0, 1e-10);
  EXPECT_NEAR(net.rates()[0], 0.0990001, 1e-7);
  EXPECT_NEAR(net.rates()[1], 10.1010000, 1e-7);

  // Step response from the coolant's temperature, 100 W in each of die and HBM: x_inf =
  // 200 x 0.1 = 20 C on the sink, 20 + 100 x 0.2 = 40 C on both. The two-node system's
  // eigenvector for rate l is (1, (10 - l) / 10) (top, sink); the start's deviation
  // (-40, -20) = a v(l0) + b v(l1): a + b = -40, a (10 - l0) / 10 + b (10 - l1) / 10 = -20.
  const double l0 = (10.2 - root) / 2, l1 = (10.2 + root) / 2;
  const double v0 = (10 - l0) / 10, v1 = (10 - l1) / 10;
  const double a = (-20 + 40 * v1) / (v0 - v1), b = -40 - a;
  const ThermalPath p = net.path({0, 0, 0}, {100, 100, 0});
  for (double t : {0.05, 1.0, 10.0, 60.0}) {
    const double top = 40 + a * std::exp(-l0 * t) + b * std::exp(-l1 * t);
    const double sink = 20 + a * v0 * std::exp(-l0 * t) + b * v1 * std::exp(-l1 * t);
    EXPECT_NEAR(net.at(p, kDie, t), top, 1e-9) << t;
    EXPECT_NEAR(net.at(p, kHbm, t), top, 1e-9) << t;
    EXPECT_NEAR(net.at(p, kSink, t), sink, 1e-9) << t;
    // The integral of the same sum: 40 t + a (1 - e^{-l0 t}) / l0 + b (1 - e^{-l1 t}) / l1.
    const double area =
        40 * t + a * (1 - std::exp(-l0 * t)) / l0 + b * (1 - std::exp(-l1 * t)) / l1;
    EXPECT_NEAR(net.integral(p, kDie, t), area, 1e-8 * std::max(1.0, area)) << t;
  }
}

// The lumped form dT/dt = alpha P - beta (T - T_amb) of PRODUCT.md sec 3 is the limit of a
// die and HBM without heat capacity or resistance: alpha = 1 / C_sink, beta = 1 / (R C_sink).
TEST(ThermalNetwork, LumpedFormIsTheLimitOfVanishingDieAndHbm) {
  ThermalCircuit c;
  c.die_J_per_C = c.hbm_J_per_C = 1e-6;
  c.die_sink_C_per_W = c.hbm_sink_C_per_W = 1e-6;
  c.die_hbm_C_per_W = 1e4;
  c.sink_J_per_C = 1 / 0.015;    // alpha 0.015 C/J
  c.sink_coolant_C_per_W = 0.1;  // beta = 1 / (0.1 / 0.015) = 0.15 /s
  const ThermalNetwork net(c);
  EXPECT_NEAR(net.rates()[0], 0.15, 1e-6);
  // 400 W from the coolant's temperature: T_inf - T_amb = alpha P / beta = 40 C, and
  // 40 (1 - e^{-0.15 x 30}) = 40 (1 - e^{-4.5}) = 39.5556 C after 30 s. The die's own
  // 1e-6 C/W puts it 400 x 1e-6 = 4e-4 C over the lumped node: the tolerance.
  const ThermalPath p = net.path({0, 0, 0}, {400, 0, 0});
  EXPECT_NEAR(net.at(p, kDie, 30), 40 * (1 - std::exp(-4.5)), 5e-4);
  EXPECT_NEAR(net.at(p, kDie, 30), 39.5556, 5e-4);
  // 95% of the way, 38 C: (0 - 40) / (38 - 40) = 20 = e^{0.15 t}, t = ln 20 / 0.15 =
  // 19.9715 s (the 4e-4 C offset, at 0.15 x 2 = 0.3 C/s there, moves it by 1.3e-3 s).
  EXPECT_NEAR(net.first_crossing(p, kDie, 38, kInf), std::log(20.0) / 0.15, 1.5e-3);
  EXPECT_EQ(net.first_crossing(p, kDie, 38, 19.9), kInf);  // not within 19.9 s
  EXPECT_EQ(net.first_crossing(p, kDie, 41, kInf), kInf);  // beyond T_inf: never
}

// The H100 file's air heatsink: 1134 J/C and 0.045 C/W to the inlet air, tau = R m c =
// 0.045 x 1134 = 51.0 s (docs/nonideal.md sec 2). Die and HBM, about 1.7 J/C behind
// 0.018-0.1 C/W, shift the slow mode by what they add in series: under 1%.
TEST(ThermalNetwork, H100AirSinkTimeConstant) {
  const HardwareSpec hw = test::shipped_hardware("h100-sxm5-80gb");
  CoolingSpec air;
  const ThermalParams p = thermal_params(hw, air);
  EXPECT_NEAR(1 / p.network().rates()[0], 0.045 * 1134, 0.01 * 51.0);
  EXPECT_NEAR(p.beta_per_s(), 1 / 51.03, 1e-6);
  // The die's own pole is fast: about its 1 J/C behind 0.018 C/W (tens of ms).
  EXPECT_LT(1 / p.network().rates()[2], 0.1);
}

TEST(ThermalNetwork, FirstCrossingOnAPathThatRisesAndFalls) {
  const ThermalNetwork net(symmetric());
  // A hot die (40 C over the coolant), the rest at the coolant, no power: the HBM warms
  // from the die through the coupling and the sink, peaks, then everything cools.
  const ThermalPath p = net.path({40, 0, 0}, {0, 0, 0});
  double peak = 0, t_peak = 0;
  for (double t = 0; t < 5; t += 1e-4) {
    const double x = net.at(p, kHbm, t);
    if (x > peak) peak = x, t_peak = t;
  }
  ASSERT_GT(peak, 1.0);
  ASSERT_GT(t_peak, 0.0);
  // Half the peak is reached first on the way up, before the peak.
  const double t = net.first_crossing(p, kHbm, 0.5 * peak, kInf);
  EXPECT_LT(t, t_peak);
  EXPECT_NEAR(net.at(p, kHbm, t), 0.5 * peak, 1e-9);
  EXPECT_LT(net.at(p, kHbm, t * (1 - 1e-6)), 0.5 * peak);
  // Above the peak: never.
  EXPECT_EQ(net.first_crossing(p, kHbm, 1.001 * peak, kInf), kInf);
  // The die only falls: it reaches 20 C once.
  const double td = net.first_crossing(p, kDie, 20, kInf);
  EXPECT_NEAR(net.at(p, kDie, td), 20, 1e-9);
}

}  // namespace
}  // namespace rapid
