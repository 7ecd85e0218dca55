// Hand-derived checks of context parallelism, expert parallelism (MoE), ZeRO-3 and uneven
// pipeline stages (issue 4). Derivations in the comments.
#include <gtest/gtest.h>

#include <cstring>

#include "rapid/analytical/data_parallel.hpp"
#include "rapid/workload/model_flops.hpp"
#include "rapid/workload/stage_assignment.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

const Op* find_op(const std::vector<Op>& ops, const char* name) {
  for (const Op& op : ops)
    if (std::strcmp(op.name, name) == 0) return &op;
  return nullptr;
}

TEST(ContextParallel, RingMovesEachRanksKvChunkAroundTheGroup) {
  // Llama 3 8B, seq 8192, cp 4, tp 1, mbs 1: each rank holds s/cp = 2048 tokens. Its K and
  // V chunk is 2 (K and V) * 2048 tokens * 8 KV heads * 128 dims * 2 B = 8 MiB; the ring
  // passes all cp chunks: an all-gather of 4 * 8 MiB = 32 MiB, of which each rank receives
  // (cp-1)/cp = 24 MiB per layer forward; backward passes K, V and dK, dV: 64 MiB.
  SweepSpec s = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 16, 8192);
  ParallelConfig c;
  c.cp = 4;
  c.dp = 2;
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const Op* fwd = find_op(w.layer.forward, "cp_kv_ring");
  const Op* bwd = find_op(w.layer.backward, "cp_kv_ring_bwd");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(fwd->group, CommGroup::CP);
  EXPECT_DOUBLE_EQ(fwd->bytes, 32.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(bwd->bytes, 64.0 * 1024 * 1024);
  EXPECT_EQ(fwd->overlap, +1);  // hidden behind the attention kernel that follows
  // Attention work per rank: 1/cp of the causal total, 4 * 32 heads * (8192^2 / 2) * 128 / 4.
  const Op* attn = find_op(w.layer.forward, "flash_attention");
  ASSERT_NE(attn, nullptr);
  EXPECT_DOUBLE_EQ(attn->flops, 4.0 * 32 * (8192.0 * 8192 / 2) * 128 / 4);
  // The CP group: cp 4 ranks at stride tp = 1 inside one 8-GPU node.
  EXPECT_EQ(w.group(CommGroup::CP).per_node, 4);
  // Gradients are reduced over dp * cp = 8 ranks.
  EXPECT_EQ(w.group(CommGroup::DPCP).size, 8);
}

class Mixtral : public ::testing::Test {
 protected:
  void SetUp() override {
    s = test::spec_with("mixtral-8x7b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  }
  SweepSpec s;
};

TEST_F(Mixtral, ParametersTotalAndActive) {
  // Per layer: attention 4096 * (32 + 2*8) * 128 + 32 * 128 * 4096 = 41,943,040;
  // router 4096 * 8 = 32,768; 8 experts of 3 * 4096 * 14336 = 176,160,768; norms 8192.
  // 32 layers: 32 * (41,943,040 + 32,768 + 8 * 176,160,768 + 8192) = 46,440,644,608;
  // embeddings 2 * 32000 * 4096 + final norm 4096 = 262,148,096.  Total 46,702,792,704
  // (Jiang et al. 2024: 46.7B). Active: 6 experts fewer per layer: -32 * 6 * 176,160,768
  // = 12,879,925,248 (12.9B).
  EXPECT_EQ(s.model.total_params(), 46702792704);
  EXPECT_EQ(s.model.active_params(), 12879925248);
}

TEST_F(Mixtral, FlopsPerTokenCountOnlyTheTopKExperts) {
  // Per layer: attention 41,943,040 + router 32,768 + 2 experts 352,321,536 = 394,297,344;
  // x 32 = 12,617,515,008; + LM head 32000 * 4096 = 131,072,000 -> 12,748,587,008.
  // 6 * 12,748,587,008 = 76,491,522,048; + 12 * 32 * 4096 * 4096 = 6,442,450,944
  //   = 82,933,972,992 FLOP per token.
  EXPECT_DOUBLE_EQ(model_flops_per_token(s.model, 4096), 82933972992.0);
  // The op graph agrees: unfused attention (the rule's full s x s), tp 1, ep 1.
  s.training.framework.attention = {AttentionImpl::Unfused};
  Workload w;
  ParallelConfig c;
  c.dp = 64;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_NEAR(workload_step_flops(w, false) / static_cast<double>(w.tokens_per_step()),
              82933972992.0, 82933972992.0 * 1e-9);
}

TEST_F(Mixtral, AllToAllBytesAndExpertShardsUnderExpertParallelism) {
  // tp 2 with SP, ep 4, mbs 1, seq 4096: T_norm = 4096 / 2 = 2048 tokens enter the router
  // on each GPU; each goes to top_k = 2 experts: dispatch sends 2048 * 2 * 4096 * 2 B
  // = 32 MiB (capacity factor 1), combine the same, in forward and again in backward.
  ParallelConfig c;
  c.tp = 2;
  c.sp = true;
  c.ep = 4;
  c.dp = 8;  // tp*cp*dp = 16 = ep (4) * etp (1) * edp (4)
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const Op* dispatch = find_op(w.moe_layer.forward, "moe_dispatch_all_to_all");
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->collective, CollectiveKind::AllToAll);
  EXPECT_EQ(dispatch->group, CommGroup::EP);
  EXPECT_DOUBLE_EQ(dispatch->bytes, 32.0 * 1024 * 1024);
  ASSERT_NE(find_op(w.moe_layer.backward, "moe_combine_all_to_all_bwd"), nullptr);
  // Each GPU holds 8 / 4 = 2 experts: the grouped GEMM has batch 2 and 2048 * 2 / 2 =
  // 2048 tokens per expert; 2 * 176,160,768 = 352,321,536 expert weights per MoE layer.
  const Op* up = find_op(w.moe_layer.forward, "moe_expert_up");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->batch, 2);
  EXPECT_EQ(up->m, 2048);
  EXPECT_DOUBLE_EQ(w.moe_expert_params, 352321536.0);
  // Expert data parallel = tp*cp*dp / (ep*etp) = 16 / 4 = 4; EP group stride etp = 1.
  EXPECT_EQ(w.group(CommGroup::EDP).size, 4);
  EXPECT_EQ(w.group(CommGroup::EP).size, 4);
}

TEST(ZeroStage3, GatherVolumePerStep) {
  // ZeRO-3 gathers the 2-byte weights in forward and again in backward of every
  // micro-batch and reduce-scatters the gradients: with P = 1e9 parameters on a GPU,
  // m = 8 micro-batches and bf16 gradients: all-gather 8 * 2 * 2e9 B = 32 GB per step,
  // reduce-scatter 8 * 2e9 = 16 GB (Rajbhandari et al. 2020, sec 7: 1.5x the all-reduce
  // volume of DP per micro-batch).
  const DpTraffic t = dp_traffic(1e9, 3, 2.0, 2.0);
  EXPECT_DOUBLE_EQ(t.mb_all_gather * 8, 32e9);
  EXPECT_DOUBLE_EQ(t.mb_reduce_scatter * 8, 16e9);
  EXPECT_DOUBLE_EQ(t.per_step(8), 48e9);
  // ZeRO-1 (distributed optimizer): one reduce-scatter and one all-gather per step.
  const DpTraffic z1 = dp_traffic(1e9, 1, 2.0, 2.0);
  EXPECT_DOUBLE_EQ(z1.per_step(8), 4e9);
}

TEST(UnevenStages, Llama3_405B_Gets7_8x14_7) {
  // 126 layers on 16 stages with the LM head worth ~0.6 layer on the last stage: 14
  // stages of 8 and the first and last of 7, as in the Llama 3 paper (sec 3.3.2).
  std::vector<double> extra(16, 0.0);
  extra.back() = 0.6;
  std::vector<int64_t> got = assign_layers(126, 16, true, extra);
  std::vector<int64_t> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(got, want);
  // An even split when asked and possible.
  EXPECT_EQ(assign_layers(80, 8, false, {}), std::vector<int64_t>(8, 10));
  // 10 layers on 4 stages, no extras: loads 3, 3, 2, 2 would be optimal either way; ties
  // go to later stages, so the first stage is the lighter one: 2, 2, 3, 3.
  EXPECT_EQ(assign_layers(10, 4, true, {}), (std::vector<int64_t>{2, 2, 3, 3}));
}

TEST(UnevenStages, WorkloadUsesTheBalancedSplitAndCountsMoeLayersPerStage) {
  SweepSpec s =
      test::spec_with("deepseek-v3-like", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
  ParallelConfig c;
  c.tp = 8;
  c.sp = true;
  c.pp = 4;
  c.ep = 8;
  c.dp = 2;
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  int64_t layers = 0, moe = 0;
  for (const StageInfo& st : w.stages) {
    layers += st.num_layers;
    moe += st.num_moe_layers;
  }
  EXPECT_EQ(layers, 61);
  EXPECT_EQ(moe, 58);  // the first 3 layers are dense
  EXPECT_EQ(w.stages[0].num_moe_layers, w.stages[0].num_layers - 3);
}

TEST(Zero2Buckets, TheBucketsOfTheChunksFirstOwnerArePostedAtItsEnd) {
  // Llama 3 70B at tp 8: 856M parameters a layer, 107M per GPU; Megatron's 40M-parameter
  // buckets filled in backward order. A two-layer chunk: layer 2 fills two buckets (80M,
  // posted during the backward) and leaves 27M; layer 1 completes that bucket (13M), two
  // more (80M) and a last one of 14M, all posted as its backward ends: 40 + 80 + 14 = 134M.
  EXPECT_DOUBLE_EQ(grads_posted_at_end(214e6, 107e6, 40e6), 134e6);
  // One layer a chunk: everything waits for its end.
  EXPECT_DOUBLE_EQ(grads_posted_at_end(107e6, 107e6, 40e6), 107e6);
  // Layers of exactly one bucket: only the first layer's bucket is left.
  EXPECT_DOUBLE_EQ(grads_posted_at_end(120e6, 40e6, 40e6), 40e6);
  // A chunk smaller than a bucket: one bucket, posted at the end.
  EXPECT_DOUBLE_EQ(grads_posted_at_end(30e6, 10e6, 40e6), 30e6);
}

}  // namespace
}  // namespace rapid
