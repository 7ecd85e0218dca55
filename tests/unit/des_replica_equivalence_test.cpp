// The DES's replica-equivalence rule (docs/des.md "Replica equivalence"): one replica
// stands for all when the replicas' flows differ only by which spines and leaves they take
// (the same ring structure, the same sharing), and every replica is simulated when a link
// fault or a straggler sets one apart.
#include <gtest/gtest.h>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/des/des_evaluator.hpp"
#include "rapid/nonideal/power_model.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// Llama 3 8B, TP8 per node, `dp` replicas and `pp` stages on a two-tier network of 45 GB/s
// achievable links (400 Gb/s x 0.9) with 2 nodes per leaf and full bisection, d-mod-k
// routing (the destination's position under its leaf picks the spine). ZeRO 0 without
// overlap: stage s's gradients are one all-reduce of S bytes on the DP stream.
struct Ring {
  SweepSpec spec = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096);
  ParallelConfig par;
  Workload w;
  Ring(Topology topology, int dp, int pp) {
    spec.network.topology = topology;
    spec.network.routing = Routing::DestinationModK;
    spec.network.nodes_per_leaf = 2;
    spec.network.oversubscription = 1;
    par.dp = dp;
    par.tp = 8;
    par.pp = pp;
    par.zero_stage = 0;
    par.sp = true;
    par.recompute = Recompute::Full;
    spec.training.overlap_grad_reduce = false;
    build_workload(spec.model, spec.training, spec.network, par, w);
  }
  EvalResult des(des::ReplicaMode mode, DesReport* report, const DesRun* run = nullptr,
                 std::vector<LinkFault> faults = {}) const {
    DesOptions o;
    o.replicas = mode;
    o.link_faults = std::move(faults);
    EvalResult r;
    DesEvaluator(spec.model, spec.training, spec.hardware[0], spec.network, o)
        .simulate(w, r, report, nullptr, run);
    return r;
  }
};

// Fat tree, 4 replicas on nodes 0, 1 (leaf 0) and 2, 3 (leaf 1), one stage. Leaf uplinks:
// 2 nodes x 8 NICs x 400 Gb/s / (1 x 400 Gb/s) = 16 spines. The DP ring of TP rank g goes
// 0 -> 1 and 2 -> 3 under a leaf, 1 -> 2 and 3 -> 0 over spine g (d-mod-k: the destination
// GPU's NIC is at position g under its leaf): replica 0 sends under its leaf, replica 1
// over a spine, so no per-replica comparison accepts them, but every ring (group copy) has
// the same hops, each link carrying one flow. Alone on its links each flow moves at
// B = 45 GB/s, and a ring all-reduce over n = 4 members sends 2 (n - 1) / n S = 1.5 S per
// member (Thakur et al. 2005, sec. 4; the network ring bubble of the shipped file is 0):
//     T = L + 1.5 S / B,   L the plan's latency.
TEST(DesReplicaEquivalence, RingsOverDifferentSpinesStandForAllReplicas) {
  const Ring c(Topology::FatTree, 4, 1);
  const double S = c.w.stages[0].params * c.spec.training.grad_reduce_bytes;
  const double B = 400e9 / 8 * c.spec.network.network_efficiency;
  const CollectiveCost cc(c.spec.hardware[0], c.spec.network);
  const CollectivePlan plan = cc.plan(CollectiveKind::AllReduce, S, c.w.group(CommGroup::DP));
  ASSERT_EQ(plan.algorithm, CollectiveAlgorithm::Ring);
  ASSERT_EQ(plan.num_tiers, 1);  // one member per node: the NIC tier only
  EXPECT_NEAR(plan.tiers[0].flow_bytes, 1.5 * S, 1e-12 * S);
  const double T = plan.latency_s + 1.5 * S / B;

  DesReport one_report, all_report;
  const EvalResult one = c.des(des::ReplicaMode::Auto, &one_report);
  const EvalResult all = c.des(des::ReplicaMode::All, &all_report);
  EXPECT_EQ(one_report.replicas_simulated, 1) << one_report.asymmetry;
  EXPECT_TRUE(one_report.asymmetry.empty());
  EXPECT_EQ(all_report.replicas_simulated, 4);
  EXPECT_NEAR(one.dp_comm_time_s, T, 1e-9 * T);
  EXPECT_NEAR(all.dp_comm_time_s, T, 1e-9 * T);
  EXPECT_NEAR(one.step_time_s, all.step_time_s, 1e-12 * all.step_time_s);
}

// Rail-optimized, 4 replicas x 2 stages: stage 0 on nodes 0-3, stage 1 on nodes 4-7 (2
// nodes per rail leaf: 2 spines per leaf). Stage 0's DP ring crosses the spine on 1 -> 2
// and 3 -> 0, both to position 0 under the destination leaf: spine 0. Replica 0's
// transfer to stage 1 (node 0 -> node 4, position 0) takes the same leaf -> spine 0 uplink
// as the ring hop 1 -> 2; replica 1's (node 1 -> 5) has spine 1 to itself. That uplink is
// a redundant constraint: node 0's NIC carries the same transfer and the same ring (its hop
// 0 -> 1) at the same capacity, so the uplink's load never exceeds the NIC's. The replicas
// are equivalent; both modes give the same step.
TEST(DesReplicaEquivalence, ASpineUplinkSharedLikeItsNicDoesNotSetAReplicaApart) {
  const Ring c(Topology::RailOptimized, 4, 2);
  DesReport one_report, all_report;
  const EvalResult one = c.des(des::ReplicaMode::Auto, &one_report);
  const EvalResult all = c.des(des::ReplicaMode::All, &all_report);
  EXPECT_EQ(one_report.replicas_simulated, 1) << one_report.asymmetry;
  EXPECT_EQ(all_report.replicas_simulated, 4);
  EXPECT_NEAR(one.step_time_s, all.step_time_s, 1e-9 * all.step_time_s);
  EXPECT_NEAR(one.dp_comm_time_s, all.dp_comm_time_s, 1e-9 * all.dp_comm_time_s);
}

// The first case with GPU 0's NIC at health 0.5 (both directions): the ring of TP rank 0
// crosses it (hop 0 -> 1 out, hop 3 -> 0 in) and runs at B / 2, the other rings at B; the
// rings are no longer alike and neither are the replicas: all four are simulated. The
// all-reduce waits for ring 0: T' = L + 1.5 S / (B / 2) = T + 1.5 S / B.
TEST(DesReplicaEquivalence, ALinkFaultSimulatesEveryReplica) {
  const Ring c(Topology::FatTree, 4, 1);
  LinkFault f;
  f.selector = LinkSelector::Nic;
  f.index = 0;
  f.health = 0.5;
  DesReport report;
  const EvalResult r = c.des(des::ReplicaMode::Auto, &report, nullptr, {f});
  EXPECT_EQ(report.replicas_simulated, 4);
  EXPECT_NE(report.asymmetry.find("link fault"), std::string::npos) << report.asymmetry;
  const double S = c.w.stages[0].params * c.spec.training.grad_reduce_bytes;
  const double B = 400e9 / 8 * c.spec.network.network_efficiency;
  const CollectiveCost cc(c.spec.hardware[0], c.spec.network);
  const double T =
      cc.plan(CollectiveKind::AllReduce, S, c.w.group(CommGroup::DP)).latency_s + 1.5 * S / B;
  EXPECT_NEAR(r.dp_comm_time_s, T + 1.5 * S / B, 1e-9 * T);
}

// The first case with replica 2 at half clock (a straggler, docs/nonideal.md): its compute
// takes longer, so the replicas are not alike whatever the network; the simulator refuses
// to let one stand for all even when the caller does not ask for every replica.
TEST(DesReplicaEquivalence, AStragglerSimulatesEveryReplica) {
  const Ring c(Topology::FatTree, 4, 1);
  const AnalyticalEvaluator ev(c.spec.model, c.spec.training, c.spec.hardware[0], c.spec.network);
  const PowerModel pm(ev.hardware(), ev.compute_cost());
  DesRun run;
  run.power = &pm;
  run.derate.assign(4, Derate{});
  DesReport even_report, slow_report;
  const EvalResult even = c.des(des::ReplicaMode::Auto, &even_report, &run);
  run.derate[2].clock = 0.5;
  const EvalResult slow = c.des(des::ReplicaMode::Auto, &slow_report, &run);
  EXPECT_EQ(even_report.replicas_simulated, 1) << even_report.asymmetry;
  EXPECT_EQ(slow_report.replicas_simulated, 4);
  EXPECT_NE(slow_report.asymmetry.find("replica 2"), std::string::npos) << slow_report.asymmetry;
  // The step waits for the straggler's compute at half clock.
  EXPECT_GT(slow.step_time_s, even.step_time_s);
}

}  // namespace
}  // namespace rapid
