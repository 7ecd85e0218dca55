// Per-operator-class attribution (docs/model.md section 8): the bottleneck stage's compute
// split by OpKind (gemm, attention, memory_bound), its exposed layer collectives by group
// (tp, cp, ep), and the analytical step time every row keeps (step_time_analytical_s).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/core/op_class.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/sweep/scheduler.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

ParallelConfig layout(int dp, int tp, int cp = 1, int ep = 1, int etp = 1) {
  ParallelConfig p;
  p.dp = dp;
  p.tp = tp;
  p.cp = cp;
  p.ep = ep;
  p.etp = etp;
  p.sp = tp > 1;
  p.zero_stage = 1;
  p.recompute = Recompute::None;
  return p;
}

// The analytical evaluation of `c` under `s` (its workload in `w`).
EvalResult analytical(const SweepSpec& s, const ParallelConfig& c, Workload& w) {
  build_workload(s.model, s.training, s.network, c, w);
  EvalResult r;
  AnalyticalEvaluator(s.model, s.training, s.hardware[0], s.network).evaluate(w, r);
  return r;
}

double compute_classes(const EvalResult& r) {
  double t = 0;
  for (auto col : kOpClassColumns) t += r.*col;
  return t;
}

// The columns exist under their classes' names and read the EvalResult field of the class.
TEST(TimeAttribution, ColumnsNamedAfterTheClasses) {
  auto column = [](const std::string& name) -> const Column* {
    for (const Column& c : result_columns())
      if (name == c.name) return &c;
    return nullptr;
  };
  ResultRow row;
  auto check = [&](const std::string& name, double EvalResult::*field, double value) {
    const Column* c = column(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_STREQ(c->unit, "s") << name;
    row.result.*field = value;
    EXPECT_EQ(c->get(row), value) << name;
  };
  for (size_t k = 0; k < kNumOpClasses; ++k)
    check(std::string(kOpClassNames[k]) + "_time_s", kOpClassColumns[k], 1.0 + k);
  for (size_t k = 0; k < kNumCommClasses; ++k)
    check(std::string(kCommClassNames[k]) + "_comm_time_s", kCommClassColumns[k], 10.0 + k);
  check("step_time_analytical_s", &EvalResult::step_time_analytical_s, 42.0);
}

// Without a pipeline (pp 1: no bubble) the step is the sum of its parts, so the layers'
// collectives by group must add up to all of their exposed time (what tp_comm_time_s held
// before the split), and the op classes to compute_time_s.
TEST(TimeAttribution, ClassesSumToComputeAndTheStep) {
  struct Case {
    const char* model;
    ParallelConfig par;
  };
  const Case cases[] = {
      {"llama3-8b", layout(1, 8)},              // TP8 on one node
      {"llama3-8b", layout(2, 2, 2)},           // TP2 x CP2 x DP2
      {"mixtral-8x7b", layout(8, 1, 1, 8)},     // EP8
      {"mixtral-8x7b", layout(4, 2, 1, 4, 2)},  // TP2, EP4 x ETP2
  };
  for (const Case& c : cases) {
    SweepSpec s = test::spec_with(c.model, "h100-sxm5-80gb", "dgx-h100-superpod", 32, 8192);
    Workload w;
    const EvalResult r = analytical(s, c.par, w);
    SCOPED_TRACE(c.par.describe());
    EXPECT_NEAR(compute_classes(r), r.compute_time_s, 1e-12 * r.compute_time_s);
    EXPECT_GT(r.gemm_time_s, 0.0);
    EXPECT_GT(r.attention_time_s, 0.0);
    EXPECT_GT(r.memory_bound_time_s, 0.0);
    const double parts = r.compute_time_s + r.interference_time_s + r.layer_comm_time_s() +
                         r.pp_comm_time_s + r.dp_exposed_time_s + r.host_bound_time_s +
                         r.optimizer_time_s + r.offload_time_s;
    EXPECT_NEAR(r.step_time_s, parts, 1e-9 * r.step_time_s);
    EXPECT_EQ(r.exposed_comm_time_s,
              r.layer_comm_time_s() + r.pp_comm_time_s + r.dp_exposed_time_s);
  }
}

// tp 1, cp 2: the only collectives in the layers are ring attention's K/V exchange
// (cp_kv_ring forward, cp_kv_ring_bwd backward; no TP group, no experts). Each runs beside
// the attention kernel it feeds and is exposed for what outlasts it: over one 10 GB/s NIC
// per node with one GPU per node (the CP pair on two nodes), the forward's all-gather of
// 2 x 2 K/V chunks of 4096 tokens x 8 KV heads x 128 x 2 B = 33.6 MB sends 16.8 MB per GPU
// (1.7 ms) beside an attention of 4 x 32 x 4096 x 4096 x 128 FLOPs = 0.27 TFLOP (about
// 0.5 ms on an H100): over 1 ms of each layer's forward alone is exposed, per micro-batch.
TEST(TimeAttribution, ContextParallelOnlyIsCpComm) {
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 4, 8192);
  NetworkSpec& net = s.network;
  net.gpus_per_node = 1;
  net.nics_per_node = 1;
  net.leaf_bandwidth_Bps = 10e9;
  net.spine_bandwidth_Bps = 10e9;
  Workload w;
  const EvalResult r = analytical(s, layout(1, 1, 2), w);
  EXPECT_EQ(r.tp_comm_time_s, 0.0);
  EXPECT_EQ(r.ep_comm_time_s, 0.0);
  EXPECT_GT(r.cp_comm_time_s, 1e-3 * w.num_microbatches * w.stages[0].num_layers);
}

// Mixtral 8x7B (32 MoE layers) on 8 GPUs, EP8, no TP: the layers' collectives are the
// token dispatch and combine all-to-alls over the EP group, forward and backward (4 per
// layer, each of the same send buffer T x top_k x capacity x h x 2 B, not overlapped with
// compute): ep_comm = m x 32 x 4 x T_a2a, T_a2a the all-to-all's time (CollectiveCost).
// With ETP2 the expert layers' all-gather / reduce-scatter over the ETP group count as TP.
TEST(TimeAttribution, ExpertParallelAllToAllIsEpComm) {
  SweepSpec s = test::spec_with("mixtral-8x7b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096);
  Workload w;
  const EvalResult r = analytical(s, layout(8, 1, 1, 8), w);
  EXPECT_EQ(r.tp_comm_time_s, 0.0);
  EXPECT_EQ(r.cp_comm_time_s, 0.0);
  const Op* a2a = nullptr;
  for (const Op& op : w.moe_layer.forward)
    if (std::string(op.name) == "moe_dispatch_all_to_all") a2a = &op;
  ASSERT_NE(a2a, nullptr);
  const AnalyticalEvaluator ev(s.model, s.training, s.hardware[0], s.network);
  const double t_a2a =
      ev.collective_cost().time(CollectiveKind::AllToAll, a2a->bytes, w.group(CommGroup::EP));
  EXPECT_GT(t_a2a, 0.0);
  const double expected = static_cast<double>(w.num_microbatches) * 32 * 4 * t_a2a;
  EXPECT_NEAR(r.ep_comm_time_s, expected, 1e-9 * expected);

  const EvalResult etp = analytical(s, layout(8, 1, 1, 4, 2), w);
  EXPECT_GT(etp.tp_comm_time_s, 0.0);  // tp 1: only the ETP group's collectives
  EXPECT_GT(etp.ep_comm_time_s, 0.0);
}

// One stage (pp 1, vpp 1) without recompute: per micro-batch it runs the embedding, 32
// layers and the LM head forward and backward once each; a memory-bound kernel moving B
// bytes takes B / (HBM bandwidth x elementwise efficiency) + launch at full speed, over the
// stack's step efficiency (docs/model.md sections 4 and 9). So
//   memory_bound_time_s = m x sum over those passes' memory-bound ops of that time.
TEST(TimeAttribution, MemoryBoundIsTheStagesStreamingKernels) {
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 16, 4096);
  Workload w;
  const EvalResult r = analytical(s, layout(2, 4), w);
  ASSERT_EQ(w.stages.size(), 1u);
  ASSERT_EQ(w.stages[0].num_layers, 32);
  const AnalyticalEvaluator ev(s.model, s.training, s.hardware[0], s.network);
  const HardwareSpec& hw = ev.hardware();
  double bytes = 0, kernels = 0;
  auto add = [&](const std::vector<Op>& ops, double times) {
    for (const Op& op : ops)
      if (op.kind == OpKind::MemoryBound) bytes += times * op.bytes, kernels += times;
  };
  add(w.layer.forward, 32), add(w.layer.backward, 32);
  add(w.embedding.forward, 1), add(w.embedding.backward, 1);
  add(w.lm_head.forward, 1), add(w.lm_head.backward, 1);
  ASSERT_TRUE(w.layer.recompute.empty());
  const double per_mb =
      (bytes / (hw.hbm_bandwidth_Bps * hw.elementwise_efficiency) + kernels * hw.kernel_launch_s) /
      ev.step_efficiency();
  const double expected = static_cast<double>(w.num_microbatches) * per_mb;
  EXPECT_NEAR(r.memory_bound_time_s, expected, 1e-9 * expected);
}

// Every row keeps the analytical step time: an analytical row its own step_time_s, a DES
// row the closed form's answer for the point (or the one it is given: the first pass's
// under --fidelity auto), a point that does not fit NaN.
TEST(TimeAttribution, AnalyticalStepTimeOnEveryRow) {
  const SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  const PointEvaluator pe(s, Fidelity::Des);
  Point p;
  p.par = layout(2, 2);
  p.par.pp = 2;
  Workload w;
  EvalResult a, d, given;
  evaluate_row(pe, p, w, a, Fidelity::Analytical);
  ASSERT_EQ(a.status, Status::Ok);
  EXPECT_EQ(a.fidelity, 0);
  EXPECT_EQ(a.step_time_analytical_s, a.step_time_s);
  evaluate_row(pe, p, w, d, Fidelity::Des);
  ASSERT_EQ(d.status, Status::Ok);
  EXPECT_EQ(d.fidelity, 1);
  EXPECT_EQ(d.step_time_analytical_s, a.step_time_s);
  EXPECT_NE(d.step_time_s, a.step_time_s);  // the simulation's own step
  evaluate_row(pe, p, w, given, Fidelity::Des, 1.25);
  EXPECT_EQ(given.step_time_analytical_s, 1.25);
  EXPECT_EQ(given.step_time_s, d.step_time_s);

  Point oom;  // Llama 3 8B unsharded (tp 1, ZeRO 0): 16 B per parameter exceed 80 GB
  oom.par = layout(1, 1);
  oom.par.zero_stage = 0;
  oom.par.mbs = 8;
  EvalResult o;
  evaluate_row(pe, oom, w, o, Fidelity::Des);
  ASSERT_EQ(o.status, Status::OutOfMemory);
  EXPECT_TRUE(std::isnan(o.step_time_analytical_s));
}

}  // namespace
}  // namespace rapid
