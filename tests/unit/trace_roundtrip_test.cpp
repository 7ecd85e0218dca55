// Chakra traces written from a workload, read back and replayed (issue 14 "Done when":
// the round trip gives the in-memory workload's DES step time).
#include <gtest/gtest.h>

#include <cmath>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/des/simulator.hpp"
#include "rapid/trace/et_file.hpp"
#include "rapid/trace/trace_check.hpp"
#include "rapid/trace/trace_replay.hpp"
#include "rapid/trace/trace_writer.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

struct RoundTrip {
  double des_s = 0, replay_s = 0;
  int32_t peak_flows = 0;  // the most flows the DES had on one link at once
  int32_t replay_peak_flows = 0;
  trace::InspectReport inspect;
  std::vector<trace::RankTrace> ranks;
};

// Writes every rank of `par` to a directory, inspects it, replays it, and simulates the
// same workload on the DES with what a trace does not carry switched off on both sides:
// no host issue overhead, no interference model (docs/chakra.md "What a replay leaves
// out"), every micro-batch simulated (no steady-state extrapolation).
RoundTrip round_trip(SweepSpec spec, const ParallelConfig& par, const std::string& name) {
  spec.training.host_overhead_per_op_s = 0;
  const AnalyticalEvaluator eval(spec.model, spec.training, spec.hardware[0], spec.network);
  Workload w;
  build_workload(spec.model, spec.training, spec.network, par, w);

  des::SimInputs in;
  in.model = &spec.model;
  in.training = &spec.training;
  in.network = &spec.network;
  in.compute = &eval.compute_cost();
  in.collective = &eval.collective_cost();
  in.step_efficiency = eval.step_efficiency();
  des::SimOptions opt;
  opt.steady_state = false;
  des::Simulator sim;
  des::SimResult res;
  sim.run(w, in, opt, res);
  EXPECT_TRUE(res.ok);

  const std::string dir = test::temp_path(name);
  trace::TraceInputs ti{&w,
                        &spec.model,
                        &spec.training,
                        &eval.compute_cost(),
                        &eval.collective_cost(),
                        eval.step_efficiency(),
                        spec.network.gpus_per_node};
  const int64_t world = int64_t{par.tp} * par.cp * par.dp * par.pp;
  trace::write_trace(ti, trace::TraceMetadata{}, dir, "rt", 0, world - 1);
  RoundTrip rt;
  rt.inspect = trace::inspect_trace(dir);
  const trace::TraceSet set = trace::scan_trace_dir(dir);
  std::vector<trace::RankTrace> ranks;
  for (const auto& [rank, file] : set.files) ranks.push_back(trace::read_rank_trace(rank, file));
  trace::ReplayInputs ri;
  ri.compute = &eval.compute_cost();
  ri.collective = &eval.collective_cost();
  ri.step_efficiency = eval.step_efficiency();
  ri.network = &spec.network;
  const trace::ReplayResult rr = trace::replay_traces(ranks, &*set.groups, ri);
  rt.replay_s = rr.step_time_s;
  rt.replay_peak_flows = rr.peak_flows;
  rt.des_s = res.step_time_s;
  rt.ranks = std::move(ranks);
  for (const des::LinkStat& l : res.links) rt.peak_flows = std::max(rt.peak_flows, l.peak_flows);
  return rt;
}

ParallelConfig layout(int dp, int tp, int pp, int vpp) {
  ParallelConfig p;
  p.dp = dp, p.tp = tp, p.pp = pp, p.vpp = vpp;
  p.sp = tp > 1;
  p.zero_stage = 1;
  p.recompute = Recompute::Selective;
  return p;
}

// Both sides time every op with the same cost objects, in integer picoseconds, and run the
// communication as flows of the same plans on the same fabric (FlowNetwork, the same
// bundles in the same order: the DES's classes of links loaded alike are the replay's links
// one by one, the same max-min levels): the step times are equal to the picosecond.
void expect_same_step(const RoundTrip& rt) {
  EXPECT_GT(rt.des_s, 0.0);
  EXPECT_EQ(des::to_ps(rt.replay_s), des::to_ps(rt.des_s))
      << "replay " << rt.replay_s << " s, DES " << rt.des_s << " s";
}

TEST(TraceRoundTrip, OneFOneBTensorAndPipelineParallelEqualsDes) {
  // Llama 3 8B on one DGX H100 node: TP4 x PP2, 8 micro-batches of one 8192-token sequence.
  const SweepSpec spec =
      test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 8192);
  const RoundTrip rt = round_trip(spec, layout(1, 4, 2, 1), "rt-1f1b");
  EXPECT_EQ(rt.peak_flows, 1);  // nothing shares a link: the DES is contention-free
  expect_same_step(rt);
  // 8 ranks; every pipeline transfer matched: stage 0 sends 8 activations (forward), stage
  // 1 sends 8 gradients (backward), on each of the 4 TP positions: 2 * 8 * 4 = 64 sends.
  ASSERT_EQ(rt.inspect.ranks.size(), 8u);
  EXPECT_EQ(rt.inspect.p2p_checked, 64u);
  EXPECT_EQ(rt.inspect.p2p_unchecked, 0u);
}

TEST(TraceRoundTrip, InterleavedScheduleWithASharedLinkEqualsDes) {
  // The same at PP2 with 2 virtual stages. Per TP position: stage 0 sends all 16 of its
  // forward outputs (2 chunks x 8 micro-batches) to stage 1, stage 1 its chunk-0 forward
  // outputs (8) back to stage 0's chunk 1; backward mirrors it (16 from stage 1, 8 wrapping
  // from stage 0's chunk 1): 48 sends, x 4 TP positions = 192.
  const SweepSpec spec =
      test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 8192);
  const RoundTrip rt = round_trip(spec, layout(1, 4, 2, 2), "rt-vpp");
  // Here stage 1's wrap-around forward output and its backward gradient leave on the same
  // NVLink link (GPU 4+i -> NVSwitch) at once: two flows share it, max-min fair, in the DES
  // and, their sends being flows on the same fabric, in the replay.
  EXPECT_EQ(rt.peak_flows, 2);
  EXPECT_EQ(rt.replay_peak_flows, 2);
  expect_same_step(rt);
  EXPECT_EQ(rt.inspect.p2p_checked, 192u);
}

TEST(TraceRoundTrip, PerRankTotalsFollowTheWorkload) {
  // Every rank of a stage runs the stage's ops: its GEMM and attention nodes' num_ops are
  // the workload's FLOPs of those ops, and with the other ops' FLOPs (rapid_flops) they sum
  // over the 8 ranks to workload_step_flops (with the recompute replay) within the int64
  // rounding of num_ops (< 1 FLOP per node).
  const SweepSpec spec =
      test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 8192);
  const RoundTrip rt = round_trip(spec, layout(1, 4, 2, 1), "rt-flops");
  Workload w;
  build_workload(spec.model, spec.training, spec.network, layout(1, 4, 2, 1), w);
  double flops = 0;
  uint64_t comp = 0, memory_bound = 0;
  // ASTRA-sim's roofline (docs/chakra.md "COMP nodes"): time = num_ops / min(peak, bw x
  // num_ops / tensor_size). A memory-bound node must sit below the ridge point, 989.4
  // TFLOP/s / 3.35 TB/s = 295 FLOP/B on the H100, for its time to be tensor_size / bw, and
  // carry num_ops >= 1 (0 makes it 0/0).
  const double ridge = 989.4e12 / 3.35e12;
  for (const trace::RankTrace& r : rt.ranks)
    for (const trace::TraceNode& n : r.et.nodes) {
      if (n.type != trace::NodeType::Comp) continue;
      ++comp;
      ASSERT_TRUE(n.num_ops && n.tensor_size && n.rapid_op) << n.name;
      EXPECT_GE(*n.num_ops, 1) << n.name;
      EXPECT_GE(*n.tensor_size, 1u) << n.name;
      const bool matmul = n.rapid_op->kind == trace::RapidOpKind::Gemm ||
                          n.rapid_op->kind == trace::RapidOpKind::Attention;
      flops += matmul ? static_cast<double>(*n.num_ops) : n.rapid_op->flops;
      if (!matmul) {
        ++memory_bound;
        EXPECT_LT(static_cast<double>(*n.num_ops) / static_cast<double>(*n.tensor_size), ridge)
            << n.name;
      }
    }
  EXPECT_GT(memory_bound, 0u);
  EXPECT_NEAR(flops, workload_step_flops(w, true), static_cast<double>(comp));
}

}  // namespace
}  // namespace rapid
