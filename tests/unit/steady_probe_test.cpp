// The steady-state probe's decision (src/des/steady_probe.hpp), on cuts made by hand: a
// run is accepted when three consecutive periods have the same shape and relative times
// and the last two the same accumulator increments; refused when too few cuts are left.
#include <gtest/gtest.h>

#include "des/steady_probe.hpp"

namespace rapid::des {

namespace {

// A cut at t (ps) whose state digests to `state`, with one relative time (the period
// t - last cut, as the simulator records it first) and one accumulator `acc`.
void cut(SteadyProbe& probe, SimTime t, uint64_t state, int64_t acc, int64_t microbatches) {
  SteadyProbe::Cut& c = probe.open_cut();
  c.times.push_back(t - probe.last().t);
  c.ints.push_back(acc);
  probe.close_cut(t, state, 0, microbatches);
}

TEST(SteadyProbe, ThreeEqualPeriodsWithEqualIncrementsAreAccepted) {
  SteadyProbe p;
  p.begin(1, 5, 0, 0);
  // Cuts every 100 ps, the accumulator growing by 10 a period. Cut 1 has nothing to match;
  // cut 2 matches cut 1's shape (1 equal period) but has no increment to compare; cut 3
  // matches again (2) with the increment 10 = 10: accepted, period 100 ps.
  cut(p, 100, 7, 10, 10);
  cut(p, 200, 7, 20, 10);
  EXPECT_FALSE(p.accepted());
  cut(p, 300, 7, 30, 10);
  EXPECT_TRUE(p.accepted());
  EXPECT_FALSE(p.on());
  EXPECT_EQ(p.period(), 100);
  EXPECT_EQ(p.int_increments(), (std::vector<int64_t>{10}));
}

TEST(SteadyProbe, AChangedIncrementWaitsOneMorePeriod) {
  SteadyProbe p;
  p.begin(1, 5, 0, 0);
  // Increments 10, then 11: cut 3 has two equal periods but 11 != 10; cut 4 (11 = 11)
  // is accepted.
  cut(p, 100, 7, 10, 10);
  cut(p, 200, 7, 20, 10);
  cut(p, 300, 7, 31, 10);
  EXPECT_FALSE(p.accepted());
  cut(p, 400, 7, 42, 10);
  EXPECT_TRUE(p.accepted());
  EXPECT_EQ(p.int_increments(), (std::vector<int64_t>{11}));
}

TEST(SteadyProbe, ARunWithTooFewCutsLeftIsRefused) {
  SteadyProbe p;
  p.begin(1, 5, 0, 0);
  // 3 micro-batches, a cut each: after cut 2 with another state (0 equal periods) one cut is
  // left, which can make at most 1 of the 2 equal periods needed: refused.
  cut(p, 100, 7, 10, 3);
  EXPECT_FALSE(p.refused());
  cut(p, 200, 8, 20, 3);
  EXPECT_TRUE(p.refused());
}

TEST(SteadyProbe, AnEventOfAnotherShapeBreaksTheMatch) {
  SteadyProbe p;
  p.begin(1, 5, 0, 0);
  // The same cuts as the first test, with one event in period 3 of another shape than in
  // period 2's: the periods differ and nothing is accepted at cut 3.
  cut(p, 100, 7, 10, 10);
  p.event(1, 150);
  cut(p, 200, 7, 20, 10);
  p.event(2, 250);
  cut(p, 300, 7, 30, 10);
  EXPECT_FALSE(p.accepted());
}

}  // namespace
}  // namespace rapid::des
