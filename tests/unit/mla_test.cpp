// Multi-head latent attention (DeepSeek-AI 2024, "DeepSeek-V2", arXiv 2405.04434, sec
// 2.1.2-2.1.3, eqs 9-19) in the model file, the workload, the FLOPs, the memory model and
// the KV cache size; configs/models/deepseek-v3.yaml (the HF deepseek-ai/DeepSeek-V3 shapes).
#include <gtest/gtest.h>

#include <string>

#include "rapid/common/error.hpp"
#include "rapid/memory/memory_model.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "rapid/workload/model_flops.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

using test::shipped_model;

InputError model_error(const std::string& text) {
  try {
    parse_model(load_yaml_text(text, "m.yaml"), "m.yaml");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for\n" << text;
  return InputError("", "", "", "");
}

const char* kModel =
    "name: m\nnum_layers: 2\nhidden_size: 1024\nnum_attention_heads: 8\n"
    "ffn_hidden_size: 4096\nvocab_size: 32000\nactivation: swiglu\nnorm: rmsnorm\n";

// Sum of the FLOPs of a list of ops.
double flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.flops;
  return f;
}

const Op* find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops)
    if (name == op.name) return &op;
  return nullptr;
}

TEST(Mla, ShippedDeepSeekV3File) {
  const ModelSpec m = shipped_model("deepseek-v3");
  ASSERT_TRUE(m.mla.enabled());
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_head_dim(), 192);
  EXPECT_EQ(m.mla.v_head_dim, 128);
  EXPECT_EQ(m.num_kv_heads, 128);  // every head its own K and V after W_UKV
  EXPECT_EQ(m.head_dim, 128);      // defaults to v_head_dim (7168 / 128 = 56 is not used)
  // 671,026,404,352 and 37,552,282,624 parameters, derived in hf_config_test.cpp
  // (DeepSeekV3MlaGivesThePublishedParameterCounts); published: 671B, 37B.
  EXPECT_EQ(m.total_params(), 671026404352);
  EXPECT_EQ(m.active_params(), 37552282624);
  // The MHA approximation in deepseek-v3-like.yaml: 469,762,048 + 14,336 attention
  // parameters a layer against MLA's 187,121,664.
  EXPECT_EQ(shipped_model("deepseek-v3-like").attention_params(), 469776384);
}

TEST(Mla, YamlKeysAreValidated) {
  const std::string mla =
      "mla: {q_lora_rank: 64, kv_lora_rank: 32, qk_nope_head_dim: 64, qk_rope_head_dim: 32, "
      "v_head_dim: 64}\n";
  const ModelSpec m = parse_model(load_yaml_text(std::string(kModel) + mla, "m.yaml"), "m.yaml");
  EXPECT_TRUE(m.mla.enabled());
  EXPECT_EQ(m.head_dim, 64);
  // h = 1024, a = 8: W_DQ 1024 x 64 + q norm 64 + W_UQ 64 x 8*96 + W_DKV 1024 x (32 + 32) +
  // kv norm 32 + W_UKV 32 x 8*(64 + 64) + W_O 8*64 x 1024 + 2 norms 2048
  //   = 65,536 + 64 + 49,152 + 65,536 + 32 + 32,768 + 524,288 + 2,048 = 739,424
  EXPECT_EQ(m.attention_params(), 739424);
  EXPECT_EQ(model_error(std::string(kModel) +
                        "mla: {kv_lora_rank: 0, qk_nope_head_dim: 64, qk_rope_head_dim: 32, "
                        "v_head_dim: 64}\n")
                .key(),
            "mla.kv_lora_rank");
  InputError missing = model_error(
      std::string(kModel) + "mla: {kv_lora_rank: 32, qk_rope_head_dim: 32, v_head_dim: 64}\n");
  EXPECT_EQ(missing.key(), "mla.qk_nope_head_dim");
  EXPECT_EQ(model_error(std::string(kModel) +
                        "mla: {kv_lora_rank: 32, qk_nope_head_dim: 64, qk_rope_head_dim: 32, "
                        "v_head_dim: 64, kv_rank: 1}\n")
                .key(),
            "mla.kv_rank");
  // GQA groups do not exist under MLA.
  InputError kv = model_error(std::string(kModel) + "num_kv_heads: 2\n" + mla);
  EXPECT_EQ(kv.key(), "num_kv_heads");
  EXPECT_EQ(kv.value(), "2");
}

TEST(Mla, KvCacheElementsPerToken) {
  // Llama 3 70B (80 layers, 8 KV heads, head_dim 128): K and V of 8 heads, 2 x 8 x 128 =
  // 2048 elements per token and layer at tp 1; 8192 tokens of context in 80 layers in
  // bf16: 8192 x 80 x 2048 x 2 B = 2,684,354,560 B (2.68 GB).
  const ModelSpec llama = shipped_model("llama3-70b");
  EXPECT_DOUBLE_EQ(llama.kv_cache_elements_per_token(1), 2048.0);
  EXPECT_DOUBLE_EQ(8192.0 * 80 * llama.kv_cache_elements_per_token(1) * 2, 2684354560.0);
  // tp 8: one KV head per GPU, 256 elements; tp 16: the 8 heads replicated (vLLM), still 256.
  EXPECT_DOUBLE_EQ(llama.kv_cache_elements_per_token(8), 256.0);
  EXPECT_DOUBLE_EQ(llama.kv_cache_elements_per_token(16), 256.0);
  // DeepSeek-V3: the latent c_KV (512) and the shared RoPE key (64) on every TP rank.
  const ModelSpec ds = shipped_model("deepseek-v3");
  for (int64_t tp : {1, 8, 16}) EXPECT_DOUBLE_EQ(ds.kv_cache_elements_per_token(tp), 576.0);
}

SweepSpec deepseek(int64_t seq) {
  SweepSpec s = test::spec_with("deepseek-v3", "h100-sxm5-80gb", "dgx-h100-superpod", 1, seq);
  s.training.framework.attention = {AttentionImpl::FA2};
  return s;
}

TEST(Mla, OneLayerForwardFlopsByHand) {
  // A dense DeepSeek-V3 layer, one sequence of s = 4096 tokens, tp 1, FlashAttention-2.
  // h = 7168, a = 128, q_lora 1536, kv_lora 512, nope 128, rope 64, v 128, f = 18432.
  //   projections 2 T x (W_DQ 11,010,048 + W_UQ 37,748,736 + W_DKV 4,128,768
  //     + W_UKV 16,777,216 + W_O 117,440,512 = 187,105,280)        = 1,532,766,453,760
  //   QK^T 2 s^2 a (nope + rope) = 2 x 4096^2 x 128 x 192          =   824,633,720,832
  //   PV   2 s^2 a v             = 2 x 4096^2 x 128 x 128          =   549,755,813,888
  //   causal halving of the two                                    =   687,194,767,360
  //   SwiGLU MLP 2 T h (2 f) + 2 T f h = 6 x 4096 x 7168 x 18432   = 3,246,995,275,776
  //   layer forward                                                = 5,466,956,496,896
  const SweepSpec s = deepseek(4096);
  ParallelConfig c;
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_DOUBLE_EQ(flops(w.layer.forward), 5466956496896.0);
  const Op* q_down = find(w.layer.forward, "q_down_proj");
  ASSERT_NE(q_down, nullptr);
  EXPECT_EQ(q_down->n, 1536);
  EXPECT_EQ(q_down->k, 7168);
  const Op* kv_up = find(w.layer.forward, "kv_up_proj");
  ASSERT_NE(kv_up, nullptr);
  EXPECT_EQ(kv_up->n, 128 * 256);
  EXPECT_EQ(kv_up->k, 512);
  // The attention op: k the larger head dim (192: the kernel is timed as d = 192), flops
  // exact; backward 2 x pairs x (3 x 192 + 2 x 128) with pairs = 128 x 4096^2 / 2.
  const Op* fa = find(w.layer.forward, "flash_attention");
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(fa->k, 192);
  EXPECT_EQ(fa->gqa_group, 1);
  EXPECT_DOUBLE_EQ(fa->flops, 687194767360.0);
  const Op* fa_bwd = find(w.layer.backward, "flash_attention_bwd");
  ASSERT_NE(fa_bwd, nullptr);
  EXPECT_DOUBLE_EQ(fa_bwd->flops, 2.0 * 1073741824.0 * (3 * 192 + 2 * 128));

  // tp 8 with SP splits the heads and the up projections, and the replicated down
  // projections run on each rank's 512-token shard: 8 GPUs do the work of one.
  c.tp = 8;
  c.sp = true;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_NEAR(8 * flops(w.layer.forward), 5466956496896.0, 1e-9 * 5466956496896.0);
  // The TP all-gather moves the latents (1536 + 512 + 64 per token), not the hidden size.
  const Op* gather = find(w.layer.forward, "sp_all_gather_latents");
  ASSERT_NE(gather, nullptr);
  EXPECT_DOUBLE_EQ(gather->bytes, 4096.0 * 2112 * 2);
  // Without SP every rank runs the down projections on all 4096 tokens: 7 extra copies of
  // 2 x 4096 x 7168 x (1536 + 576) = 124,017,180,672 FLOPs.
  c.sp = false;
  build_workload(s.model, s.training, s.network, c, w);
  EXPECT_NEAR(8 * flops(w.layer.forward), 5466956496896.0 + 7 * 124017180672.0,
              1e-9 * 5466956496896.0);
  // Per-GPU parameters: the down projections and the norms whole (2 x 7168 + 7168 x 576 +
  // 512 + 7168 x 1536 + 1536 = 15,155,200), the rest of the 583,483,392 split 8 ways.
  EXPECT_DOUBLE_EQ(w.layer_params, (583483392.0 - 15155200.0) / 8 + 15155200.0);
}

TEST(Mla, ModelFlopsMatchTheWorkload) {
  // Unfused attention does the full s x s work, as the model FLOPs count it:
  // 6 (matmul params + V h) + L x 6 s a (d_qk + d_v) per token.
  SweepSpec s = deepseek(4096);
  s.training.framework.attention = {AttentionImpl::Unfused};
  ParallelConfig c;
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  const double per_token = workload_step_flops(w, false) / static_cast<double>(w.tokens_per_step());
  const double expected = model_flops_per_token(s.model, 4096);
  EXPECT_NEAR(per_token, expected, 1e-9 * expected);
  // The core term: 6 x 4096 x 128 x 320 per layer and token.
  EXPECT_DOUBLE_EQ(attention_core_flops_per_token(s.model, 4096), 6.0 * 4096 * 128 * 320);
  // The matmul part is 6 x the active parameters without the input embedding (a lookup),
  // less the norms (61 x (2 x 7168 + 1536 + 512) + 7168 = 1,006,592 of 35.7e9: 3e-5).
  const double six_n = 6.0 * static_cast<double>(s.model.active_params() - 129280LL * 7168);
  EXPECT_NEAR(expected - 61 * attention_core_flops_per_token(s.model, 4096), six_n, 1e-4 * six_n);
}

TEST(Mla, LayerActivationsByHand) {
  // One dense DeepSeek-V3 layer, s' = 4096, b = 1, bf16, fused attention, no recompute.
  // R (replicated unless SP) = 4 s'bh (two norm inputs) + 2 s'bh (the down projections'
  //   input) + 2 s'b (1536 + 512 + 64) (c_Q, c_KV, k_R) + 2 s'b (1536 + 512) (the normed
  //   latents the up projections read) + 2 s'bh (the MLP-up input) = s'b x 65,664
  // S (split by TP) = 2 s'b a (2 x 192 + 128) (Q, K, V) + 2 s'b a 128 (out_proj input)
  //   + 4 s'b a (logsumexp) + 6 s'b f (gate, up, product) = s'b x 274,944
  // A = R + S = 4096 x 340,608 = 1,395,130,368 B
  const SweepSpec s = deepseek(4096);
  ParallelConfig c;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s.model, s.training, c, false), 1395130368.0);
  // tp 8 with SP divides both parts.
  c.tp = 8;
  c.sp = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s.model, s.training, c, false), 1395130368.0 / 8);
}

}  // namespace
}  // namespace rapid
