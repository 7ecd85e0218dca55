// One layer graph for training and serving (workload/layer_graph.hpp): a serving
// iteration's op list, read by hand from the model's shapes, and the places where a model
// feature reaches both consumers through the same function. Every expected value is
// derived in its comment.
#include "rapid/workload/layer_graph.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "inference/iteration_dims.hpp"
#include "rapid/spec/network_spec.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

/// h 1024, 8 query heads and 2 K/V heads of 128, SwiGLU 4096, vocab 32000, RoPE.
ModelSpec small_model() {
  return test::llama_shape(2, 1024, 8, 2, 4096, 32000);
}

/// A training micro-batch of 2048 tokens (global batch 8), the stack's defaults.
TrainingSpec training_2048() {
  TrainingSpec tr;
  tr.seq_length = 2048;
  tr.global_batch_size = 8;
  return tr;
}

ParallelConfig layout(int64_t tp, int64_t ep = 1) {
  ParallelConfig p;
  p.tp = tp;
  p.ep = ep;
  return p;
}

/// One prompt of 100 tokens (nothing before it: causal, 100 x 100 / 2 pairs) beside 4
/// decoding sequences with 4000 cached tokens in all; 5 sequences sample.
StepBatch mixed_batch() {
  StepBatch b;
  b.prefill_tokens = 100;
  b.prefill_seqs = 1;
  b.prefill_attention_pairs = 5000;
  b.decode_seqs = 4;
  b.decode_context_tokens = 4000;
  b.logits_seqs = 5;
  return b;
}

LayerDims serving(const ModelSpec& m, const ParallelConfig& p, const StepBatch& b,
                  DType dtype = DType::BF16) {
  ServingSpec s;
  s.dtype = dtype;
  LayerDims D = detail::serving_layer_dims(m, s, p);
  detail::set_iteration(D, b);
  return D;
}

std::vector<std::string> names(const std::vector<Op>& ops) {
  std::vector<std::string> out;
  for (const Op& op : ops) out.emplace_back(op.name);
  return out;
}

const Op& find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops)
    if (name == op.name) return op;
  ADD_FAILURE() << "no op " << name;
  static const Op none;
  return none;
}

// The bytes of every kernel named `name` in `ops` (an unfused op is one record per kernel)
// and how many kernels.
std::pair<double, int> total(const std::vector<Op>& ops, const std::string& name) {
  std::pair<double, int> out{0.0, 0};
  for (const Op& op : ops)
    if (name == op.name) {
      out.first += op.bytes;
      ++out.second;
    }
  return out;
}

TEST(LayerGraph, AServingIterationRunsTheLayersOpsForward) {
  OpTemplate t;
  build_dense_layer(serving(small_model(), layout(1), mixed_batch()), Recompute::None, t);
  // The engine's fused kernels: residual add inside the norms, rotary embedding with the
  // K/V cache write; the prompt's FlashAttention, then the decode tokens' split-KV kernel.
  EXPECT_EQ(names(t.forward),
            (std::vector<std::string>{"input_norm", "qkv_proj", "rope_kv_cache_write",
                                      "flash_attention", "decode_attention", "out_proj",
                                      "post_attn_norm", "mlp_up", "mlp_swiglu", "mlp_down"}));
  EXPECT_TRUE(t.backward.empty());  // forward only
  EXPECT_TRUE(t.recompute.empty());
  const int64_t T = 104;  // 100 prompt tokens + 4 decode tokens
  // Fused add + RMSNorm: x and the residual read, both written: 4 x 104 x 1024 x 2 B.
  EXPECT_DOUBLE_EQ(find(t.forward, "input_norm").bytes, 4.0 * T * 1024 * 2);
  // QKV: M = 104 tokens, N = (8 + 2 x 2) x 128 = 1536.
  EXPECT_EQ(find(t.forward, "qkv_proj").m, T);
  EXPECT_EQ(find(t.forward, "qkv_proj").n, 1536);
  // RoPE reads and writes q and k: 2 x 104 x (8 + 2) x 128 x 2 B = 532,480; the cache write
  // 104 tokens x 512 elements (2 x 2 heads x 128) x 2 B = 106,496.
  EXPECT_DOUBLE_EQ(find(t.forward, "rope_kv_cache_write").bytes, 532480.0 + 106496.0);
  // The prompt: 8 heads over 100 queries and 100 keys, causal, 4 query heads per K/V head.
  const Op& fa = find(t.forward, "flash_attention");
  EXPECT_EQ(fa.batch, 8);
  EXPECT_EQ(fa.m, 100);
  EXPECT_EQ(fa.n, 100);
  EXPECT_TRUE(fa.causal);
  EXPECT_EQ(fa.gqa_group, 4);
  // Decode: the cache read once, 4000 x 512 x 2 B = 4,096,000, plus queries and outputs
  // 2 x 4 x 8 heads x (128 + 128) x 2 B = 32,768; flops 2 x 4000 x 8 x (128 + 128).
  const Op& dec = find(t.forward, "decode_attention");
  EXPECT_EQ(dec.kind, OpKind::DecodeAttention);
  EXPECT_DOUBLE_EQ(dec.bytes, 4096000.0 + 32768.0);
  EXPECT_DOUBLE_EQ(dec.flops, 16384000.0);
  // SwiGLU reads gate and up, writes their product: 3 x 104 x 4096 x 2 B.
  EXPECT_DOUBLE_EQ(find(t.forward, "mlp_swiglu").bytes, 3.0 * T * 4096 * 2);
}

TEST(LayerGraph, TrainingKeepsItsOwnKernelsOfTheSameGraph) {
  // The same function for a training micro-batch: norm and residual as kernels of their
  // own, rope alone (no cache), no decode attention, and a backward list.
  const ModelSpec m = small_model();
  TrainingSpec tr = training_2048();
  OpTemplate t;
  build_dense_layer(LayerDims::for_training(m, tr, layout(1)), Recompute::None, t);
  const std::vector<std::string> n = names(t.forward);
  EXPECT_EQ(n.front(), "input_norm");
  EXPECT_EQ(std::count(n.begin(), n.end(), "rope"), 1);
  EXPECT_EQ(std::count(n.begin(), n.end(), "attn_residual"), 1);
  EXPECT_EQ(std::count(n.begin(), n.end(), "decode_attention"), 0);
  EXPECT_EQ(std::count(n.begin(), n.end(), "rope_kv_cache_write"), 0);
  // Plain RMSNorm over 2048 tokens: x read, y written: 2 x 2048 x 1024 x 2 B.
  EXPECT_DOUBLE_EQ(find(t.forward, "input_norm").bytes, 2.0 * 2048 * 1024 * 2);
  EXPECT_FALSE(t.backward.empty());
}

TEST(LayerGraph, EagerNormsAndSwiGluUntilCompileFusesThem) {
  // torchtitan without torch.compile (fusions.norm and bias_activation false): RMSNorm as
  // PyTorch's composite rms_norm over 2048 x 1024 elements of 2 bytes: forward upcast
  // (2 + 4), pow (4 + 4), mean (4), the rsqrt product (4 + 4), the cast back (4 + 2), the
  // weight product (2 + 2) = 36 bytes per element; backward 68 + 7 x 2 = 82. SwiGLU as
  // SiLU then the product: 5 x 2048 x 4096 x 2 bytes forward. compile: true fuses both
  // back to one kernel each (2 and 3 passes over their operands).
  const ModelSpec m = small_model();
  TrainingSpec tr = training_2048();
  tr.framework.fusions.norm = false;
  tr.framework.fusions.bias_activation = false;
  OpTemplate eager, compiled;
  build_dense_layer(LayerDims::for_training(m, tr, layout(1)), Recompute::None, eager);
  const double n = 2048.0 * 1024;
  // Eight kernels forward (upcast, pow, mean, add, rsqrt, product, cast, weight), twelve
  // backward; SwiGLU two.
  EXPECT_EQ(total(eager.forward, "input_norm"), std::make_pair(36.0 * n, 8));
  EXPECT_EQ(total(eager.backward, "input_norm_bwd"), std::make_pair(82.0 * n, 12));
  EXPECT_EQ(total(eager.forward, "mlp_swiglu"), std::make_pair(5.0 * 2048 * 4096 * 2, 2));
  tr.compile = true;
  build_dense_layer(LayerDims::for_training(m, tr, layout(1)), Recompute::None, compiled);
  EXPECT_EQ(total(compiled.forward, "input_norm"), std::make_pair(2.0 * n * 2, 1));
  EXPECT_EQ(total(compiled.forward, "mlp_swiglu"), std::make_pair(3.0 * 2048 * 4096 * 2, 1));
}

TEST(LayerGraph, PerOpRecomputeReplaysTheUnsavedMatmulsAndTheElementwiseOps) {
  // torchtitan per-op SAC on the small model (h 1024, 8 heads and 2 K/V heads of 128,
  // SwiGLU 4096, tp 1): of a block's matmuls wq, wk, wv, wo, w1, w3, w2 the 2nd, 4th and
  // 6th are replayed: wk's 2 x 128 = 256 columns of the fused QKV GEMM, all 1024 of wo,
  // w3's 4096 of the fused gate/up GEMM, each over 2048 tokens and k = 1024; attention and
  // mlp_down are not replayed; every elementwise op is (the norms, RoPE, SwiGLU).
  const ModelSpec m = small_model();
  TrainingSpec tr = training_2048();
  OpTemplate t;
  build_dense_layer(LayerDims::for_training(m, tr, layout(1)), Recompute::Op, t);
  double gemm_flops = 0;
  for (const Op& op : t.recompute) {
    EXPECT_NE(std::string(op.name), "flash_attention");
    EXPECT_NE(std::string(op.name), "mlp_down");
    if (op.kind == OpKind::Gemm) gemm_flops += op.flops;
  }
  EXPECT_DOUBLE_EQ(gemm_flops, 2.0 * 2048 * 1024 * (256 + 1024 + 4096));
  EXPECT_EQ(find(t.recompute, "qkv_proj").n, 256);
  EXPECT_EQ(find(t.recompute, "mlp_up").n, 4096);
  EXPECT_EQ(total(t.recompute, "input_norm"), total(t.forward, "input_norm"));
  EXPECT_EQ(total(t.recompute, "mlp_swiglu"), total(t.forward, "mlp_swiglu"));
  EXPECT_EQ(total(t.recompute, "rope"), total(t.forward, "rope"));
}

TEST(LayerGraph, AModelFeatureReachesTrainingAndServingOnce) {
  // Gemma 2's post-norms are written once in the graph; both consumers see them.
  ModelSpec m = small_model();
  m.post_norms = true;
  TrainingSpec tr = training_2048();
  OpTemplate train, serve;
  build_dense_layer(LayerDims::for_training(m, tr, layout(1)), Recompute::None, train);
  build_dense_layer(serving(m, layout(1), mixed_batch()), Recompute::None, serve);
  for (const OpTemplate* t : {&train, &serve}) {
    const std::vector<std::string> n = names(t->forward);
    EXPECT_EQ(std::count(n.begin(), n.end(), "attn_output_norm"), 1);
    EXPECT_EQ(std::count(n.begin(), n.end(), "mlp_output_norm"), 1);
  }
  // A post-norm is no residual's: plain, 2 x 104 x 1024 x 2 B in serving.
  EXPECT_DOUBLE_EQ(find(serve.forward, "attn_output_norm").bytes, 2.0 * 104 * 1024 * 2);
}

TEST(LayerGraph, MlaExpandsThePromptAndAbsorbsTheDecodeWeights) {
  // DeepSeek-V3's attention (kv_lora 512, q_lora 1536, nope 128, rope 64, v 128, 128
  // heads) at TP 8: 16 heads per GPU.
  const ModelSpec m = test::shipped_model("deepseek-v3");
  OpTemplate t;
  const LayerDims D = serving(m, layout(8), mixed_batch());
  build_dense_layer(D, Recompute::None, t);
  // The prompt's 100 tokens expand the latent: N = 16 x (128 + 128), K = 512.
  const Op& up = find(t.forward, "kv_up_proj");
  EXPECT_EQ(up.m, 100);
  EXPECT_EQ(up.n, 16 * 256);
  EXPECT_EQ(up.k, 512);
  // The 4 decode tokens absorb W_UK (per head: 128 -> 512) and W_UV (512 -> 128), bf16.
  const Op& q = find(t.forward, "mla_q_absorb");
  EXPECT_EQ(q.m, 4);
  EXPECT_EQ(q.n, 512);
  EXPECT_EQ(q.k, 128);
  EXPECT_EQ(q.batch, 16);
  const Op& o = find(t.forward, "mla_out_absorb");
  EXPECT_EQ(o.n, 128);
  EXPECT_EQ(o.k, 512);
  EXPECT_FALSE(o.fp8);
  // Decode reads the compressed cache, 512 + 64 = 576 elements a token: 4000 x 576 x 2 B
  // = 4,608,000, plus queries and outputs 2 x 4 x 16 x (576 + 512) x 2 B = 278,528.
  const Op& dec = find(t.forward, "decode_attention");
  EXPECT_DOUBLE_EQ(dec.bytes, 4608000.0 + 278528.0);
  // The same op for a consumer that times it apart.
  EXPECT_DOUBLE_EQ(decode_attention_op(D).bytes, dec.bytes);
  EXPECT_DOUBLE_EQ(decode_attention_op(D).flops, dec.flops);
}

TEST(LayerGraph, InferenceEnginesReduceRoutedAndSharedExpertsOnce) {
  // DeepSeek-V3 (256 experts, top 8, one shared expert of 2048) at TP 8, EP 8: whole
  // experts per GPU; every TP rank holds the batch's tokens, so no expert-TP gather, and
  // the shared expert's TP-split output joins the routed output in one all-reduce of
  // 104 tokens x 7168 x 2 B (SGLang DeepseekV2MoE.forward_normal).
  const ModelSpec m = test::shipped_model("deepseek-v3");
  OpTemplate t;
  build_moe_layer(serving(m, layout(8, 8), mixed_batch(), DType::FP8), Recompute::None, t);
  const std::vector<std::string> n = names(t.forward);
  EXPECT_EQ(std::count(n.begin(), n.end(), "moe_etp_all_gather"), 0);
  EXPECT_EQ(std::count(n.begin(), n.end(), "sp_reduce_scatter_mlp"), 0);  // the shared MLP's
  const Op& ar = find(t.forward, "moe_all_reduce");
  EXPECT_EQ(ar.collective, CollectiveKind::AllReduce);
  EXPECT_DOUBLE_EQ(ar.bytes, 104.0 * 7168 * 2);
  EXPECT_EQ(n.back(), "moe_all_reduce");
  // Expert GEMMs in FP8 (the checkpoint's), the router in bf16 (DeepSeek-V3 sec 3.3).
  EXPECT_TRUE(find(t.forward, "moe_expert_up").fp8);
  EXPECT_FALSE(find(t.forward, "moe_router").fp8);
  // Routing: 104 tokens x 8 picks over 8 EP ranks = 104 tokens to this GPU's 32 experts;
  // 832 picks hit each expert with 1 - (255/256)^832 = 96.1%: ceil(32 x 0.961) = 31 active
  // experts, ceil(104 / 31) = 4 rows each.
  const Op& e = find(t.forward, "moe_expert_up");
  EXPECT_EQ(e.batch, 31);
  EXPECT_EQ(e.m, 4);
}

}  // namespace
}  // namespace rapid
