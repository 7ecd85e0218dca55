// ZeRO-3 units of one pass (include/rapid/analytical/unit_pass.hpp) and two transfers on
// one link (include/rapid/cost/link_sharing.hpp), on cases small enough to run by hand,
// and the extrapolated run against every unit simulated.
#include "rapid/analytical/unit_pass.hpp"

#include <gtest/gtest.h>

#include <random>

#include "rapid/cost/link_sharing.hpp"

namespace rapid {
namespace {

TEST(LinkSharing, TwoTransfersOnOneLinkByHand) {
  // One flow each: while both run each moves at half speed. A 1 s transfer beside a 3 s
  // one ends at 2 s (it has moved 2 x 1/2); a 3 s one beside a 1 s one shares for 2 s (the
  // short one is done), has moved 1 s of its own, and needs 2 s more: 4 s = 3 + 1.
  EXPECT_DOUBLE_EQ(shared_link_time(1.0, 1, 3.0, 1), 2.0);
  EXPECT_DOUBLE_EQ(shared_link_time(3.0, 1, 1.0, 1), 4.0);
  // Three background flows against one: a quarter of the link, 4 s for 1 s of work while
  // the background (10 s) lasts.
  EXPECT_DOUBLE_EQ(shared_link_time(1.0, 1, 10.0, 3), 4.0);
  EXPECT_DOUBLE_EQ(shared_link_time(1.0, 1, 0.0, 1), 1.0);  // nothing beside it
}

TEST(LinkSharing, PlanBesideSharesOnlyTheLinksBothUse) {
  // A send over the NICs (2 ms alone, 10 us latency) beside a reduce-scatter whose NIC tier
  // takes 5 ms and whose NVLink tier 1 ms: the send shares the NICs, 2 x 2 = 4 ms, plus its
  // latency; over NVLink alone it would not meet the reduction's NIC tier.
  CollectivePlan send;
  send.latency_s = 10e-6;
  send.num_tiers = 1;
  send.tiers[0] = {FlowPattern::Peer, true, 2e-3 * 50e9, 1.0, 50e9};
  CollectivePlan rs;
  rs.latency_s = 20e-6;
  rs.num_tiers = 2;
  rs.tiers[0] = {FlowPattern::IntraRing, false, 1e-3 * 400e9, 1.0, 400e9};
  rs.tiers[1] = {FlowPattern::InterRing, true, 5e-3 * 50e9, 1.0, 50e9};
  EXPECT_NEAR(plan_time_beside(send, rs), 10e-6 + 4e-3, 1e-12);
  CollectivePlan nv = send;
  nv.tiers[0].network = false;
  // Over NVLink it shares the reduction's 1 ms NVLink tier: 2 + min(2, 1) = 3 ms.
  EXPECT_NEAR(plan_time_beside(nv, rs), 10e-6 + 3e-3, 1e-12);
}

TEST(LinkSharing, TierShareIsPerOwnFlowOfTheSlowestTier) {
  // An all-to-all whose NIC tier takes 4 ms with 8 of its flows on each NIC link and whose
  // NVLink tier takes 1 ms: one DP flow more on every NIC link leaves each of its flows
  // 8/9 of the link (max-min fair), the tier takes 4 x 9/8 = 4.5 ms: 0.5 ms more, 1/8 of
  // its 4 ms. Its NVLink tier does not set its pace: no share there.
  CollectivePlan a2a;
  a2a.num_tiers = 2;
  a2a.tiers[0] = {FlowPattern::Peer, false, 1e-3 * 400e9, 1.0, 400e9};
  a2a.tiers[1] = {FlowPattern::Peer, true, 0.5e-3 * 50e9, 8.0, 50e9};
  EXPECT_NEAR(a2a.time_s(), 4e-3, 1e-15);
  EXPECT_NEAR(tier_share(a2a, true), 1.0 / 8.0, 1e-12);
  EXPECT_DOUBLE_EQ(tier_share(a2a, false), 0.0);
  // A ring on NVLink alone, one flow per link: one more flow doubles it (share 1).
  CollectivePlan ring;
  ring.num_tiers = 1;
  ring.tiers[0] = {FlowPattern::IntraRing, false, 1e-3 * 400e9, 1.0, 400e9};
  EXPECT_DOUBLE_EQ(tier_share(ring, false), 1.0);
}

TEST(UnitPass, LinkBoundForwardByHand) {
  // Three units, gathers of 2 s each posted at the start one after the other, 1 s of
  // compute each: gather k is done at 2k, unit k runs [2k, 2k + 1]; the pass ends at 7 s
  // with 3 s of compute: 4 s exposed = g + 2 (g - c).
  const UnitRun run{3, 2.0, 0.0, 1.0};
  EXPECT_DOUBLE_EQ(unit_pass(&run, 1, false, 0.0).exposed, 4.0);
  // Compute-bound (gathers of 1 s, 2 s of compute): only the first gather shows.
  const UnitRun fast{3, 1.0, 0.0, 2.0};
  EXPECT_DOUBLE_EQ(unit_pass(&fast, 1, false, 0.0).exposed, 1.0);
  // 1.5 s of a reduction left from the pass before: the first gather shares the link for
  // 3 s (both at half speed: the reduction is done at 3 s, the gather has 0.5 s left), ends
  // at 3.5 s; then units start at 3.5, 5.5 (gather 2 at 5.5), 7.5: end 8.5, 5.5 s exposed.
  EXPECT_DOUBLE_EQ(unit_pass(&run, 1, false, 1.5).exposed, 5.5);
}

TEST(UnitPass, BackwardReductionsShareTheGathersLinksByHand) {
  // Gathers of 1 s, reductions of 1 s, compute 1.5 s, three units. Gather 1 ends at 1,
  // unit 1 runs [1, 2.5] and posts its reduction at 2.5; gather 2 ran [1, 2] alone; gather
  // 3 starts at 2, alone until 2.5 (0.5 s left), then beside reduction 1 at half speed:
  // done at 3.5, reduction 1 has 0.5 s left. Units 2 and 3 run [2.5, 4] and [4, 5.5]: only
  // the first gather (1 s) is exposed. Left at the end: reduction 1 ends at 4, reduction 2
  // runs [4, 5], reduction 3 is posted at 5.5: 1 s trailing.
  const UnitRun run{3, 1.0, 1.0, 1.5};
  const UnitPass p = unit_pass(&run, 1, true, 0.0);
  EXPECT_DOUBLE_EQ(p.exposed, 1.0);
  EXPECT_DOUBLE_EQ(p.trailing, 1.0);
  // Link-bound (compute 0.5 s), four units. Gather 1 ends at 1, unit 1 runs [1, 1.5] and
  // posts reduction 1. Gather 2: alone [1, 1.5] (0.5 s left), beside reduction 1 at half
  // speed: done at 2.5 (reduction 1: 0.5 s left); unit 2 [2.5, 3], reduction 2 at 3.
  // Gather 3 from 2.5 beside reduction 1: at 3 it has 0.75 s left, the reductions 0.25 + 1;
  // at half speed it needs 1.5 s more: 4.5 (0.5 s of reductions left); unit 3 [4.5, 5].
  // Gather 4 repeats that: 6.5; unit 4 [6.5, 7]. 7 s with 2 s of compute: 5 s exposed; the
  // 0.5 s left ends at 7 as reduction 4 is posted: 1 s trails.
  const UnitRun bound{4, 1.0, 1.0, 0.5};
  const UnitPass q = unit_pass(&bound, 1, true, 0.0);
  EXPECT_DOUBLE_EQ(q.exposed, 5.0);
  EXPECT_DOUBLE_EQ(q.trailing, 1.0);
}

TEST(UnitPass, LatenciesLeaveTheLinksToTheOtherStreamByHand) {
  // Forward: gathers of 2 s whose last 0.5 s is latency, 3 s of a reduction pending, 1 s
  // of compute, three units. Gather 1 moves its 1.5 s beside the reduction at half speed:
  // 3 s (1.5 s of the reduction left); during its latency the reduction runs alone: 1 s
  // left at 3.5. Gather 2: both at half for 2 s (the reduction is done, 0.5 s of the
  // gather left): 6, its latency: 6.5. Gather 3: 8.5. Units end at 4.5, 7.5, 9.5: 6.5 s
  // exposed (7 s if the latency held the links too).
  UnitRun fwd{3, 2.0, 0.0, 1.0};
  fwd.gather_latency_s = 0.5;
  EXPECT_DOUBLE_EQ(unit_pass(&fwd, 1, false, 3.0).exposed, 6.5);
  EXPECT_DOUBLE_EQ(unit_pass_exhaustive(&fwd, 1, false, 3.0).exposed, 6.5);
  // Backward: gathers of 1 s, reductions of 1 s followed by 0.5 s of latency, 0.5 s of
  // compute. Gather 1 [0, 1], unit 1 [1, 1.5] posts reduction 1. Gather 2 alone to 1.5,
  // beside reduction 1 to 2.5; unit 2 [2.5, 3] posts reduction 2. Gather 3 beside
  // reduction 1 until it ends at 3.5 (0.5 s of the gather left), alone during its latency:
  // 4; unit 3 [4, 4.5]: 3 s exposed. Reduction 2 starts at 4 (the latency's end), has
  // 0.5 s left at 4.5, reduction 3 (1 s) is posted then: 1.5 s trail.
  UnitRun bwd{3, 1.0, 1.0, 0.5};
  bwd.reduce_latency_s = 0.5;
  const UnitPass p = unit_pass(&bwd, 1, true, 0.0);
  EXPECT_DOUBLE_EQ(p.exposed, 3.0);
  EXPECT_DOUBLE_EQ(p.trailing, 1.5);
}

TEST(UnitPass, ExtrapolatedRunsEqualEveryUnitSimulated) {
  // Random passes of up to four runs (first extra, layers, MoE layers, last extra) with
  // long runs: the periodic shortcut gives what simulating every unit gives.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.1, 3.0);
  for (int trial = 0; trial < 400; ++trial) {
    UnitRun runs[4];
    for (UnitRun& r : runs) {
      r = {static_cast<double>(rng() % 40), u(rng), trial % 3 == 0 ? 0.0 : u(rng), u(rng)};
      r.gather_latency_s = trial % 4 < 2 ? 0.0 : r.gather_s * u(rng) / 3.0;  // up to 100%
      r.reduce_latency_s = trial % 5 < 2 ? 0.0 : u(rng) / 10.0;
    }
    runs[0].count = runs[0].count > 20 ? 1 : 0;
    runs[3].count = runs[3].count > 20 ? 1 : 0;
    for (bool backward : {false, true}) {
      const double pending = trial % 2 ? u(rng) : 0.0;
      const UnitPass a = unit_pass(runs, 4, backward, pending);
      const UnitPass b = unit_pass_exhaustive(runs, 4, backward, pending);
      EXPECT_NEAR(a.exposed, b.exposed, 1e-9 * (1.0 + b.exposed)) << "trial " << trial;
      EXPECT_NEAR(a.trailing, b.trailing, 1e-9 * (1.0 + b.trailing)) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace rapid
