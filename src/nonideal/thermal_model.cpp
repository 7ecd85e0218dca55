#include "rapid/nonideal/thermal_model.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace rapid {

double NodeLimit::depth(double T_C) const {
  if (T_C <= onset_C) return 0.0;
  if (span_C <= 0) return 1.0;
  return std::min(1.0, (T_C - onset_C) / span_C);
}

NodeVector ThermalParams::steady_C(const NodeVector& power_W) const {
  NodeVector T = net_.steady_rise(power_W);
  for (double& x : T) x += ambient_C;
  return T;
}

Derate derate_at_depth(const ThermalParams& p, double die_depth, double hbm_depth) {
  return Derate{1.0 - die_depth * (1.0 - p.die.keep), 1.0 - hbm_depth * (1.0 - p.hbm.keep)};
}

namespace {

// The time-averaged state of work `w` with the die at depth `dd` and the HBM at `dm`:
// Linear, one derate state per node; Step, none for (1 - d) of the time and full for d.
struct Mix {
  double progress = 0;  ///< full-speed seconds of work per second
  double power_W = 0, clock = 0, hbm = 0, throttled = 0;
  NodeVector nodes_W{};
};

Mix mix(const ThermalParams& p, const WorkPower& w, double dd, double dm, int levels) {
  using Shares = std::array<std::pair<double, double>, 2>;  // (depth, time share)
  const bool step = p.law == ThrottleLaw::Step;
  auto shares = [&](double d) {
    return step ? Shares{{{0.0, 1.0 - d}, {1.0, d}}} : Shares{{{d, 1.0}, {0.0, 0.0}}};
  };
  Mix m;
  for (const auto& [xd, pd] : shares(dd))
    for (const auto& [xm, pm] : shares(dm)) {
      const double pi = pd * pm;
      if (pi <= 0) continue;
      const Derate d = derate_at_depth(p, xd, xm);
      m.progress += pi / d.slowdown(w.compute_share, w.memory_share);
      m.power_W += pi * w.at(d);
      m.clock += pi * d.clock;
      m.hbm += pi * d.hbm;
      const NodeVector n = w.nodes_at(d);
      for (size_t i = 0; i < kThermalNodes; ++i) m.nodes_W[i] += pi * n[i];
    }
  // Share of the time each node is derated at all: Step, its duty; Linear, its first bin.
  auto engaged = [&](double d) { return step ? d : std::min(1.0, d * levels); };
  m.throttled = 1.0 - (1.0 - engaged(dd)) * (1.0 - engaged(dm));
  return m;
}

// Bisection for the depth in [0, 1] where excess(depth) (falling) crosses zero: 0 when it
// is never positive, 1 when it stays positive.
template <typename F>
double solve_depth(F excess) {
  if (excess(0.0) <= 0) return 0.0;
  if (excess(1.0) >= 0) return 1.0;
  double lo = 0, hi = 1;
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (excess(mid) > 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

ThermalSteadyState steady_state(const ThermalParams& p, const WorkPower& w, int levels) {
  // A node's temperature minus what its law allows at its depth (Step: the onset).
  const bool step = p.law == ThrottleLaw::Step;
  auto excess = [&](size_t node, const NodeLimit& lim, double dd, double dm) {
    const NodeVector T = p.steady_C(mix(p, w, dd, dm, levels).nodes_W);
    const double d = node == kDie ? dd : dm;
    return T[node] - (lim.onset_C + (step ? 0.0 : d * lim.span_C));
  };
  auto die_depth = [&](double dm) {
    return solve_depth([&](double dd) { return excess(kDie, p.die, dd, dm); });
  };
  const double dm = solve_depth([&](double x) { return excess(kHbm, p.hbm, die_depth(x), x); });
  const double dd = die_depth(dm);
  const Mix m = mix(p, w, dd, dm, levels);
  const NodeVector T = p.steady_C(m.nodes_W);
  ThermalSteadyState s;
  s.die_C = T[kDie];
  s.hbm_C = T[kHbm];
  s.sink_C = T[kSink];
  s.die_depth = dd;
  s.hbm_depth = dm;
  s.throttle_fraction = m.throttled;
  s.slowdown = 1.0 / m.progress;
  s.power_W = m.power_W;
  s.derate = Derate{m.clock, m.hbm};
  return s;
}

}  // namespace rapid
