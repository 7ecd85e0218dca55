// Dynamic folding (docs/des.md "Dynamic folding"): a collective that starts alone runs
// outside the flow network until another flow meets it. The flow network's side solved by
// hand, and the simulator with and without it on the same layouts (two implementations of
// the same times).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rapid/des/des_evaluator.hpp"
#include "rapid/des/flow_network.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

constexpr double kGB = 1e9;
constexpr des::SimTime kS = 1'000'000'000'000;

TEST(DynamicFolding, AFoldedBundleJoinsWithTheBytesItHasLeft) {
  // Link 10 GB/s. A (100 GB) starts alone at 0: 10 GB/s, drain at 10 s, outside the
  // network. B (100 GB) arrives at 4 s: A joins with 100 - 4 x 10 = 60 GB left; both get
  // 5 GB/s; A drains at 4 + 60 / 5 = 16 s; B has 100 - 60 = 40 GB left at 10 GB/s: 20 s.
  // The same as A in the network from 0 (TwoFlowsOnOneLink..., des_engine_test.cpp).
  des::FlowNetwork n;
  const int32_t l = n.add_resource(10 * kGB);
  const des::ResourceUse u[] = {{l, 1}};
  const double rate = n.alone_rate(u);
  EXPECT_DOUBLE_EQ(rate, 10 * kGB);
  const des::SimTime drain = des::to_ps_ceil(100 * kGB / rate);
  EXPECT_EQ(drain, 10 * kS);
  const des::SimTime t = 4 * kS;
  // Recorded at its start as if it ran to 10 s; at 4 s the rest is the network's to count.
  n.account_alone(u, 100 * kGB, 0, drain);
  const double remaining = 100 * kGB - rate * des::to_seconds(t);
  n.account_alone(u, -remaining, drain, t);
  const int32_t a = n.add_running(t, u, remaining, rate, drain, 0);
  EXPECT_EQ(n.drain_time(a), 10 * kS);  // alone, it keeps its drain
  EXPECT_EQ(n.active_flows(l), 1);
  const int32_t b = n.start(t, u, 100 * kGB, 1);
  EXPECT_DOUBLE_EQ(n.rate(a), 5 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(b), 5 * kGB);
  EXPECT_EQ(n.drain_time(a), 16 * kS);
  n.finish(16 * kS, a);
  EXPECT_EQ(n.drain_time(b), 20 * kS);
  n.finish(20 * kS, b);
  // 200 GB crossed the link, busy from 0 to 20 s, two flows at most.
  EXPECT_DOUBLE_EQ(n.carried_bytes(l), 200 * kGB);
  EXPECT_EQ(n.busy_time(l, 30 * kS), 20 * kS);
  EXPECT_EQ(n.peak_flows(l), 2);
}

TEST(DynamicFolding, AloneRateIsTheTightestLinkPerMemberFlow) {
  // Two links of 10 and 30 GB/s; a bundle with 2 flows on the first and 1 on the second:
  // min(10 / 2, 30 / 1) = 5 GB/s, what start() gives it alone.
  des::FlowNetwork n;
  const int32_t x = n.add_resource(10 * kGB), y = n.add_resource(30 * kGB);
  const des::ResourceUse u[] = {{x, 2}, {y, 1}};
  EXPECT_DOUBLE_EQ(n.alone_rate(u), 5 * kGB);
  const int32_t b = n.start(0, u, 10 * kGB, 0);
  EXPECT_DOUBLE_EQ(n.rate(b), n.alone_rate(u));
}

// Every 23rd feasible layout of the demo job (Llama 3 70B on 256 H100: pipelines with
// interleaving, ZeRO 0-3, DP streams meeting pipeline transfers on the NICs), simulated with
// and without dynamic folding. A folded op keeps the rate and drain it has in the network
// (the hand case above), so the times agree. Events at one picosecond could in principle run
// in another order (a folded op's completion is scheduled at its start, not at its drain);
// on these layouts (and on all 1,385 of the job, checked once) every time is bit-identical.
TEST(DynamicFolding, DemoLayoutsTakeTheSameTimeWithAndWithoutIt) {
  DesOptions off;
  off.fold_alone = false;
  double worst = 0;
  uint64_t events_with = 0, events_without = 0;
  const int compared = test::each_demo_layout_two_ways(off, 23, [&](const test::DesPair& d) {
    const EvalResult &a = d.with, &b = d.without;
    const std::string layout = d.point.par.describe();
    ASSERT_EQ(a.status, b.status) << layout;
    worst = std::max(worst, std::abs(a.step_time_s - b.step_time_s));
    EXPECT_EQ(a.step_time_s, b.step_time_s) << layout;
    EXPECT_EQ(a.dp_exposed_time_s, b.dp_exposed_time_s) << layout;
    EXPECT_EQ(a.pp_comm_time_s, b.pp_comm_time_s) << layout;
    // Link statistics add a folded bundle's bytes in another order: equal to rounding.
    EXPECT_NEAR(a.max_link_utilization, b.max_link_utilization, 1e-12) << layout;
    events_with += d.with_report.events;
    events_without += d.without_report.events;
  });
  std::printf(
      "dynamic folding: %d layouts, largest step-time difference %.3g s, events %llu "
      "vs %llu without\n",
      compared, worst, static_cast<unsigned long long>(events_with),
      static_cast<unsigned long long>(events_without));
  EXPECT_GE(compared, 50);
  EXPECT_LT(events_with, events_without);
}

}  // namespace
}  // namespace rapid
