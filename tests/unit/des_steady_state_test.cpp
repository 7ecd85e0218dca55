// The DES's steady-state extrapolation (docs/des.md "Steady state"): a step of many
// micro-batches is simulated with g periods fewer and, where the shorter run is periodic in
// its middle, extended by g periods; it must give the step of simulating every micro-batch
// (two implementations on the same input), and it must refuse (simulate everything) where
// the run is not periodic or a timed fault makes the step's conditions change.
#include <gtest/gtest.h>

#include "rapid/des/des_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// The demo job: Llama 3 70B on 256 H100 (32 DGX nodes), 512 sequences of 8192 tokens.
const SweepSpec& demo() {
  static const SweepSpec spec = load_sweep_spec(test::source_path("jobs/llama3-70b-256xh100.yaml"));
  return spec;
}

ParallelConfig layout(int dp, int tp, int pp, int vpp, bool sp, int zero, Recompute rc) {
  ParallelConfig par;
  par.dp = dp;
  par.tp = tp;
  par.pp = pp;
  par.vpp = vpp;
  par.mbs = 1;
  par.sp = sp;
  par.zero_stage = static_cast<int8_t>(zero);
  par.recompute = rc;
  return par;
}

struct Simulated {
  EvalResult r;
  DesReport report;
};

Simulated simulate(const ParallelConfig& par, bool steady, std::vector<LinkFault> faults = {}) {
  const SweepSpec& spec = demo();
  Workload w;
  build_workload(spec.model, spec.training, spec.network, par, w);
  DesOptions o;
  o.steady_state = steady;
  o.link_faults = std::move(faults);
  Simulated run;
  DesEvaluator(spec.model, spec.training, spec.hardware[0], spec.network, o)
      .simulate(w, run.r, &run.report, nullptr, nullptr);
  return run;
}

// Every time of the breakdown within 1e-8 of the full simulation: a period is accepted when
// it repeats within kSteadyTolerance = 1e-8 of its length, and the g periods added are less
// than the step, so the extrapolated step is off by less than 1e-8 of it.
void expect_same_step(const Simulated& a, const Simulated& b) {
  const double tol = 1e-8 * b.r.step_time_s;
  EXPECT_NEAR(a.r.step_time_s, b.r.step_time_s, tol);
  EXPECT_NEAR(a.r.compute_time_s, b.r.compute_time_s, tol);
  EXPECT_NEAR(a.r.interference_time_s, b.r.interference_time_s, tol);
  EXPECT_NEAR(a.r.pp_comm_time_s, b.r.pp_comm_time_s, tol);
  EXPECT_NEAR(a.r.dp_exposed_time_s, b.r.dp_exposed_time_s, tol);
  EXPECT_NEAR(a.r.dp_comm_time_s, b.r.dp_comm_time_s, tol);
  EXPECT_NEAR(a.r.host_bound_time_s, b.r.host_bound_time_s, tol);
  EXPECT_NEAR(a.r.max_link_utilization, b.r.max_link_utilization, 1e-8);
  EXPECT_EQ(a.report.flows, b.report.flows);
  EXPECT_EQ(a.report.folded_ops, b.report.folded_ops);
}

struct Case {
  ParallelConfig par;
  int64_t periods;  // g, by hand below
  int32_t delta;
};

// m = 512 / (dp x mbs). The shorter run keeps 2 pp + 5 delta micro-batches (warm-up,
// cool-down, five periods), delta = 1 for 1F1B and pp for the interleaved schedule, so
// g = (m - 2 pp - 5 delta) / delta:
//  - dp32 tp2 pp4, ZeRO 1, full recompute: m = 16, g = (16 - 8 - 5) / 1 = 3;
//  - dp8 tp4 pp8 sp, ZeRO 2 (a gradient reduce-scatter per micro-batch on the DP stream,
//    sharing links with the TP collectives): m = 64, g = 64 - 16 - 5 = 43;
//  - dp8 tp8 pp4 sp, ZeRO 3 (parameter gathers per micro-batch): m = 64, g = 64 - 8 - 5 = 51;
//  - dp8 tp8 pp4 vpp5 sp, ZeRO 1: m = 64, delta = 4, g = (64 - 8 - 20) / 4 = 9.
TEST(DesSteadyState, ExtrapolatedStepEqualsTheFullSimulation) {
  const Case cases[] = {
      {layout(32, 2, 4, 1, false, 1, Recompute::Full), 3, 1},
      {layout(8, 4, 8, 1, true, 2, Recompute::Selective), 43, 1},
      {layout(8, 8, 4, 1, true, 3, Recompute::Selective), 51, 1},
      {layout(8, 8, 4, 5, true, 1, Recompute::Selective), 9, 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.par.describe());
    const Simulated fast = simulate(c.par, true);
    const Simulated full = simulate(c.par, false);
    ASSERT_EQ(fast.r.status, Status::Ok);
    ASSERT_EQ(full.r.status, Status::Ok);
    EXPECT_EQ(fast.report.extrapolated_periods, c.periods);
    EXPECT_EQ(fast.report.period_microbatches, c.delta);
    EXPECT_EQ(full.report.extrapolated_periods, 0);
    EXPECT_LT(fast.report.events, full.report.events);
    expect_same_step(fast, full);
  }
}

// Refusals, each simulating every micro-batch (the same rows, bit for bit):
//  - dp16 tp2 pp8, ZeRO 3 with full recompute: its parameter gathers contend with the
//    pipeline's traffic, and the period converges geometrically (its length changes by
//    hundreds of microseconds per period) within the 21 micro-batches of the shorter run:
//    not periodic there;
//  - m = 4 (dp128): too few micro-batches to leave any out;
//  - a timed link fault: capacities change during the step.
TEST(DesSteadyState, RefusesWhereTheStepIsNotPeriodic) {
  {
    const ParallelConfig par = layout(16, 2, 8, 1, false, 3, Recompute::Full);
    const Simulated fast = simulate(par, true);
    const Simulated full = simulate(par, false);
    EXPECT_EQ(fast.report.extrapolated_periods, 0);
    EXPECT_EQ(fast.r.step_time_s, full.r.step_time_s);
    EXPECT_EQ(fast.report.events, full.report.events);
  }
  {
    const Simulated small = simulate(layout(128, 2, 1, 1, false, 1, Recompute::Full), true);
    EXPECT_EQ(small.report.extrapolated_periods, 0);
  }
  {
    LinkFault f;
    f.selector = LinkSelector::MostLoaded;
    f.health = 0.5;
    f.start_s = 0.1;
    f.duration_s = 0.1;
    const ParallelConfig par = layout(8, 8, 4, 1, true, 3, Recompute::Selective);
    const Simulated fast = simulate(par, true, {f});
    const Simulated full = simulate(par, false, {f});
    EXPECT_EQ(fast.report.extrapolated_periods, 0);
    EXPECT_EQ(fast.r.step_time_s, full.r.step_time_s);
  }
}

}  // namespace
}  // namespace rapid
