// Model-state memory as the FSDP2 (torchtitan) and DeepSpeed stacks hold it, derived by
// hand from the stack files (configs/frameworks/torchtitan-2025.yaml, deepspeed-zero3.yaml;
// docs/model.md sec 3 and 11) and the Llama 3 8B shapes (configs/models/llama3-8b.yaml).
#include <gtest/gtest.h>

#include <string>

#include "rapid/memory/memory_model.hpp"
#include "rapid/spec/legality.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// Llama 3 8B parameters by hand (h 4096, 32 heads of 128, 8 KV heads, f 14336, V 128256):
// a layer holds Q and O 4096^2 each, K and V 4096 x 1024 each, three MLP matrices
// 4096 x 14336 and two RMSNorm weights:
//   2 x 16,777,216 + 2 x 4,194,304 + 3 x 58,720,256 + 2 x 4096 = 218,112,000;
// 32 layers 6,979,584,000, embedding and LM head 128256 x 4096 = 525,336,576 each, the
// final norm 4096: P = 8,030,261,248 on one GPU without TP or PP.
constexpr double kLayerParams = 218112000.0;
constexpr double kParams = 8030261248.0;

// Llama 3 8B on 8 H100s, sequence 8192, global batch 16, under `stack`.
SweepSpec llama8b_h100(const std::string& stack) {
  return test::spec_with_stack("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 16, 8192, stack);
}

// FSDP over the 8 GPUs (ZeRO-3, dp 8) at micro-batch `mbs`.
ParallelConfig fsdp8(int32_t mbs) {
  ParallelConfig c;
  c.dp = 8;
  c.mbs = mbs;
  c.zero_stage = 3;
  return c;
}

TEST(StackMemory, Fsdp2Llama3_8BOnEightGpus) {
  // torchtitan's Table 1 layout (docs/performance.md): FSDP over 8 GPUs, local batch 2,
  // sequence 8192, selective layer AC every 2nd block.
  SweepSpec s = llama8b_h100("torchtitan-2025");
  ParallelConfig c = fsdp8(2);
  c.recompute = Recompute::Full;
  c.recompute_method = RecomputeMethod::Every;
  c.recompute_layers = 2;
  ASSERT_EQ(illegal_reason(s, c), nullptr);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  ASSERT_DOUBLE_EQ(w.stages[0].params, kParams);
  ASSERT_DOUBLE_EQ(w.layer_params, kLayerParams);
  const MemoryBreakdown m = stage_memory(s.model, s.training, w, 0);
  // Weights: the fp32 shard of every parameter, 4P/8, plus the bf16 copies of the block
  // computing and the one prefetched (zero3_prefetch_units 1): 2 x 2 x 218,112,000.
  EXPECT_DOUBLE_EQ(m.weights_bytes, 4 * kParams / 8 + 2 * 2 * kLayerParams);
  // Gradients: the fp32 shard, 4P/8, plus one block's bf16 unsharded gradient and its fp32
  // reduce-scatter input during foreach_reduce's copy-in: (2 + 4) x 218,112,000.
  EXPECT_DOUBLE_EQ(m.grads_bytes, 4 * kParams / 8 + 6 * kLayerParams);
  // Adam's two fp32 moments of the shard, 8P/8: the fp32 parameters are the master weights.
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8 * kParams / 8);
  // Sharded model states 16 bytes per parameter over 8 ranks = 2P (not 18 or 20).
  EXPECT_DOUBLE_EQ(m.weights_bytes + m.grads_bytes + m.optimizer_bytes,
                   16 * kParams / 8 + 10 * kLayerParams);
  // Activations of one block kept whole (s 8192, b 2, sb = 16384; fused attention, no
  // dropout, tp 1): norm inputs 2 x 2sbh, QKV and MLP-up inputs 2sbh each, Q 2sbh, K and V
  // 2 x 2sb x 1024, attention output 2sbh, logsumexp 4sb x 32, SwiGLU gate, up and product
  // 6 sb x 14336: per token 8h + 2h + 2 x 2048 + 2h + 128 + 86016 = 139,392 bytes.
  const double sb = 16384.0;
  const double keep = 139392.0 * sb, input = 2.0 * sb * 4096;
  // Every 2nd of the 32 blocks is checkpointed: 16 keep their input only, 16 everything,
  // and one recomputed block holds everything again during its backward.
  EXPECT_DOUBLE_EQ(m.layer_activations_bytes, 16 * input + 16 * keep + keep);
  const ChunkLayers rc = chunk_layers_of(s.model, c, w.stages[0], 0);
  EXPECT_EQ(rc.dense_rc, 16);  // blocks 2, 4, ..., 32 replay their forward
}

TEST(StackMemory, PerOpRecomputeKeepsTheSavedMatmulOutputs) {
  // Llama 3 8B, s 8192, b 2 (sb = 16384), tp 1, per-op SAC: per token the block's input 2h,
  // w2's output 2h, wq's 2 x 32 x 128 = 2h, wv's 2 x 8 x 128 = 2048, the attention output
  // 2h and its logsumexp 4 x 32, w1's 2 x 14336: 8192 + 8192 + 8192 + 2048 + 8192 + 128 +
  // 28672 = 63,616 bytes. 32 blocks, and one replayed block whole again (139,392 - 63,616).
  SweepSpec s = llama8b_h100("torchtitan-2025");
  ParallelConfig c = fsdp8(2);
  c.recompute = Recompute::Op;
  ASSERT_EQ(illegal_reason(s, c), nullptr);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const double sb = 16384.0;
  EXPECT_DOUBLE_EQ(stage_memory(s.model, s.training, w, 0).layer_activations_bytes,
                   32 * 63616.0 * sb + (139392.0 - 63616.0) * sb);
  // Megatron-Core has no per-op policy: illegal there.
  SweepSpec mc = llama8b_h100("megatron-core-0.8");
  EXPECT_NE(illegal_reason(mc, c), nullptr);
}

TEST(StackMemory, MegatronKeepsTwentyBytesForTheSameLayout) {
  // The same layout under megatron-core-0.8 (bf16 parameters, bf16 main grads, fp32 master
  // copy and its fp32 gradient copy in the distributed optimizer): 2P/8 + 2P/8 + 16P/8,
  // and two gathered bf16 layers: 20 bytes per parameter, not FSDP2's 16.
  SweepSpec s = llama8b_h100("megatron-core-0.8");
  ParallelConfig c = fsdp8(2);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const MemoryBreakdown m = stage_memory(s.model, s.training, w, 0);
  EXPECT_DOUBLE_EQ(m.weights_bytes + m.grads_bytes + m.optimizer_bytes,
                   20 * kParams / 8 + 2 * 2 * kLayerParams);
}

TEST(StackMemory, DeepSpeedZero3Buffers) {
  // deepspeed-zero3: 2 + 2 + 12 bytes per parameter partitioned over dp 8 (no fp32 copy of
  // the gradient at the peak), one layer prefetched beside the one computing
  // (stage3_prefetch_bucket_size 5e7 elements < one 218M-parameter layer), and the IPG
  // reduce bucket: reduce_bucket_size 5e8 bf16 elements = 1e9 bytes, one buffer.
  SweepSpec s = test::spec_with_stack("llama3-8b", "a100-sxm4-80gb", "dgx-a100-superpod", 16, 4096,
                                      "deepspeed-zero3");
  ParallelConfig c = fsdp8(1);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const MemoryBreakdown m = stage_memory(s.model, s.training, w, 0);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * kParams / 8 + 2 * 2 * kLayerParams);
  EXPECT_DOUBLE_EQ(m.grads_bytes, 2 * kParams / 8 + 1e9);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 12 * kParams / 8);
  // ZeRO-1 with the stage-1/2 defaults (deepspeed.yaml): one 1e9-byte bucket buffer too,
  // the gradients whole (2P) and Adam's 12P/8.
  SweepSpec s1 = test::spec_with_stack("llama3-8b", "a100-sxm4-80gb", "dgx-a100-superpod", 16, 4096,
                                       "deepspeed");
  c.zero_stage = 1;
  build_workload(s1.model, s1.training, s1.network, c, w);
  const MemoryBreakdown z1 = stage_memory(s1.model, s1.training, w, 0);
  EXPECT_DOUBLE_EQ(z1.grads_bytes, 2 * kParams + 1e9);
  EXPECT_DOUBLE_EQ(z1.optimizer_bytes, 12 * kParams / 8);
}

// Llama 3 8B at s 8192, b 2 on one stage (tp 1, no SP): sb = 16384 tokens, sbh =
// 16384 x 4096 = 67,108,864, logits sbV = 16384 x 128256 = 2,101,346,304.
constexpr double kSb = 16384.0, kSbh = 67108864.0, kLogits = 2101346304.0;
// One block kept whole: 139,392 bytes per token (Fsdp2Llama3_8BOnEightGpus above).
constexpr double kKeep = 139392.0 * kSb;

TEST(StackMemory, LlmFoundryFusedCrossEntropyHoldsFourBytesPerLogit) {
  // llm-foundry's default loss (flash_attn ops/triton/cross_entropy.py CrossEntropyLoss):
  // the forward saves the bf16 logits themselves and an fp32 logsumexp per row; the
  // backward writes dlogits into torch.empty_like(logits) (inplace_backward False): 2 + 2
  // bytes per logit at the loss's peak (loss_bytes_per_logit 4), of which the bf16 logits
  // (2) stay alive through the layers' backward in Composer's state.outputs
  // (loss_bytes_held_per_logit 2).
  SweepSpec s = llama8b_h100("llm-foundry-fsdp");
  ParallelConfig c = fsdp8(2);
  ASSERT_EQ(illegal_reason(s, c), nullptr);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  MemoryBreakdown m = stage_memory(s.model, s.training, w, 0);
  // No recompute: the LM head's extras over the layers are the final norm input 2sbh, the
  // head's input 2sbh and 4 bytes per logit: 268,435,456 + 8,405,385,216.
  const double head = 4 * kSbh + 4 * kLogits;
  EXPECT_DOUBLE_EQ(m.layer_activations_bytes, 32 * kKeep);
  EXPECT_DOUBLE_EQ(m.activations_bytes - m.layer_activations_bytes, head);
  // Full recompute of every block (uniform, 1): 32 checkpointed inputs 2sbh, and the last
  // block replayed whole (kKeep = 2,283,798,528) after the loss's and the head's backward,
  // when only the held bf16 logits are alive: 2,283,798,528 + 2 x 2,101,346,304 =
  // 6,486,491,136 < head = 8,673,820,672, so the loss's moment is the peak.
  c.recompute = Recompute::Full;
  ASSERT_EQ(illegal_reason(s, c), nullptr);
  build_workload(s.model, s.training, s.network, c, w);
  m = stage_memory(s.model, s.training, w, 0);
  EXPECT_DOUBLE_EQ(m.layer_activations_bytes, 32 * 2 * kSbh + kKeep);
  EXPECT_DOUBLE_EQ(m.activations_bytes, 32 * 2 * kSbh + head);
  // Groups of 4 blocks (uniform, 4): 8 checkpoints, and a group of 4 blocks replayed whole:
  // 4 x 2,283,798,528 + 4,202,692,608 = 13,337,886,720 > head: that moment is the peak.
  c.recompute_method = RecomputeMethod::Uniform;
  c.recompute_layers = 4;
  ASSERT_EQ(illegal_reason(s, c), nullptr);
  build_workload(s.model, s.training, s.network, c, w);
  m = stage_memory(s.model, s.training, w, 0);
  EXPECT_DOUBLE_EQ(m.layer_activations_bytes, 8 * 2 * kSbh + 4 * kKeep);
  EXPECT_DOUBLE_EQ(m.activations_bytes, 8 * 2 * kSbh + 4 * kKeep + 2 * kLogits);
}

TEST(StackMemory, MegatronLossBuffersDieBeforeTheRecompute) {
  // Megatron-Core's vocab-parallel cross entropy keeps an fp32 copy of the logits (6 bytes
  // per logit with the bf16 ones at its peak) and frees it with its backward; nothing of the
  // logits is alive when the layers' backward replays them (loss_bytes_held_per_logit 0).
  // Full recompute, uniform 8: 4 checkpoints 2sbh, a group of 8 blocks replayed whole
  // 8 x 2,283,798,528 = 18,270,388,224 > head = 4sbh + 6 x 2,101,346,304 = 12,876,513,280.
  SweepSpec s = llama8b_h100("megatron-core-0.8");
  ParallelConfig c = fsdp8(2);
  c.zero_stage = 1;
  c.recompute = Recompute::Full;
  c.recompute_layers = 8;
  ASSERT_EQ(illegal_reason(s, c), nullptr);
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  MemoryBreakdown m = stage_memory(s.model, s.training, w, 0);
  EXPECT_DOUBLE_EQ(m.layer_activations_bytes, 4 * 2 * kSbh + 8 * kKeep);
  EXPECT_DOUBLE_EQ(m.activations_bytes, 4 * 2 * kSbh + 8 * kKeep);
  // Uniform 1: one block replayed, 2,283,798,528 < head: the loss's moment is the peak.
  c.recompute_layers = 1;
  build_workload(s.model, s.training, s.network, c, w);
  m = stage_memory(s.model, s.training, w, 0);
  EXPECT_DOUBLE_EQ(m.activations_bytes, 32 * 2 * kSbh + 4 * kSbh + 6 * kLogits);
}

TEST(StackMemory, EveryNthBlockRecompute) {
  // Period 3 on a 32-layer chunk: blocks 3, 6, ..., 30 are recomputed, floor(32 / 3) = 10;
  // a period longer than the chunk recomputes nothing and is refused, as is period 1
  // (plain full recompute).
  SweepSpec s = llama8b_h100("torchtitan-2025");
  ParallelConfig c = fsdp8(1);
  c.recompute = Recompute::Full;
  c.recompute_method = RecomputeMethod::Every;
  c.recompute_layers = 3;
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_EQ(chunk_layers_of(s.model, c, w.stages[0], 0).dense_rc, 10);
  EXPECT_TRUE(layer_recomputed(c, 2));
  EXPECT_FALSE(layer_recomputed(c, 3));
  c.recompute_layers = 33;
  EXPECT_NE(illegal_reason(s, c), nullptr);
  c.recompute_layers = 1;
  EXPECT_NE(illegal_reason(s, c), nullptr);
}

}  // namespace
}  // namespace rapid
