// Serving (mode: inference, docs/inference.md): the decode step, the KV cache, the largest
// batch, the time to first token, and the closed form against the simulation.
#include <gtest/gtest.h>

#include <cmath>

#include "rapid/cost/attention_model.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/inference/serving_analytical.hpp"
#include "rapid/inference/serving_des.hpp"
#include "rapid/inference/serving_memory.hpp"
#include "rapid/inference/step_model.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

using test::shipped_hardware;
using test::shipped_model;
using test::shipped_network;

/// A Llama-style model of two layers with round shapes: h 4096, 32 heads of 128, 8 K/V heads,
/// SwiGLU FFN 14336, vocabulary 32000, untied.
/// Two Llama 3 8B-shaped layers: h 4096, 32 heads of 128 (8 K/V), SwiGLU 14336, vocab 32000.
ModelSpec two_layer_model() {
  return test::llama_shape(2, 4096, 32, 8, 14336, 32000);
}

/// A stack with nothing on the host: no per-step overhead, kernels issued for free.
ServingSpec bare_serving(int64_t input, int64_t output) {
  ServingSpec s;
  s.stack.host_overhead_per_step_s = 0;
  s.stack.host_overhead_per_seq_s = 0;
  s.stack.eager_launch_s = 0;
  s.stack.graph_launch_s = 0;
  test::fixed_lengths(s, input, output);
  return s;
}

ParallelConfig layout(int tp, int pp = 1) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  return c;
}

TEST(InferenceStep, DecodeAtBatchOneReadsTheWeightsAndTheKvCache) {
  // The round GPU (1 TFLOP/s per SM, every efficiency 1) with HBM slowed to 100 GB/s, so
  // that each decode GEMM (M = 1, padded to a 64-row tile: 2 x 64 x 128 x 4096 FLOP = 67 us
  // per tile, one wave) is far below its weight read (QKV: 50 MB = 503 us).
  HardwareSpec hw = test::round_gpu();
  hw.hbm_bandwidth_Bps = 100e9;
  const ModelSpec m = two_layer_model();
  const NetworkSpec net = shipped_network("dgx-h100-superpod");
  StepBatch b;
  b.decode_seqs = 1;
  b.decode_context_tokens = 1000;
  b.logits_seqs = 1;
  // Weights read per token (bf16), by hand:
  //   QKV 4096 x (32 + 2 x 8) x 128 = 4096 x 6144 -> 50,331,648 B
  //   out 4096 x 4096 -> 33,554,432 B; gate+up 4096 x 28672 -> 234,881,024 B;
  //   down 14336 x 4096 -> 117,440,512 B; per layer 436,207,616 B, x 2 = 872,415,232 B;
  //   LM head 32000 x 4096 -> 262,144,000 B. Total 1,134,559,232 B.
  // KV cache: 2 layers x 1000 tokens x 2 (K, V) x 8 heads x 128 x 2 B = 8,192,000 B.
  const double weights = 1'134'559'232.0, kv = 8'192'000.0;
  const double read_s = (weights + kv) / 100e9;  // 11.43 ms
  const StepModel tp1(m, hw, net, bare_serving(1000, 100), layout(1));
  const StepTime t1 = tp1.time(b);
  // The rest (activations, norms, logits) is below 1 MB: under 0.1% of the step.
  EXPECT_NEAR(t1.total_s, read_s, 0.002 * read_s);
  EXPECT_EQ(t1.tp_comm_s, 0.0);

  // TP 2 halves the weights and K/V heads per GPU and adds the all-reduces: two per layer
  // and one after the vocabulary-parallel embedding, 4096 x 2 B = 8 KiB each, on the
  // stack's one-shot kernel: 6 us + 8192 B / (NVLink x efficiency); and the logits'
  // all-gather (32000 x 2 B) by NCCL.
  ServingSpec s = bare_serving(1000, 100);
  s.stack.custom_all_reduce_latency_s = 6e-6;
  hw.nvlink_bandwidth_Bps = 450e9;
  hw.nvlink_efficiency = 0.8;
  const StepModel tp2(m, hw, net, s, layout(2));
  const StepTime t2 = tp2.time(b);
  const double all_reduce = 6e-6 + 8192.0 / (450e9 * 0.8);
  const double gather = CollectiveCost(hw, net).time(CollectiveKind::AllGather, 64000.0,
                                                     group_shape(2, 1, net.gpus_per_node));
  EXPECT_NEAR(t2.tp_comm_s, 5 * all_reduce + gather, 1e-9);
  EXPECT_NEAR(t2.total_s, read_s / 2 + 5 * all_reduce + gather, 0.003 * read_s / 2);

  // The host's per-step time adds to the step as it is.
  s.stack.host_overhead_per_step_s = 1e-3;
  const StepModel host(m, hw, net, s, layout(2));
  EXPECT_NEAR(host.time(b).total_s - t2.total_s, 1e-3, 1e-12);
}

TEST(InferenceStep, AReusedShapeTimesAsAFreshModel) {
  // StepModel keeps the graph of the last batch shape and re-times only the decode
  // attention when the cache grows: a model that timed other batches first must give
  // exactly what a fresh one gives (two paths, one answer).
  const HardwareSpec hw = shipped_hardware("h100-sxm5-80gb");
  const ModelSpec m = shipped_model("deepseek-v3");  // MLA and MoE: every op kind
  const NetworkSpec net = shipped_network("dgx-h100-superpod");
  ServingSpec s = bare_serving(1000, 100);
  s.dtype = DType::FP8;
  StepBatch decode;
  decode.decode_seqs = 16;
  decode.decode_context_tokens = 16 * 1500;
  decode.logits_seqs = 16;
  StepBatch longer = decode;
  longer.decode_context_tokens += 16;  // the next step: one more token each
  StepBatch mixed = decode;
  mixed.prefill_tokens = 512;
  mixed.prefill_seqs = 1;
  mixed.prefill_attention_pairs = 512.0 * 512 / 2;
  const StepModel warm(m, hw, net, s, layout(8, 2));
  warm.time(decode);
  warm.time(mixed);
  warm.time(decode);
  for (const StepBatch& b : {longer, mixed}) {
    const StepModel fresh(m, hw, net, s, layout(8, 2));
    const StepTime a = warm.time(b), f = fresh.time(b);
    EXPECT_EQ(a.total_s, f.total_s);
    EXPECT_EQ(a.stage_s, f.stage_s);
    EXPECT_EQ(a.attention_s, f.attention_s);
    EXPECT_EQ(a.kernels, f.kernels);
  }
  // The longer cache costs more: only its decode attention grew.
  EXPECT_GT(warm.time(longer).attention_s, warm.time(decode).attention_s);
  EXPECT_EQ(warm.time(longer).gemm_s, warm.time(decode).gemm_s);
}

TEST(InferenceMemory, KvCacheOfLlama3_70BAt8kAndOfDeepSeekV3Mla) {
  const HardwareSpec hw = shipped_hardware("h100-sxm5-80gb");
  ServingSpec s = bare_serving(8192, 1);
  // Llama 3 70B: 80 layers x 2 x 8 K/V heads x 128 x 2 B = 327,680 B per token; at tp 8
  // one K/V head per GPU: 40,960 B; 8192 tokens -> 335,544,320 B per GPU, 2.68 GB over 8.
  const ServingMemory llama = serving_memory(shipped_model("llama3-70b"), hw, s, layout(8));
  EXPECT_DOUBLE_EQ(llama.kv_bytes_per_token, 40960.0);
  EXPECT_DOUBLE_EQ(8192 * llama.kv_bytes_per_token * 8, 2'684'354'560.0);
  // DeepSeek-V3, MLA: the latent kv_lora_rank 512 + rope 64 = 576 elements per token and
  // layer, the same on every TP rank: 61 x 576 x 2 B = 70,272 B per token (vs 61 x 2 x 128
  // heads x 128 x 2 B = 3,997,696 B for the same heads without compression: 57x).
  const ModelSpec ds = shipped_model("deepseek-v3");
  for (int tp : {1, 8}) {
    const ServingMemory mla = serving_memory(ds, hw, s, layout(tp));
    EXPECT_DOUBLE_EQ(mla.kv_bytes_per_token, 70272.0) << "tp " << tp;
  }
  s.kv_dtype = DType::FP8;  // an fp8 cache halves it
  EXPECT_DOUBLE_EQ(serving_memory(ds, hw, s, layout(8)).kv_bytes_per_token, 35136.0);
}

TEST(InferenceMemory, LargestBatchThatFits) {
  // Llama 3 70B on 8 H100 (tp 8), vLLM-like budget: 0.9 x 80 GiB holds everything.
  const HardwareSpec hw = shipped_hardware("h100-sxm5-80gb");
  const ModelSpec m = shipped_model("llama3-70b");
  ServingSpec s = bare_serving(2048, 2048);
  s.stack.gpu_memory_utilization = 0.9;
  s.stack.workspace_bytes = 1.0 * (1ull << 30);
  s.stack.max_num_batched_tokens = 8192;
  s.stack.max_num_seqs = 1024;
  s.stack.kv_block_tokens = 16;
  const ServingMemory mem = serving_memory(m, hw, s, layout(8));
  // By hand: weights = (80 x layer params + 2 x 128256 x 8192) / 8 x 2 B.
  const double layer = 8192.0 * (64 + 16) * 128 + 64 * 128 * 8192.0 + 3 * 8192.0 * 28672 +
                       2 * 8192;  // QKV, out, SwiGLU, two RMSNorms
  const double weights = (80 * layer + 2 * 128256.0 * 8192) / 8 * 2;
  EXPECT_NEAR(mem.weights_bytes, weights, 1e-6 * weights);
  // Activations of one 8192-token forward: residual + normed input (2 x 8192) and the widest
  // intermediate, gate+up+product 3 x 28672 / 8 = 10752, in 2 B; logits 1024 x 128256 / 8
  // in fp32.
  const double act = 8192.0 * (2 * 8192 + 10752) * 2 + 1024.0 * 128256 / 8 * 4;
  EXPECT_NEAR(mem.activations_bytes, act, 1.0);
  // HBM: 81,559 MiB (nvidia-smi, configs/hardware/h100-sxm5-80gb.yaml).
  const double budget = 0.9 * 81559 * double(1 << 20) - weights - act - double(1ull << 30);
  const double block = 16 * 40960.0;  // 16 tokens x 40,960 B
  const int64_t blocks = static_cast<int64_t>(budget / block);
  EXPECT_NEAR(double(mem.kv_blocks), double(blocks), 1.0);
  // A request of 2048 + 2048 tokens holds 256 blocks.
  EXPECT_EQ(mem.blocks_per_request, 256);
  EXPECT_EQ(mem.max_batch, std::min<int64_t>(1024, mem.kv_blocks / 256));
  EXPECT_GT(mem.max_batch, 300);  // about 86,000 blocks / 256
  EXPECT_LT(mem.max_batch, 400);
  // One GPU cannot hold the 141 GB of weights: not a single request fits.
  EXPECT_FALSE(serving_memory(m, hw, s, layout(1)).fits());
}

TEST(InferenceLatency, TimeToFirstTokenOfOnePrompt) {
  // A 6400-token prompt on the round GPU (100 SMs, 100 TFLOP/s, HBM 1 TB/s): every GEMM
  // has M = 6400 = 100 x 64 rows and N a multiple of 256, so its tiles fill whole waves and
  // it takes exactly FLOPs / peak (its weights, < 0.25 GB, stream in far less).
  HardwareSpec hw = test::round_gpu();
  hw.hbm_capacity_bytes = 80e9;
  const ModelSpec m = two_layer_model();
  const NetworkSpec net = shipped_network("dgx-h100-superpod");
  const ServingSpec s = bare_serving(6400, 1);
  const StepModel step(m, hw, net, s, layout(1));
  // GEMM FLOPs: 2 x 6400 x (per layer 4096 x (6144 + 4096 + 28672) + 14336 x 4096) x 2
  // layers, plus the LM head for the one sampled token: 2 x 32000 x 4096 (M = 1: one tile
  // row, 250 tiles of 128 columns: 3 waves of 2 x 64 x 128 x 4096 / 1e12 s).
  const double layer_weights = 4096.0 * (6144 + 4096 + 28672) + 14336.0 * 4096;
  const double gemm_s = 2 * 6400.0 * layer_weights * 2 / 100e12 + 3 * 2 * 64 * 128 * 4096.0 / 1e12;
  // Attention: causal FlashAttention forward over the prompt, 32 heads, the cost model's.
  Op attn;
  attn.kind = OpKind::Attention;
  attn.name = "flash_attention";
  attn.m = attn.n = 6400;
  attn.k = 128;
  attn.batch = 32;
  attn.gqa_group = 4;
  attn.causal = true;
  const double attention_s = 2 * AttentionModel(hw, DType::BF16).time(attn);
  // Streaming ops at 1 TB/s, per token and layer: two fused residual-add + RMSNorms
  // 2 x 4 x 4096 x 2 B = 65,536; rope of q and k, read and written, 2 x (32 + 8) x 128 x
  // 2 B = 20,480, and the cache write 2048 x 2 = 4,096; SwiGLU 3 x 14336 x 2 = 86,016:
  // 176,128 B, x 2 layers x 6400 tokens = 2,254,438,400 B; the embedding 2 x 6400 x 4096 x
  // 2 = 104,857,600 B; the final residual-add + RMSNorm over every token (the engine
  // normalizes them all, then samples the last) 4 x 6400 x 4096 x 2 = 209,715,200 B and
  // sampling over 32000 fp32 logits 3 x 32000 x 4 = 384,000 B.
  const double stream_s = (2'254'438'400.0 + 104'857'600.0 + 209'715'200.0 + 384000) / 1e12;
  ReplicaMetrics one = serving_closed_form(step, s, serving_memory(m, hw, s, layout(1)), 1, 1.0);
  EXPECT_NEAR(one.ttft_s, gemm_s + attention_s + stream_s, 0.001 * one.ttft_s);
  EXPECT_DOUBLE_EQ(one.queue_time_s, 0.0);
}

TEST(InferenceAgreement, SimulationEqualsTheClosedFormWithOneRequestInFlight) {
  // One request at a time (concurrency 1, fixed lengths) contends with nothing: the
  // simulation's iterations are the closed form's (decode contexts I + 1 .. I + O - 1 have
  // the mean I + O / 2 it uses; decode time is linear in the context).
  const HardwareSpec hw = shipped_hardware("a100-sxm4-80gb");
  const ModelSpec m = shipped_model("llama2-7b");
  const NetworkSpec net = shipped_network("dgx-a100-superpod");
  ServingSpec s = bare_serving(512, 128);
  s.stack.host_overhead_per_step_s = 0.2e-3;
  s.stack.eager_launch_s = 5e-6;
  s.num_requests = 16;
  for (int pp : {1, 2}) {
    const ParallelConfig par = layout(2, pp);
    const StepModel step(m, hw, net, s, par);
    const ServingMemory mem = serving_memory(m, hw, s, par);
    const ReplicaMetrics a = serving_closed_form(step, s, mem, pp, 1.0);
    const ReplicaMetrics d = serving_simulate(step, s, mem, pp, 1.0);
    EXPECT_NEAR(d.ttft_s, a.ttft_s, 0.02 * a.ttft_s) << "pp " << pp;
    EXPECT_NEAR(d.itl_s, a.itl_s, 0.02 * a.itl_s) << "pp " << pp;
    EXPECT_NEAR(d.e2e_latency_s, a.e2e_latency_s, 0.02 * a.e2e_latency_s) << "pp " << pp;
    EXPECT_NEAR(d.output_tokens_per_s, a.output_tokens_per_s, 0.02 * a.output_tokens_per_s);
  }
}

TEST(InferenceAgreement, MoreConcurrencyRaisesThroughputAndLatency) {
  // Llama 2 7B on one A100: throughput grows with the batch (the weights are read once per
  // iteration for every sequence) and so does each token's latency; both evaluators agree
  // on the direction and, without prompt bursts (decode-heavy: 16 in / 256 out), on ITL.
  const HardwareSpec hw = shipped_hardware("a100-sxm4-80gb");
  const ModelSpec m = shipped_model("llama2-7b");
  const NetworkSpec net = shipped_network("dgx-a100-superpod");
  ServingSpec s = bare_serving(16, 256);
  s.num_requests = 96;
  const StepModel step(m, hw, net, s, layout(1));
  const ServingMemory mem = serving_memory(m, hw, s, layout(1));
  double last_tps = 0, last_itl = 0;
  for (double c : {1.0, 4.0, 16.0}) {
    const ReplicaMetrics a = serving_closed_form(step, s, mem, 1, c);
    const ReplicaMetrics d = serving_simulate(step, s, mem, 1, c);
    EXPECT_GT(a.output_tokens_per_s, last_tps);
    EXPECT_GT(a.itl_s, last_itl);
    EXPECT_NEAR(d.itl_s, a.itl_s, 0.05 * a.itl_s) << "concurrency " << c;
    last_tps = a.output_tokens_per_s;
    last_itl = a.itl_s;
  }
}

}  // namespace
}  // namespace rapid

namespace rapid {
namespace {

struct SimCase {
  HardwareSpec hw = shipped_hardware("a100-sxm4-80gb");
  ModelSpec m = shipped_model("llama2-7b");
  NetworkSpec net = shipped_network("dgx-a100-superpod");
};

TEST(InferenceSimulation, MoreRequestsThanRoomWaitInEveryPipelineGroup) {
  // Room for 4 requests (max_batch 4), 16 clients, two pipeline groups: the simulation runs
  // to the end (it used to spin on a group whose request had arrived but found no room),
  // the replica holds 4 requests throughout the steady state, 12 wait, and throughput
  // obeys Little's law over the 16 in flight: requests/s = 16 / E2E.
  const SimCase k;
  ServingSpec s = bare_serving(128, 32);
  s.num_requests = 64;
  const StepModel step(k.m, k.hw, k.net, s, layout(1, 2));
  ServingMemory mem = serving_memory(k.m, k.hw, s, layout(1, 2));
  mem.max_batch = 4;
  const ReplicaMetrics d = serving_simulate(step, s, mem, 2, 16.0);
  EXPECT_NEAR(d.running_batch, 4.0, 0.25);
  EXPECT_GT(d.queue_time_s, 0.0);
  EXPECT_NEAR(d.requests_per_s, 16.0 / d.e2e_latency_s, 1e-9 * d.requests_per_s);
}

TEST(InferenceSimulation, OpenLoopPipelineGroupsRunDry) {
  // One request per second on two pipeline groups: each group runs dry between arrivals
  // (it used to stop the run: "a request can never be admitted"); below capacity the
  // replica serves what arrives.
  const SimCase k;
  ServingSpec s = bare_serving(256, 64);
  s.load_kind = LoadKind::ArrivalRate;
  s.num_requests = 64;
  const StepModel step(k.m, k.hw, k.net, s, layout(1, 2));
  const ServingMemory mem = serving_memory(k.m, k.hw, s, layout(1, 2));
  const ReplicaMetrics d = serving_simulate(step, s, mem, 2, 1.0);
  EXPECT_FALSE(d.overloaded);
  EXPECT_DOUBLE_EQ(d.requests_per_s, 1.0);
}

TEST(InferenceSimulation, OverloadDoesNotDependOnTheRunLength) {
  // Llama 2 7B on one A100, 1024 in / 128 out: the closed form's capacity at its largest
  // batch bounds what a replica serves. Well below it (a tenth) every run length is ok;
  // well above it (three times) every run length is overloaded and serves at most that.
  const SimCase k;
  ServingSpec s = bare_serving(1024, 128);
  s.load_kind = LoadKind::ArrivalRate;
  const StepModel step(k.m, k.hw, k.net, s, layout(1));
  const ServingMemory mem = serving_memory(k.m, k.hw, s, layout(1));
  ServingSpec closed = s;
  closed.load_kind = LoadKind::Concurrency;
  const double capacity =
      serving_closed_form(step, closed, mem, 1, static_cast<double>(mem.max_batch)).requests_per_s;
  for (int64_t count : {64, 1024}) {
    s.num_requests = count;
    EXPECT_FALSE(serving_simulate(step, s, mem, 1, 0.1 * capacity).overloaded) << count;
    const ReplicaMetrics over = serving_simulate(step, s, mem, 1, 3.0 * capacity);
    EXPECT_TRUE(over.overloaded) << count;
    EXPECT_LT(over.requests_per_s, 1.2 * capacity) << count;
    EXPECT_TRUE(std::isnan(over.itl_s));
  }
}

TEST(InferenceSimulation, SteadyStateBatchAndPeriodExcludeStartAndDrain) {
  // 32 clients on one replica with room for all: over the steady state every client has a
  // request running (batch 32; the start-up and the drain, which the mean used to include,
  // hold fewer). With one pipeline stage and mixed batches every decoding request takes
  // part in every iteration, so a token gap is one iteration period; only iterations whose
  // every request is prefilling give no gap. With lengths drawn (no lockstep) those are
  // rare: the mean period is the mean gap within 3%, and never below it.
  const SimCase k;
  ServingSpec s = bare_serving(256, 128);
  s.input_tokens = {LengthDistribution::Uniform, 256, 0, 128, 384};
  s.output_tokens = {LengthDistribution::Uniform, 128, 0, 64, 192};
  const StepModel step(k.m, k.hw, k.net, s, layout(1));
  const ServingMemory mem = serving_memory(k.m, k.hw, s, layout(1));
  const ReplicaMetrics d = serving_simulate(step, s, mem, 1, 32.0);
  EXPECT_NEAR(d.running_batch, 32.0, 0.5);
  EXPECT_GE(d.step_s, d.itl_s * (1 - 1e-9));
  EXPECT_NEAR(d.step_s, d.itl_s, 0.03 * d.itl_s);
}

}  // namespace
}  // namespace rapid
