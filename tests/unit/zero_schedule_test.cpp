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

}  // namespace
}  // namespace rapid
