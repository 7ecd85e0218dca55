// The ZeRO schedule stated once (workload/zero_schedule.hpp) and its two consumers: the
// closed form's per-step DP bytes (dp_traffic) and the DES's stage programs (dp_ops) move
// the same bytes for every ZeRO stage (issue 31 part 2).
#include "rapid/workload/zero_schedule.hpp"

#include <gtest/gtest.h>

#include "rapid/analytical/data_parallel.hpp"
#include "rapid/des/stage_program.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(ZeroSchedule, WhatEachStageSyncsAndWhen) {
  // Rajbhandari et al. 2020, sec. 5: ZeRO 1 shards the optimizer states (gradients
  // reduce-scattered, weights gathered once a step), ZeRO 2 also the gradients (reduced as
  // they are produced: every micro-batch), ZeRO 3 also the weights (gathered for every pass).
  EXPECT_EQ(zero_schedule(0).reduce, CollectiveKind::AllReduce);
  EXPECT_FALSE(zero_schedule(0).gather_per_step || zero_schedule(0).gather_per_pass);
  EXPECT_EQ(zero_schedule(1).reduce, CollectiveKind::ReduceScatter);
  EXPECT_TRUE(zero_schedule(1).gather_per_step && !zero_schedule(1).reduce_every_microbatch);
  EXPECT_TRUE(zero_schedule(2).gather_per_step && zero_schedule(2).reduce_every_microbatch);
  EXPECT_TRUE(zero_schedule(3).gather_per_pass && zero_schedule(3).reduce_every_microbatch);
  EXPECT_FALSE(zero_schedule(3).gather_per_step);
}

// Bytes of one step: the DES stage program's collectives, each posted once per pass it
// belongs to (the hooks that post, not the gates), plus those posted at the step's start
// and after the optimizer.
double des_step_bytes(const des::StageProgram& sp, CollectiveKind kind, bool grad) {
  std::vector<int64_t> posts(sp.dp_ops.size(), 0);
  for (int32_t i = 0; i < sp.start_posts; ++i) posts[static_cast<size_t>(i)] = 1;
  for (size_t i = static_cast<size_t>(sp.end_posts_begin); i < sp.dp_ops.size(); ++i) posts[i] = 1;
  for (const des::Hook& h : sp.hooks)
    if (!h.gate) posts[static_cast<size_t>(h.dp_op)] = 1;
  double bytes = 0;
  for (size_t i = 0; i < sp.dp_ops.size(); ++i)
    if (sp.dp_ops[i].kind == kind && sp.dp_ops[i].grad == grad)
      bytes += sp.dp_ops[i].bytes * static_cast<double>(posts[i]);
  return bytes;
}

TEST(ZeroSchedule, TheDesStageProgramMovesTheClosedFormsBytes) {
  // Llama 3 8B, tp 2, pp 2, dp 4, 8 micro-batches: stage 0's dense parameters over DP.
  SweepSpec spec = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096);
  for (int zero = 0; zero <= 3; ++zero) {
    ParallelConfig par;
    par.tp = 2;
    par.pp = 2;
    par.dp = 4;
    par.zero_stage = zero;
    Workload w;
    build_workload(spec.model, spec.training, spec.network, par, w);
    des::StageProgram sp;
    des::build_stage_program(w, spec.model, spec.training, 0, sp);
    const double params = w.stages[0].params;
    const double m = static_cast<double>(w.num_microbatches);
    const DpTraffic t =
        dp_traffic(params, zero, spec.training.grad_reduce_bytes, kGatheredParamBytes);
    // Per step: the once-a-step collectives, and m times the per-micro-batch ones.
    const double reduce = t.all_reduce + t.reduce_scatter + m * t.mb_reduce_scatter;
    const double gather = t.all_gather + m * t.mb_all_gather;
    const CollectiveKind rk = zero_schedule(zero).reduce;
    EXPECT_NEAR(des_step_bytes(sp, rk, true), reduce, 1e-6 * reduce) << "zero " << zero;
    EXPECT_NEAR(des_step_bytes(sp, CollectiveKind::AllGather, false), gather,
                1e-6 * std::max(gather, 1.0))
        << "zero " << zero;
  }
}

TEST(ZeroSchedule, TheDesStageProgramsOwnersAreTheUnitsTheClosedFormCounts) {
  // Mixtral 8x7B (32 MoE layers), pp 2: stage 0 has the embedding and 16 layers, stage 1
  // 16 layers and the head: 17 dense units each, 16 expert units each (zero3_units). The
  // DES's owners: one per layer, the embedding and the head; those with experts the MoE
  // layers.
  SweepSpec spec = test::spec_with("mixtral-8x7b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096);
  ParallelConfig par;
  par.tp = 2;
  par.pp = 2;
  par.ep = 2;
  par.dp = 4;
  par.zero_stage = 3;
  Workload w;
  build_workload(spec.model, spec.training, spec.network, par, w);
  for (int64_t s = 0; s < 2; ++s) {
    const StageInfo& st = w.stages[static_cast<size_t>(s)];
    EXPECT_EQ(zero3_units(st, false), 17);
    EXPECT_EQ(zero3_units(st, true), 16);
    des::StageProgram sp;
    des::build_stage_program(w, spec.model, spec.training, s, sp);
    int64_t dense = 0, experts = 0;
    for (const des::Owner& o : sp.owners) {
      dense += o.dense_params > 0 ? 1 : 0;
      experts += o.expert_params > 0 ? 1 : 0;
    }
    EXPECT_EQ(dense, zero3_units(st, false)) << "stage " << s;
    EXPECT_EQ(experts, zero3_units(st, true)) << "stage " << s;
  }
}

}  // namespace
}  // namespace rapid
