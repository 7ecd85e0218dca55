// The discrete-event fidelity against the analytical one (issue 5 "Done when"): equivalence
// on contention-free cases, a congestion case derived by hand, exact aggregation, symmetry,
// the timeline and determinism across threads.
#include "rapid/des/des_evaluator.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rapid/core/op_class.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/memory/memory_model.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

struct Case {
  SweepSpec spec;
  ParallelConfig par;
};

EvalResult run(const Case& c, Fidelity f, DesOptions des = {}, DesReport* report = nullptr,
               des::Timeline* timeline = nullptr) {
  Workload w;
  build_workload(c.spec.model, c.spec.training, c.spec.network, c.par, w);
  EvalResult r;
  if (f == Fidelity::Analytical) {
    AnalyticalEvaluator(c.spec.model, c.spec.training, c.spec.hardware[0], c.spec.network)
        .evaluate(w, r);
    return r;
  }
  DesEvaluator(c.spec.model, c.spec.training, c.spec.hardware[0], c.spec.network, des)
      .simulate(w, r, report, timeline);
  return r;
}

ParallelConfig layout(int dp, int tp, int pp, int vpp = 1, int zero = 1, bool sp = true,
                      Recompute rc = Recompute::Selective) {
  ParallelConfig p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.vpp = vpp;
  p.zero_stage = static_cast<int8_t>(zero);
  p.sp = sp && tp > 1;
  p.recompute = rc;
  return p;
}

double rel(double a, double b) {
  return (a - b) / b;
}

// The split of compute by op class and of the layers' exposed collectives by group, the
// same in both fidelities where nothing contends (each class within 1e-6 of the step).
void expect_classes_agree(const EvalResult& a, const EvalResult& d) {
  for (size_t k = 0; k < kNumOpClasses; ++k)
    EXPECT_NEAR(d.*kOpClassColumns[k], a.*kOpClassColumns[k], 1e-6 * a.step_time_s)
        << kOpClassNames[k];
  for (size_t k = 0; k < kNumCommClasses; ++k)
    EXPECT_NEAR(d.*kCommClassColumns[k], a.*kCommClassColumns[k], 1e-6 * a.step_time_s)
        << kCommClassNames[k];
  EXPECT_NEAR(d.gemm_time_s + d.attention_time_s + d.memory_bound_time_s, d.compute_time_s,
              1e-9 * d.compute_time_s);
}

// Contention-free, single replica: the two fidelities must agree within 2%. What still
// differs by construction (docs/des.md "DES and analytical"): the DES charges one p2p time
// per batched send+recv pair where the analytical formula charges two, issues the first op
// of a pass one host overhead after the p2p synchronisation, reduces gradients in buckets
// (each bucket pays its collective's latency) and takes the pipeline's actual critical
// path instead of m * t_max + (sum - t_max) / vpp. In these cases each is below 0.5%.
TEST(DesEquivalence, OneNodeTensorParallelNoPipelineNoDp) {
  // Llama 3 8B on one DGX H100 node: TP8 only, 32 micro-batches of one sequence. Every op
  // is the same in both; the DES adds only the first op's host issue (10 us of ~10 s).
  Case c{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 8192),
         layout(1, 8, 1, 1, 0)};
  const EvalResult a = run(c, Fidelity::Analytical), d = run(c, Fidelity::Des);
  EXPECT_LT(std::fabs(rel(d.step_time_s, a.step_time_s)), 0.001)
      << d.step_time_s << " vs " << a.step_time_s;
  EXPECT_NEAR(d.compute_time_s, a.compute_time_s, 1e-6 * a.compute_time_s);
  EXPECT_NEAR(d.tp_comm_time_s, a.tp_comm_time_s, 1e-6 * a.tp_comm_time_s);
  expect_classes_agree(a, d);
  EXPECT_EQ(d.fidelity, 1);
  EXPECT_EQ(d.simulated_replicas, 1);
}

TEST(DesEquivalence, ContextAndExpertParallelClasses) {
  // No pipeline, one replica, ZeRO-0 with the gradient all-reduce after the last backward
  // (no DP traffic beside the passes), nothing else sharing a link: Llama 3 8B at CP2 on
  // two nodes (ring attention's K/V exchange through the NICs, outlasting the attention
  // kernel beside it: time_attribution_test.cpp), and Mixtral 8x7B at EP8 on one node (the
  // all-to-alls on NVLink).
  Case cp{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 4, 8192),
          layout(1, 1, 1, 1, 0)};
  cp.par.cp = 2;
  NetworkSpec& net = cp.spec.network;  // one GPU and one 10 GB/s NIC per node
  net.gpus_per_node = net.nics_per_node = 1;
  net.leaf_bandwidth_Bps = net.spine_bandwidth_Bps = 10e9;
  cp.spec.training.overlap_grad_reduce = false;
  const EvalResult a = run(cp, Fidelity::Analytical), d = run(cp, Fidelity::Des);
  EXPECT_GT(a.cp_comm_time_s, 0.0);
  expect_classes_agree(a, d);
  Case ep{test::spec_with("mixtral-8x7b", "h100-sxm5-80gb", "dgx-h100-superpod", 16, 4096),
          layout(8, 1, 1, 1, 0)};
  ep.par.ep = 8;
  ep.spec.training.overlap_grad_reduce = false;
  const EvalResult ae = run(ep, Fidelity::Analytical), de = run(ep, Fidelity::Des);
  EXPECT_GT(ae.ep_comm_time_s, 0.0);
  expect_classes_agree(ae, de);
}

TEST(DesEquivalence, DemoBaselinePipelineAndDataParallel) {
  // The demo job's baseline: Llama 3 70B on 256 H100, DP8 x TP8 x PP4, SP, ZeRO-1,
  // selective recompute, 64 micro-batches; rail-optimized, all 32 nodes under one leaf
  // per rail. DP rings and p2p use the NICs at different times but for the last
  // micro-batch's backward, where a bucket may meet a gradient transfer.
  Case c{test::spec_with("llama3-70b", "h100-sxm5-80gb", "dgx-h100-superpod", 512, 8192),
         layout(8, 8, 4)};
  c.spec.training.grad_reduce_bytes = 2;
  const EvalResult a = run(c, Fidelity::Analytical), d = run(c, Fidelity::Des);
  EXPECT_LT(std::fabs(rel(d.step_time_s, a.step_time_s)), 0.02);
  EXPECT_LT(std::fabs(rel(d.step_time_s, a.step_time_s)), 0.005)
      << d.step_time_s << " vs " << a.step_time_s;
  EXPECT_EQ(d.hot_spot_links, 0);
}

TEST(DesEquivalence, InterleavedScheduleWithTensorAndDataParallelOnNvlink) {
  // Llama 3 8B on 16 GPUs: DP2 x TP4 x PP2 with 2 virtual stages, 32 micro-batches. The
  // TP groups share their NVLink links with the DP rings (2 replicas per node): the DES
  // runs those TP collectives as flows while DP traffic is in flight.
  Case c{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096),
         layout(2, 4, 2, 2)};
  const EvalResult a = run(c, Fidelity::Analytical), d = run(c, Fidelity::Des);
  EXPECT_LT(std::fabs(rel(d.step_time_s, a.step_time_s)), 0.02)
      << d.step_time_s << " vs " << a.step_time_s;
}

// Two DP rings forced through one oversubscribed uplink. Network: 2 GPUs and 2 NICs of
// 50 GB/s per node, 3 nodes per leaf, oversubscription 6: a leaf's uplinks carry 3 x 2 x
// 50 / 6 = 50 GB/s, one uplink (U = 50 / 50). Layout DP2 x TP2 x PP2 on 4 nodes: stage 1's
// replicas sit on nodes 2 (leaf 0) and 3 (leaf 1), so both of its DP rings (one per TP
// rank) cross leaf 0 -> spine and back. The analytical model sees a 2-node group inside
// nodes_per_leaf = 3 (no spine, no oversubscription): the all-reduce of S bytes takes
//     T_a = L + 2 a_net + S / B,    B = 50 GB/s x 0.9
// (ring of 2 nodes: each GPU sends S through its NIC). In the DES two flows share the
// uplink of capacity B: each gets B / 2, so
//     T_d = L + 2 a_net + 2 S / B,   T_d / T_a = (L + 2 a_net + 2 S/B) / (L + 2 a_net + S/B).
// Gradient reduction without overlap: the whole all-reduce is on the DP stream at once.
TEST(DesCongestion, TwoDpRingsThroughOneOversubscribedUplink) {
  Case c{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096),
         layout(2, 2, 2, 1, 0, true, Recompute::Full)};
  NetworkSpec& net = c.spec.network;
  net.topology = Topology::FatTree;
  net.gpus_per_node = 2;
  net.nics_per_node = 2;
  net.leaf_bandwidth_Bps = 50e9;
  net.spine_bandwidth_Bps = 50e9;
  net.nodes_per_leaf = 3;
  net.oversubscription = 6;
  net.link_latency_s = 0;  // no per-hop latency: the spine crossing costs bandwidth only
  c.spec.training.overlap_grad_reduce = false;
  Workload w;
  build_workload(c.spec.model, c.spec.training, net, c.par, w);
  const double S = w.stages[1].params * c.spec.training.grad_reduce_bytes;
  const double B = 50e9 * net.network_efficiency;
  const double lat = net.collective_latency_s + 2 * net.network_step_latency_s;
  const double t_a = lat + S / B, t_d = lat + 2 * S / B;
  // The analytical model's own number for stage 1's all-reduce is T_a.
  const CollectiveCost cc(c.spec.hardware[0], net);
  EXPECT_NEAR(cc.time(CollectiveKind::AllReduce, S, w.group(CommGroup::DP)), t_a, 1e-9 * t_a);

  DesReport report;
  const EvalResult a = run(c, Fidelity::Analytical);
  const EvalResult d = run(c, Fidelity::Des, {}, &report);
  // Replica 1's pipeline transfers cross the spine and replica 0's do not: every replica
  // is simulated, each DP ring (one per TP rank) its own set of flows.
  EXPECT_EQ(report.replicas_simulated, 2);
  // The DP stream's busy time is stage 1's all-reduce: slower by T_d / T_a (~2.0 here).
  // One more flow meets it: stage 1's last gradient transfer to stage 0 (P bytes per GPU)
  // leaves at the same instant and shares the uplink and the NICs, delaying the ring by
  // at most the time of P bytes at half the link: 2 P / B (0.75 ms here).
  const double p2p = 2 * w.p2p.bytes / B;
  EXPECT_GE(d.dp_comm_time_s, t_d * (1 - 1e-9));
  EXPECT_LE(d.dp_comm_time_s, t_d + p2p * (1 + 1e-6));
  EXPECT_NEAR(d.dp_comm_time_s / t_a, t_d / t_a, p2p / t_a * (1 + 1e-6));
  EXPECT_GT(t_d / t_a, 1.9);
  EXPECT_GT(d.step_time_s, a.step_time_s);
  // Forcing one replica to stand for both (their rings then move as one bundle with two
  // flows on the uplink) gives the same all-reduce.
  DesOptions one;
  one.replicas = des::ReplicaMode::One;
  EXPECT_NEAR(run(c, Fidelity::Des, one).dp_comm_time_s, d.dp_comm_time_s, p2p);
  // The uplink is among the busiest links, with two flows at once.
  bool uplink = false;
  for (const DesLink& l : report.busiest)
    uplink = uplink || (l.name.find("spine") != std::string::npos && l.peak_flows >= 2);
  EXPECT_TRUE(uplink) << describe_des_report(report);
}

TEST(DesAggregation, FoldingUncontendableCollectivesChangesNothing) {
  // Op by op (every collective a flow, every block an op) vs folded: the same picosecond.
  // The last layout (Llama 3 8B's 32 layers on pp 4 x vpp 8: one layer per chunk, ZeRO 2)
  // posts a gradient bucket at the end of every backward pass: the case where a pass is
  // folded while a DP post is still to come in it (after its collectives).
  for (const ParallelConfig& p :
       {layout(2, 4, 2, 1, 1), layout(4, 2, 2, 1, 2, false),
        layout(2, 4, 2, 2, 3, true, Recompute::Full), layout(4, 2, 4, 8, 2)}) {
    Case c{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096), p};
    DesOptions op_level;
    op_level.coalesce = false;
    DesReport folded_report, op_report;
    const EvalResult folded = run(c, Fidelity::Des, {}, &folded_report);
    const EvalResult op = run(c, Fidelity::Des, op_level, &op_report);
    EXPECT_EQ(folded.step_time_s, op.step_time_s) << p.describe();
    EXPECT_EQ(folded.tp_comm_time_s, op.tp_comm_time_s) << p.describe();
    EXPECT_EQ(folded.dp_exposed_time_s, op.dp_exposed_time_s) << p.describe();
    EXPECT_GT(folded_report.folded_ops, 0u);
    EXPECT_EQ(op_report.folded_ops, 0u);
    EXPECT_LT(folded_report.events, op_report.events);
  }
}

TEST(DesSymmetry, OneReplicaStandsForAllOnASymmetricNetwork) {
  // The demo layout on its rail-optimized cluster: every replica's flows cross the same
  // kinds of links, so one replica (with all replicas' flows on the network) gives the
  // time of simulating all eight.
  Case c{test::spec_with("llama3-70b", "h100-sxm5-80gb", "dgx-h100-superpod", 512, 8192),
         layout(8, 8, 4)};
  DesOptions full;
  full.replicas = des::ReplicaMode::All;
  DesReport one_report, full_report;
  const EvalResult one = run(c, Fidelity::Des, {}, &one_report);
  const EvalResult all = run(c, Fidelity::Des, full, &full_report);
  EXPECT_EQ(one_report.replicas_simulated, 1);
  EXPECT_EQ(full_report.replicas_simulated, 8);
  EXPECT_NEAR(one.step_time_s, all.step_time_s, 1e-12 * all.step_time_s);
  EXPECT_NEAR(one.dp_comm_time_s, all.dp_comm_time_s, 1e-9 * all.dp_comm_time_s);
}

TEST(DesSymmetry, AReplicaOnAnotherLeafMakesTheSimulationFull) {
  // DP2 x TP8 x PP2 on a fat tree of 3 nodes per leaf: stage 0 on nodes 0, 1, stage 1 on
  // nodes 2 (leaf 0) and 3 (leaf 1). Oversubscription 24: a leaf's uplinks carry 3 x 8 x
  // 400 Gb/s / 24 = 400 Gb/s, one uplink (U = 1) of a NIC's capacity. Replica 0's pipeline
  // transfers (node 0 <-> 2) stay under leaf 0; replica 1's eight (node 1 <-> 3) cross the
  // spine, on the one uplink that stage 1's eight DP ring hops 2 -> 3 take too: 16 flows on
  // it against 2 on a NIC, so it binds and no NIC stands in for it. The replicas see
  // different sharing and Auto simulates both. (Rings whose hops alone cross different
  // spines do not set replicas apart: des_replica_equivalence_test.cpp.)
  Case c{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 24, 4096),
         layout(2, 8, 2, 1, 1)};
  c.spec.network.topology = Topology::FatTree;
  c.spec.network.nodes_per_leaf = 3;
  c.spec.network.oversubscription = 24;
  DesReport report;
  run(c, Fidelity::Des, {}, &report);
  EXPECT_EQ(report.replicas_simulated, 2);
  EXPECT_NE(report.asymmetry.find("replica 1 and replica 0"), std::string::npos)
      << report.asymmetry;
}

TEST(DesTimeline, RecordsEveryStreamAndChangesNoResult) {
  Case c{test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 16, 4096),
         layout(2, 4, 2)};
  des::Timeline tl;
  const EvalResult plain = run(c, Fidelity::Des);
  const EvalResult traced = run(c, Fidelity::Des, {}, nullptr, &tl);
  EXPECT_EQ(plain.step_time_s, traced.step_time_s);
  std::ostringstream out;
  tl.write_chrome_trace(out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.contains("traceEvents"));
  int tracks[4] = {0, 0, 0, 0}, processes = 0;
  double last_end = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") ++processes;
    if (e["ph"] != "X") continue;
    ++tracks[e["tid"].get<int>()];
    last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
  }
  EXPECT_EQ(processes, 2);  // one GPU per stage (one replica standing for both)
  for (int t = 0; t < 4; ++t) EXPECT_GT(tracks[t], 0) << "track " << t;
  EXPECT_NEAR(last_end * 1e-6, traced.step_time_s, 1e-6);
}

TEST(DesDeterminism, SameResultsOnOneAndTwoThreads) {
  SweepSpec spec = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096);
  std::vector<ParallelConfig> points;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4})
      for (int zero : {0, 1, 2, 3})
        if (16 % (tp * pp) == 0) points.push_back(layout(16 / (tp * pp), tp, pp, 1, zero));
  const DesEvaluator des(spec.model, spec.training, spec.hardware[0], spec.network);
  auto evaluate_all = [&](int threads) {
    std::vector<EvalResult> out(points.size());
    omp_set_num_threads(threads);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < points.size(); ++i) {
      Workload w;
      build_workload(spec.model, spec.training, spec.network, points[i], w);
      des.evaluate(w, out[i]);
    }
    return out;
  };
  const std::vector<EvalResult> one = evaluate_all(1), two = evaluate_all(2);
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(std::memcmp(&one[i].step_time_s, &two[i].step_time_s, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&one[i].dp_exposed_time_s, &two[i].dp_exposed_time_s, sizeof(double)), 0);
    EXPECT_EQ(one[i].hot_spot_links, two[i].hot_spot_links);
  }
}

}  // namespace
}  // namespace rapid

namespace rapid {
namespace {

// Issue 10 part 5: a simulation that runs past its event budget is a row with status error
// and error_code limit, not a crash or an aborted sweep. A 2-stage pipeline of 8 GPUs has
// at least one resume event per op of every pass: far more than 20 events; with the
// default budget the same point simulates.
TEST(DesLimits, EventBudgetMakesAnErrorRow) {
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  Point pt;
  pt.par = layout(2, 2, 2);
  Workload w;
  EvalResult r;
  DesOptions tiny;
  tiny.max_events = 20;
  PointEvaluator(s, Fidelity::Des, tiny).evaluate_guarded(pt, w, r, Fidelity::Des);
  EXPECT_EQ(r.status, Status::Error);
  EXPECT_EQ(r.error_code, static_cast<uint8_t>(ErrorCode::Limit));
  EXPECT_STREQ(kErrorCodeNames[r.error_code], "limit");
  PointEvaluator(s, Fidelity::Des).evaluate_guarded(pt, w, r, Fidelity::Des);
  EXPECT_EQ(r.status, Status::Ok);
}

}  // namespace
}  // namespace rapid
