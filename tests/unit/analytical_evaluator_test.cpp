#include "rapid/analytical/analytical_evaluator.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace rapid {
namespace {

class Pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    spec = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  }
  // Evaluates a layout whose stages are all alike (no embedding/LM head extras).
  EvalResult equal_stages(ParallelConfig c) {
    Workload w;
    build_workload(spec.model, spec.training, spec.network, c, w);
    for (StageInfo& st : w.stages) st.has_embedding = st.has_lm_head = false;
    AnalyticalEvaluator eval(spec.model, spec.training, spec.hardware[0], spec.network);
    EvalResult r;
    eval.evaluate(w, r);
    return r;
  }
  SweepSpec spec;
};

TEST_F(Pipeline, BubbleFractionIsPpMinusOneOverVppTimesM) {
  // Narayanan et al. 2021 sec 2.2: with m micro-batches of t each, 1F1B takes
  // (m + pp - 1) t and interleaving with vpp chunks (m + (pp - 1)/vpp) t: the bubble over
  // the ideal m t is (pp - 1) / (vpp m). Here t is a middle stage's forward, backward and
  // its two blocking sends (the bottleneck stage's work); no DP (dp = 1).
  ParallelConfig c;
  c.pp = 4;
  c.dp = 1;
  spec.training.global_batch_size = 8;  // m = 8
  for (int vpp : {1, 2}) {
    c.vpp = vpp;
    EvalResult r = equal_stages(c);
    const double busy =
        r.compute_time_s + r.tp_comm_time_s + r.pp_comm_time_s + r.host_bound_time_s;
    EXPECT_NEAR(r.step_time_s, busy + r.bubble_time_s + r.optimizer_time_s, 1e-12);
    EXPECT_NEAR(r.bubble_time_s / busy, 3.0 / (vpp * 8.0), 1e-9) << "vpp " << vpp;
  }
}

TEST_F(Pipeline, NoBubbleWithoutPipelining) {
  ParallelConfig c;
  c.dp = 8;
  EvalResult r = equal_stages(c);
  EXPECT_DOUBLE_EQ(r.bubble_time_s, 0.0);
  EXPECT_DOUBLE_EQ(r.pp_comm_time_s, 0.0);
}

TEST_F(Pipeline, DpReductionHidesBehindBackwardButTheLastBucket) {
  // ZeRO-0 all-reduce of the fp32 grads of half of Llama 3 8B (tp 2). Overlap on: exposed >= the
  // last bucket's share (40 MB of the gradient bytes); overlap off: all of it.
  ParallelConfig c;
  c.tp = 2;
  c.dp = 32;
  spec.training.global_batch_size = 32;  // m = 1: one backward to hide behind
  EvalResult on = equal_stages(c);
  spec.training.overlap_grad_reduce = false;
  EvalResult off = equal_stages(c);
  EXPECT_DOUBLE_EQ(off.dp_exposed_time_s, off.dp_comm_time_s);
  EXPECT_LT(on.dp_exposed_time_s, off.dp_exposed_time_s);
  const double grads = 4.0 * 8.03e9 / 2;  // fp32 grads of half the model, bytes
  EXPECT_GE(on.dp_exposed_time_s, on.dp_comm_time_s * 40e6 / grads * 0.98);
}

}  // namespace
}  // namespace rapid
