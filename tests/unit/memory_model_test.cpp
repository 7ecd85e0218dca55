#include "rapid/memory/memory_model.hpp"

#include <gtest/gtest.h>

#include "rapid/spec/legality.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// Korthikanti et al. 2022 sec 4 with the Megatron 22B shapes of their Table 3:
// s=2048, b=4, h=6144, a=64, t=8; sbh = 50,331,648 bytes-per-unit.
class Korthikanti22B : public ::testing::Test {
 protected:
  void SetUp() override {
    spec = test::spec_with("megatron-gpt-22b", "a100-sxm4-80gb", "dgx-a100-superpod", 4, 2048);
    spec.training.framework.attention = {AttentionImpl::Unfused};
    par.tp = 8;
    par.mbs = 4;
  }
  SweepSpec spec;
  ParallelConfig par;
  const double sbh = 2048.0 * 4 * 6144;
};

TEST_F(Korthikanti22B, NoRecomputeTensorParallel) {
  // eq. 2: sbh (10 + 24/t + 5as/(ht)) = sbh (10 + 3 + 13.333...) = 1,325,400,064 B
  EXPECT_NEAR(layer_activation_bytes(spec.model, spec.training, par),
              sbh * (10.0 + 24.0 / 8 + 5.0 * 64 * 2048 / (6144.0 * 8)), 1.0);
  EXPECT_NEAR(layer_activation_bytes(spec.model, spec.training, par), 1325400064.0, 1.0);
}

TEST_F(Korthikanti22B, SequenceParallelSelective) {
  // eq. 6: 34 sbh / t = 213,909,504 B
  par.sp = true;
  par.recompute = Recompute::Selective;
  EXPECT_NEAR(layer_activation_bytes(spec.model, spec.training, par), 34.0 * sbh / 8, 1.0);
}

TEST_F(Korthikanti22B, FullRecomputeKeepsOnlyTheInput) {
  // sec 4.4: 2 sbh per layer, sharded by t with SP.
  par.recompute = Recompute::Full;
  EXPECT_NEAR(layer_activation_bytes(spec.model, spec.training, par), 2.0 * sbh, 1.0);
  par.sp = true;
  EXPECT_NEAR(layer_activation_bytes(spec.model, spec.training, par), 2.0 * sbh / 8, 1.0);
}

// Partial full recompute on one stage (Megatron --recompute-method, --recompute-num-layers):
// 22B (48 layers) at TP8 SP, PP2, mbs 4, 16 micro-batches: stage 0 holds 24 layers and,
// under 1F1B, pp - 0 = 2 micro-batches in flight. Per layer (Korthikanti eq. 5-6 with SP,
// unfused attention): all kept K = sbh/t (34 + 5as/h) = sbh/8 (34 + 106.667); input only
// I = 2 sbh / t. block k = 3: the first 3 layers of the chunk keep their input, the other
// 21 everything; one recomputed layer's activations exist while its backward runs:
//   2 (3 I + 21 K) + K.
// uniform k = 3: groups of 3 layers keep their input, ceil(24 / 3) = 8 checkpoints; one
// group recomputed at a time:   2 (8 I) + 3 K.
TEST_F(Korthikanti22B, RecomputeNumLayersOnOneStage) {
  spec.training.global_batch_size = 64;
  par.sp = true;
  par.pp = 2;
  par.recompute = Recompute::Full;
  par.recompute_layers = 3;
  const double K = sbh / 8 * (34.0 + 5.0 * 64 * 2048 / 6144), I = 2.0 * sbh / 8;
  Workload w;
  auto activations = [&](RecomputeMethod method) {
    par.recompute_method = method;
    build_workload(spec.model, spec.training, spec.network, par, w);
    EXPECT_EQ(w.stages[0].num_layers, 24);
    EXPECT_EQ(w.stages[0].chunks_in_flight, 2);
    return stage_memory(spec.model, spec.training, w, 0).layer_activations_bytes;
  };
  EXPECT_NEAR(activations(RecomputeMethod::Block), 2 * (3 * I + 21 * K) + K, 1e3);
  EXPECT_NEAR(activations(RecomputeMethod::Uniform), 2 * (8 * I) + 3 * K, 1e3);
  // k = 1, uniform, is plain full recompute: 24 checkpoints and one layer recomputed.
  par.recompute_layers = 1;
  EXPECT_NEAR(activations(RecomputeMethod::Uniform), 2 * (24 * I) + K, 1e3);
}

TEST(MemoryModel, ZeroStagesShardWhatTheyShouldByDp) {
  // Rajbhandari et al. 2020, Figure 1: with P parameters, 2P weights, K*P grads (here fp32
  // main grads, 4P) and 12P Adam states; ZeRO-1 shards the states, -2 also the grads,
  // -3 also the weights (plus two gathered layers of prefetch buffers).
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  ParallelConfig c;
  c.dp = 4;
  c.tp = 2;
  Workload w;
  auto mem = [&](int zero) {
    c.zero_stage = static_cast<int8_t>(zero);
    build_workload(s.model, s.training, s.network, c, w);
    return stage_memory(s.model, s.training, w, 0);
  };
  const double P = [&] {
    build_workload(s.model, s.training, s.network, c, w);
    return w.stages[0].params;
  }();
  MemoryBreakdown z0 = mem(0), z1 = mem(1), z2 = mem(2), z3 = mem(3);
  EXPECT_DOUBLE_EQ(z0.weights_bytes, 2 * P);
  EXPECT_DOUBLE_EQ(z0.grads_bytes, 4 * P);
  EXPECT_DOUBLE_EQ(z0.optimizer_bytes, 12 * P);
  EXPECT_DOUBLE_EQ(z1.optimizer_bytes, 3 * P);
  EXPECT_DOUBLE_EQ(z1.grads_bytes, 4 * P);
  EXPECT_DOUBLE_EQ(z2.grads_bytes, P);
  EXPECT_DOUBLE_EQ(z2.weights_bytes, 2 * P);
  EXPECT_DOUBLE_EQ(z3.weights_bytes, 2 * P / 4 + 2 * 2 * w.layer_params);
  // Llama 3 8B on tp=2: each GPU holds half of the 8.03e9 parameters' matrices.
  EXPECT_NEAR(P, 8.03e9 / 2, 0.01 * 8.03e9);
}

TEST(MemoryModel, Bf16RemainderMasterWeightsKeepTenBytesOfOptimizerState) {
  // NeMo 24.07's recipes run Apex DistributedFusedAdam with store_param_remainders
  // (configs/frameworks/nemo-24.07.yaml [DFA]): per parameter Adam's m and v in fp32
  // (4 + 4) and the low 16 bits of the fp32 master weight (2) beside the bf16 weight, 10
  // bytes sharded over dp, where Megatron-Core's distributed optimizer keeps 4 + 4 + 4 = 12.
  // Llama 3 8B, tp 2, dp 4, ZeRO-1, fp32 main gradients (no fp32 gradient copy): 10P / 4
  // against 12P / 4; weights (2P) and gradients (4P) are the same in both.
  SweepSpec mc = test::spec_with_stack("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096,
                                       "megatron-core-0.8");
  SweepSpec nemo = test::spec_with_stack("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64,
                                         4096, "nemo-24.07");
  EXPECT_EQ(mc.training.optimizer_bytes, 12);
  EXPECT_EQ(nemo.training.optimizer_bytes, 10);
  nemo.training.grad_bytes = mc.training.grad_bytes = 4;
  ParallelConfig c;
  c.dp = 4;
  c.tp = 2;
  c.zero_stage = 1;
  Workload w;
  build_workload(mc.model, mc.training, mc.network, c, w);
  const double P = w.stages[0].params;
  const MemoryBreakdown a = stage_memory(mc.model, mc.training, w, 0);
  build_workload(nemo.model, nemo.training, nemo.network, c, w);
  const MemoryBreakdown b = stage_memory(nemo.model, nemo.training, w, 0);
  EXPECT_DOUBLE_EQ(a.optimizer_bytes, 12 * P / 4);
  EXPECT_DOUBLE_EQ(b.optimizer_bytes, 10 * P / 4);
  EXPECT_DOUBLE_EQ(a.grads_bytes, b.grads_bytes);
  // 2P / 4 less at the peak: about 2 GB of Llama 3 8B's 4.0e9 parameters per GPU.
  EXPECT_NEAR(a.peak_bytes - b.peak_bytes, 2 * P / 4, 1.0);
}

TEST(MemoryModel, ZeroShardsOverDataAndContextRanks) {
  // dp 1 x cp 8 (torchtitan and Megatron-Core shard over the data x context ranks, which
  // hold the same weights): ZeRO-1 keeps 12P / 8 of Adam's states, ZeRO-3 2P / 8 of the
  // weights (+ two gathered layers), as dp 8 would.
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 8, 32768);
  ParallelConfig c;
  c.dp = 1;
  c.cp = 8;
  c.zero_stage = 1;
  EXPECT_EQ(illegal_reason(s, c), nullptr);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const double P = w.stages[0].params;
  EXPECT_DOUBLE_EQ(stage_memory(s.model, s.training, w, 0).optimizer_bytes, 12 * P / 8);
  c.zero_stage = 3;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_DOUBLE_EQ(stage_memory(s.model, s.training, w, 0).weights_bytes,
                   2 * P / 8 + 2 * 2 * w.layer_params);
  // One rank alone has nothing to shard over.
  c.cp = 1;
  EXPECT_NE(illegal_reason(s, c), nullptr);
}

TEST(MemoryModel, MicrobatchesInFlightFollowTheSchedule) {
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  ParallelConfig c;
  c.pp = 4;
  c.dp = 8;  // m = 64 / 8 = 8 micro-batches
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  // 1F1B: stage i keeps pp - i micro-batches in flight (Narayanan et al. 2021, sec 2.2.1).
  EXPECT_EQ(w.stages[0].chunks_in_flight, 4);
  EXPECT_EQ(w.stages[3].chunks_in_flight, 1);
  // Interleaved, vpp = 2: stage 0 keeps (pp-1)*2 + (vpp-1)*pp + 1 = 6 + 4 + 1 = 11 chunks
  // of 4 layers = 44 layers' activations = L (1 + (pp-1)/(pp*vpp)) = 32 * 11/8.
  c.vpp = 2;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_EQ(w.stages[0].chunks_in_flight, 11);
  EXPECT_EQ(w.stages[0].num_layers / c.vpp * w.stages[0].chunks_in_flight, 44);
}

}  // namespace
}  // namespace rapid
