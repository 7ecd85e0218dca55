// One rate solve per instant (FlowNetwork::set_batch, SimOptions::batch_solves; issue 35):
// a hand case, random instants of several changes against a network that solves after
// each, and demo layouts simulated both ways.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "rapid/des/des_evaluator.hpp"
#include "rapid/des/flow_network.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "test_support.hpp"

namespace rapid::des {
namespace {

constexpr double kGB = 1e9;
constexpr SimTime kS = 1'000'000'000'000;  // ps per second

TEST(BatchSolves, TheChangesOfOneInstantAreSolvedOnce) {
  // Link L = 12 GB/s. At 0, A (12 GB), B (24 GB) and C (36 GB) start one by one: nothing is
  // solved until flush(), then 4 GB/s each; A drains at 3 s. At 3 s A leaves and D (6 GB)
  // arrives: one solve, B, C, D at 4 GB/s (B has 24 - 12 = 12 GB left: drains at 6 s; D at
  // 4.5 s). An unbatched network takes 3 + 2 solves for the same rates.
  FlowNetwork n;
  n.set_batch(true);
  const int32_t l = n.add_resource(12 * kGB);
  const ResourceUse u[] = {{l, 1}};
  const int32_t a = n.start(0, u, 12 * kGB, 0);
  const int32_t b = n.start(0, u, 24 * kGB, 1);
  const int32_t c = n.start(0, u, 36 * kGB, 2);
  EXPECT_TRUE(n.pending());
  EXPECT_TRUE(n.changed().empty());
  EXPECT_EQ(n.solves(), 0);
  n.flush(0);
  EXPECT_FALSE(n.pending());
  EXPECT_EQ(n.changed().size(), 3u);
  EXPECT_EQ(n.solves(), 1);
  for (int32_t x : {a, b, c}) EXPECT_DOUBLE_EQ(n.rate(x), 4 * kGB);
  EXPECT_EQ(n.drain_time(a), 3 * kS);
  n.finish(3 * kS, a);
  const int32_t d = n.start(3 * kS, u, 6 * kGB, 3);
  EXPECT_TRUE(n.changed().empty());
  n.flush(3 * kS);
  EXPECT_EQ(n.solves(), 2);
  for (int32_t x : {b, c, d}) EXPECT_DOUBLE_EQ(n.rate(x), 4 * kGB);
  EXPECT_EQ(n.drain_time(b), 6 * kS);
  EXPECT_EQ(n.drain_time(d), 4'500'000'000'000);
  // A departure from links none of which is saturated changes no rate and leaves nothing
  // to solve: on M = 100 GB/s, E alone is bottlenecked at 10 GB/s on its own N.
  const int32_t m = n.add_resource(100 * kGB), nn = n.add_resource(10 * kGB);
  const ResourceUse ue[] = {{m, 1}, {nn, 1}}, uf[] = {{m, 1}};
  const int32_t e = n.start(3 * kS, ue, 10 * kGB, 4);
  const int32_t f = n.start(3 * kS, uf, 10 * kGB, 5);
  n.flush(3 * kS);
  EXPECT_DOUBLE_EQ(n.rate(e), 10 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f), 90 * kGB);
  n.finish(n.drain_time(f), f);  // M was saturated (10 + 90): E may speed up
  EXPECT_TRUE(n.pending());
  n.flush(n.drain_time(f));
  EXPECT_DOUBLE_EQ(n.rate(e), 10 * kGB);
}

TEST(BatchSolves, ACapacityChangeSolvesWhatIsPending) {
  // A (10 GB) starts at 0 on a 10 GB/s link; before the flush the link drops to 5 GB/s (a
  // timed fault): set_capacity() solves at once, A with the new capacity: 5 GB/s, drains at
  // 2 s.
  FlowNetwork n;
  n.set_batch(true);
  const int32_t l = n.add_resource(10 * kGB);
  const ResourceUse u[] = {{l, 1}};
  const int32_t a = n.start(0, u, 10 * kGB, 0);
  n.set_capacity(0, l, 5 * kGB);
  EXPECT_FALSE(n.pending());
  ASSERT_EQ(n.changed().size(), 1u);
  EXPECT_DOUBLE_EQ(n.rate(a), 5 * kGB);
  EXPECT_EQ(n.drain_time(a), 2 * kS);
}

TEST(BatchSolves, RandomInstantsGiveTheRatesOfASolveAfterEachChange) {
  // 2,000 instants of 1-4 changes each (arrivals of 1-4-link bundles, departures of the
  // bundles draining then) on 10 links of 10-80 GB/s; after each instant every active rate
  // and drain time of the batched network matches the one that solved after every change,
  // to rounding (a picosecond per second simulated for the drains).
  for (const bool local : {true, false}) {
    FlowNetwork batched, each;
    batched.set_batch(true);
    batched.set_local_updates(local);
    each.set_local_updates(local);
    uint64_t x = 11;
    auto next = [&](uint64_t m) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return (x >> 33) % m;
    };
    for (int r = 0; r < 10; ++r) {
      const double cap = (10 + 10 * static_cast<double>(next(8))) * kGB;
      batched.add_resource(cap);
      each.add_resource(cap);
    }
    std::vector<int32_t> active;
    SimTime now = 0;
    int64_t changes = 0;
    for (int instant = 0; instant < 2000; ++instant) {
      if (!active.empty() && next(2) == 0) {  // the next drains: every bundle draining then
        now = batched.drain_time(*std::min_element(
            active.begin(), active.end(),
            [&](int32_t a, int32_t b) { return batched.drain_time(a) < batched.drain_time(b); }));
        for (size_t i = 0; i < active.size();)
          if (batched.drain_time(active[i]) == now) {
            batched.finish(now, active[i]);
            each.finish(now, active[i]);
            active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
            ++changes;
          } else {
            ++i;
          }
      }
      for (uint64_t k = next(4); k > 0 && active.size() < 30; --k) {
        std::vector<ResourceUse> uses;
        const uint64_t len = 1 + next(4), first = next(10);
        for (uint64_t i = 0; i < len; ++i)
          uses.push_back(
              {static_cast<int32_t>((first + 3 * i) % 10), 1 + static_cast<int32_t>(next(2))});
        const double bytes = (1 + static_cast<double>(next(100))) * 0.01 * kGB;
        const int32_t a = batched.start(now, uses, bytes, 0);
        ASSERT_EQ(each.start(now, uses, bytes, 0), a);
        active.push_back(a);
        ++changes;
      }
      batched.flush(now);
      for (int32_t b : active) {
        ASSERT_NEAR(batched.rate(b), each.rate(b), 1e-9 * each.rate(b)) << "instant " << instant;
        ASSERT_NEAR(static_cast<double>(batched.drain_time(b)),
                    static_cast<double>(each.drain_time(b)), 2 + static_cast<double>(now) / kS)
            << "instant " << instant;
      }
    }
    EXPECT_LT(batched.solves(), each.solves());
    std::printf("batched: %lld changes, %lld solves (%lld solving after each)\n",
                static_cast<long long>(changes), static_cast<long long>(batched.solves()),
                static_cast<long long>(each.solves()));
  }
}

}  // namespace
}  // namespace rapid::des

namespace rapid {
namespace {

// Every 23rd feasible layout of the demo job, simulated with one solve per instant
// and with one per change: the same step time and breakdown to 1e-9 of the step (rates
// are equal to rounding, and a drain rounds up to the picosecond).
TEST(BatchSolves, DemoLayoutsTakeTheSameTimeEitherWay) {
  DesOptions off;
  off.batch_solves = false;
  double worst = 0;
  uint64_t solves_with = 0, solves_without = 0;
  const int compared = test::each_demo_layout_two_ways(off, 23, [&](const test::DesPair& d) {
    const EvalResult &a = d.with, &b = d.without;
    const std::string layout = d.point.par.describe();
    ASSERT_EQ(a.status, b.status) << layout;
    const double tol = 1e-9 * b.step_time_s;
    worst = std::max(worst, std::abs(a.step_time_s - b.step_time_s) / b.step_time_s);
    EXPECT_NEAR(a.step_time_s, b.step_time_s, tol) << layout;
    EXPECT_NEAR(a.dp_exposed_time_s, b.dp_exposed_time_s, tol) << layout;
    EXPECT_NEAR(a.pp_comm_time_s, b.pp_comm_time_s, tol) << layout;
    EXPECT_NEAR(a.bubble_time_s, b.bubble_time_s, tol) << layout;
    EXPECT_NEAR(a.max_link_utilization, b.max_link_utilization, 1e-9) << layout;
    solves_with += d.with_report.solves;
    solves_without += d.without_report.solves;
  });
  std::printf(
      "batched solves: %d layouts, largest relative step-time difference %.3g, solves %llu vs "
      "%llu one per change\n",
      compared, worst, static_cast<unsigned long long>(solves_with),
      static_cast<unsigned long long>(solves_without));
  EXPECT_GE(compared, 50);
  EXPECT_LE(solves_with, solves_without);
}

}  // namespace
}  // namespace rapid
