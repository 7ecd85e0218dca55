// The DES's size bound (des/sim_size.hpp, issue 35): a step of 1e8 micro-batches simulated in
// full needed gigabytes and ended in std::bad_alloc; the per-pass state is estimated before
// anything is allocated and a simulation past kMaxSimStateBytes (512 MiB) is refused with
// SimulationTooLarge, a LimitError (a sweep row: status error, error_code limit).
#include <gtest/gtest.h>

#include "rapid/des/des_evaluator.hpp"
#include "rapid/des/sim_size.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

Workload flat(int pp, int dp, int vpp, int zero, int64_t m) {
  Workload w;
  w.par.pp = pp;
  w.par.dp = dp;
  w.par.vpp = vpp;
  w.par.zero_stage = static_cast<int8_t>(zero);
  w.num_microbatches = m;
  w.stages.resize(static_cast<size_t>(pp));
  return w;
}

TEST(DesSimSize, ThresholdByHand) {
  // pp 1, vpp 1, ZeRO 1: 2 m passes x (1 instance x 8 + 1 stage x 16) = 48 m bytes.
  // 512 MiB = 536870912 = 48 x 11184810 + 32: m = 11184810 fits, one more does not.
  EXPECT_DOUBLE_EQ(des::estimate_sim_size(flat(1, 1, 1, 1, 1000), true).bytes, 48000);
  EXPECT_NO_THROW(des::check_sim_size(flat(1, 1, 1, 1, 11184810), true));
  EXPECT_THROW(des::check_sim_size(flat(1, 1, 1, 1, 11184811), true), des::SimulationTooLarge);
  // Every replica: dp 8 instances x 8 + 16 = 80 bytes per pass; 1e8 micro-batches x 2 passes.
  const des::SimSize s = des::estimate_sim_size(flat(1, 8, 1, 1, 100'000'000), false);
  EXPECT_EQ(s.instances, 8);
  EXPECT_EQ(s.passes_per_stage, 200'000'000);
  EXPECT_DOUBLE_EQ(s.bytes, 200e6 * 80);
}

TEST(DesSimSize, ZeroThreeCountsEveryUnitsCollectives) {
  // pp 2, dp 4, all replicas, ZeRO 3 (a gather and a reduction per unit and pass): stage 0
  // 16 layers + embedding, stage 1 16 layers + LM head = 34 units x 2 = 68 DP ops per pass;
  // per pass 8 instances x 8 + 2 stages x 16 + 68 x 256 = 17504 bytes; vpp 2: 4 m passes.
  Workload w = flat(2, 4, 2, 3, 1000);
  w.stages[0].num_layers = w.stages[1].num_layers = 16;
  w.stages[0].has_embedding = true;
  w.stages[1].has_lm_head = true;
  const des::SimSize s = des::estimate_sim_size(w, false);
  EXPECT_DOUBLE_EQ(s.dp_ops_per_pass, 68);
  EXPECT_DOUBLE_EQ(s.bytes, 4000.0 * 17504);
}

TEST(DesSimSize, FullStepOfAHundredMillionSequencesIsALimitNotBadAlloc) {
  // The demo job (Llama 3 70B, 256 H100) with global_batch_size 1e8 on dp32 tp2 pp4, ZeRO 1:
  // m = 1e8 / 32 = 3125000, one replica per stage: 6.25e6 passes x (4 x 8 + 4 x 16) = 600e6
  // bytes > 512 MiB. Every micro-batch (steady_state false, `--full`): refused before any
  // allocation. The steady state simulates 2 pp + 5 = 13 micro-batches and adds the
  // 3125000 - 13 periods of one.
  SweepSpec spec = load_sweep_spec(test::source_path("jobs/llama3-70b-256xh100.yaml"));
  spec.training.global_batch_size = 100'000'000;
  ParallelConfig par;
  par.dp = 32;
  par.tp = 2;
  par.pp = 4;
  par.mbs = 1;
  par.zero_stage = 1;
  par.recompute = Recompute::Full;
  Workload w;
  build_workload(spec.model, spec.training, spec.network, par, w);
  ASSERT_EQ(w.num_microbatches, 3'125'000);
  EXPECT_DOUBLE_EQ(des::estimate_sim_size(w, true).bytes, 600e6);
  DesOptions full;
  full.steady_state = false;
  EvalResult r;
  try {
    DesEvaluator(spec.model, spec.training, spec.hardware[0], spec.network, full).evaluate(w, r);
    ADD_FAILURE() << "no SimulationTooLarge";
  } catch (const des::SimulationTooLarge& e) {
    EXPECT_NE(std::string(e.what()).find("3125000 micro-batches x 2 passes x 4 stage instances"),
              std::string::npos)
        << e.what();
  }
  DesReport report;
  DesEvaluator(spec.model, spec.training, spec.hardware[0], spec.network)
      .simulate(w, r, &report, nullptr);
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_EQ(report.extrapolated_periods, 3'125'000 - 13);
}

}  // namespace
}  // namespace rapid
