// Host and launch costs of a serving iteration and the front end of a request
// (docs/inference.md "Host"), each derived by hand from the step's own kernel count.
#include <gtest/gtest.h>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/inference/serving_analytical.hpp"
#include "rapid/inference/serving_des.hpp"
#include "rapid/inference/serving_memory.hpp"
#include "rapid/inference/step_model.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

using test::shipped_hardware;
using test::shipped_model;
using test::shipped_network;

/// Llama 2 7B on one H100 (dgx-h100-superpod), a stack with nothing on the host.
struct HostCase {
  HardwareSpec hw = shipped_hardware("h100-sxm5-80gb");
  ModelSpec model = shipped_model("llama2-7b");
  NetworkSpec net = shipped_network("dgx-h100-superpod");
  ServingSpec s;
  ParallelConfig par;
  HostCase() {
    s.stack.host_overhead_per_step_s = 0;
    s.stack.host_overhead_per_seq_s = 0;
    s.stack.eager_launch_s = 0;
    s.stack.graph_launch_s = 0;
    s.stack.frontend_latency_s = 0;
    test::fixed_lengths(s, 256, 32);
  }
  StepTime step(const StepBatch& b) const { return StepModel(model, hw, net, s, par).time(b); }
};

StepBatch decode(int64_t seqs) {
  StepBatch b;
  b.decode_seqs = seqs;
  b.decode_context_tokens = 1000.0 * static_cast<double>(seqs);
  b.logits_seqs = seqs;
  return b;
}

TEST(ServingHost, GraphGapAddsToEveryKernel) {
  // A decode batch of 8 replays a CUDA graph: each of its k kernels leaves the GPU idle for
  // the graph gap g, so the iteration takes the GPU's time plus k x g; no max() with the
  // host's issue time (the host is out of the loop).
  HostCase u;
  const StepTime bare = u.step(decode(8));
  ASSERT_GT(bare.kernels, 100);  // 32 layers of several kernels each
  u.s.stack.graph_launch_s = 2e-6;
  u.s.stack.eager_launch_s = 1e-3;  // not used under a graph
  const StepTime gapped = u.step(decode(8));
  EXPECT_NEAR(gapped.total_s - bare.total_s, static_cast<double>(bare.kernels) * 2e-6, 1e-12);
  EXPECT_EQ(gapped.kernels, bare.kernels);
}

TEST(ServingHost, EagerKernelsTakeTheLongerOfGpuAndIssue) {
  // Without CUDA graphs the host issues each kernel: max(GPU + k g, k e). With e = 1 ms per
  // kernel the host bounds the iteration at exactly k x 1 ms; with e = 0, GPU + k x g.
  HostCase u;
  u.s.stack.cuda_graphs = false;
  const StepTime bare = u.step(decode(8));
  u.s.stack.graph_launch_s = 2e-6;
  const StepTime gpu_bound = u.step(decode(8));
  EXPECT_NEAR(gpu_bound.total_s - bare.total_s, static_cast<double>(bare.kernels) * 2e-6, 1e-12);
  u.s.stack.eager_launch_s = 1e-3;
  const StepTime host_bound = u.step(decode(8));
  EXPECT_NEAR(host_bound.total_s, static_cast<double>(bare.kernels) * 1e-3, 1e-12);
}

TEST(ServingHost, PerSequenceHostCostScalesWithTheBatch) {
  // host_overhead_per_step + per_seq x (decodes + prompts): 0.5 ms + 8 x 20 us = 0.66 ms
  // more per iteration of 8 decodes, 0.5 ms + 32 x 20 us = 1.14 ms of 32.
  HostCase u;
  const StepTime b8 = u.step(decode(8)), b32 = u.step(decode(32));
  u.s.stack.host_overhead_per_step_s = 0.5e-3;
  u.s.stack.host_overhead_per_seq_s = 20e-6;
  EXPECT_NEAR(u.step(decode(8)).total_s - b8.total_s, 0.66e-3, 1e-12);
  EXPECT_NEAR(u.step(decode(32)).total_s - b32.total_s, 1.14e-3, 1e-12);
}

TEST(ServingHost, FrontEndAddsToFirstTokenAndEndToEndNotToItl) {
  // One client (closed loop, concurrency 1) with a 4 ms front end: each request reaches the
  // engine 4 ms after its client sent it, so TTFT and E2E grow by exactly 4 ms, ITL not at
  // all, and the client's request rate is 1 / E2E. Both evaluators.
  HostCase u;
  u.s.num_requests = 12;
  const ServingMemory mem = serving_memory(u.model, u.hw, u.s, u.par);
  const StepModel step0(u.model, u.hw, u.net, u.s, u.par);
  const ReplicaMetrics a0 = serving_closed_form(step0, u.s, mem, 1, 1.0);
  const ReplicaMetrics d0 = serving_simulate(step0, u.s, mem, 1, 1.0);
  u.s.stack.frontend_latency_s = 4e-3;
  const StepModel step(u.model, u.hw, u.net, u.s, u.par);
  const ReplicaMetrics a = serving_closed_form(step, u.s, mem, 1, 1.0);
  const ReplicaMetrics d = serving_simulate(step, u.s, mem, 1, 1.0);
  for (const auto& [with, without] : {std::pair{a, a0}, std::pair{d, d0}}) {
    EXPECT_NEAR(with.ttft_s - without.ttft_s, 4e-3, 1e-9);
    EXPECT_NEAR(with.e2e_latency_s - without.e2e_latency_s, 4e-3, 1e-9);
    EXPECT_NEAR(with.itl_s, without.itl_s, 1e-12);
    EXPECT_NEAR(with.requests_per_s, 1.0 / with.e2e_latency_s, 1e-9 * with.requests_per_s);
  }
}

}  // namespace
}  // namespace rapid

namespace rapid {
namespace {

TEST(ServingLockstep, FixedLengthClientsPrefillTogether) {
  // 8 clients, 256 in / 32 out, chunked prefill off, prompts and decodes in separate
  // iterations, budget 1024 tokens: 4 whole prompts per iteration, 2 iterations of
  // t = step(4 prompts) each. Prompts 0-3 get their first token
  // at t, 4-7 at 2t: TTFT = f + 1.5 t. Then 31 decodes of all 8 at context 256 + 16 (the
  // middle of the output), d each; prompts 0-3 wait t for the second prefill iteration in
  // their first gap: ITL = d + 0.5 t / 31. E2E = f + 2t + 31 d for every request; 8 / E2E
  // requests per second. The simulation runs the same lockstep.
  HostCase u;
  u.s.stack.chunked_prefill = false;
  u.s.stack.mixed_batches = false;
  u.s.stack.max_num_batched_tokens = 1024;
  u.s.stack.frontend_latency_s = 4e-3;
  u.s.load_kind = LoadKind::Concurrency;
  u.s.num_requests = 64;
  const StepModel step(u.model, u.hw, u.net, u.s, u.par);
  StepBatch four;
  four.prefill_tokens = 4 * 256;
  four.prefill_seqs = 4;
  four.prefill_attention_pairs = 4 * 256.0 * 256.0 / 2;
  four.logits_seqs = 4;
  const double t = step.time(four).total_s;
  StepBatch dec;
  dec.decode_seqs = 8;
  dec.decode_context_tokens = 8 * (256 + 16.0);
  dec.logits_seqs = 8;
  const double d = step.time(dec).total_s;
  const ServingMemory mem = serving_memory(u.model, u.hw, u.s, u.par);
  const ReplicaMetrics a = serving_closed_form(step, u.s, mem, 1, 8.0);
  EXPECT_NEAR(a.ttft_s, 4e-3 + 1.5 * t, 1e-12);
  EXPECT_NEAR(a.itl_s, d + 0.5 * t / 31, 1e-12);
  EXPECT_NEAR(a.e2e_latency_s, 4e-3 + 2 * t + 31 * d, 1e-12);
  EXPECT_NEAR(a.requests_per_s, 8 / (4e-3 + 2 * t + 31 * d), 1e-9);
  // The simulation: the same phases, its decode contexts exact instead of the middle one.
  const ReplicaMetrics sim = serving_simulate(step, u.s, mem, 1, 8.0);
  EXPECT_NEAR(sim.ttft_s, a.ttft_s, 0.02 * a.ttft_s);
  EXPECT_NEAR(sim.itl_s, a.itl_s, 0.02 * a.itl_s);
}

}  // namespace
}  // namespace rapid

namespace rapid {
namespace {

TEST(ServingClosedLoop, FrontEndLandsInTheNextIteration) {
  // 8 clients with spread lengths (no lockstep), a front end of f = 4 ms under the decode
  // iteration tau: a request reaches the engine f after its predecessor's last iteration
  // ended, while the others' next iteration runs, and waits tau - f for it. Its TTFT is
  // therefore f + (tau - f) = tau longer than without a front end (the engine's share of
  // the clients moves by f / (L + f), a fraction of a percent: 1% tolerance).
  HostCase u;
  u.s.load_kind = LoadKind::Concurrency;
  u.s.input_tokens = {LengthDistribution::Uniform, 256, 0, 128, 384};
  u.s.output_tokens = {LengthDistribution::Uniform, 64, 0, 32, 96};
  const ServingMemory mem = serving_memory(u.model, u.hw, u.s, u.par);
  const StepModel step0(u.model, u.hw, u.net, u.s, u.par);
  const ReplicaMetrics without = serving_closed_form(step0, u.s, mem, 1, 8.0);
  u.s.stack.frontend_latency_s = 4e-3;
  const StepModel step(u.model, u.hw, u.net, u.s, u.par);
  const ReplicaMetrics with = serving_closed_form(step, u.s, mem, 1, 8.0);
  ASSERT_LT(4e-3, with.itl_s);
  EXPECT_NEAR(with.ttft_s - without.ttft_s, with.itl_s, 0.01 * with.itl_s);
  EXPECT_FALSE(with.closed_form_risk);
}

TEST(ServingClosedLoop, RiskWhereTheClosedFormPartsFromTheSimulation) {
  // Flagged (docs/inference.md sec 4): more clients than the replica runs (they wait for a
  // slot), and pipeline groups of 32 or more; not a single-stage replica below its limit.
  HostCase u;
  u.s.load_kind = LoadKind::Concurrency;
  u.s.input_tokens = {LengthDistribution::Uniform, 256, 0, 128, 384};
  const ServingMemory mem = serving_memory(u.model, u.hw, u.s, u.par);
  const StepModel step(u.model, u.hw, u.net, u.s, u.par);
  const double B = static_cast<double>(mem.max_batch);
  EXPECT_FALSE(serving_closed_form(step, u.s, mem, 1, 64.0).closed_form_risk);
  EXPECT_TRUE(serving_closed_form(step, u.s, mem, 1, B + 1).closed_form_risk);
  // Two stages: 64 clients are two groups of 32 (flagged), 62 two of 31 (not).
  EXPECT_TRUE(serving_closed_form(step, u.s, mem, 2, 64.0).closed_form_risk);
  EXPECT_FALSE(serving_closed_form(step, u.s, mem, 2, 62.0).closed_form_risk);
}

}  // namespace
}  // namespace rapid

namespace rapid {
namespace {

TEST(ServingCustomAllReduce, OneShotBelowTheSwitchTwoShotFrom) {
  // Llama 2 7B at TP 8 (h 4096: 8192 B per token), vLLM's switch at TP 8: 256 KiB. 31
  // decode tokens: 253,952 B, one-shot: L + 7 S / B; 32 tokens: 262,144 B, two-shot:
  // 2 L + 1.75 S / B (B = 450 GB/s x 0.8). 65 all-reduces (two per layer, one after the
  // embedding) and the logits' all-gather by NCCL (seqs x 32000 x 2 B).
  HostCase u;
  u.par.tp = 8;
  u.s.stack.custom_all_reduce_latency_s = 5e-6;
  u.s.stack.custom_all_reduce_one_shot_max_tp8_bytes = 256.0 * 1024;
  const double B = u.hw.nvlink_bandwidth_Bps * u.hw.nvlink_efficiency;
  const CollectiveCost nccl(u.hw, u.net);
  const GroupShape g = group_shape(8, 1, u.net.gpus_per_node, 8);
  for (int64_t seqs : {31, 32}) {
    const double S = 8192.0 * static_cast<double>(seqs);
    const double ar = seqs == 31 ? 5e-6 + 7 * S / B : 2 * 5e-6 + 1.75 * S / B;
    const double gather = nccl.time(CollectiveKind::AllGather, 64000.0 * seqs, g);
    EXPECT_NEAR(u.step(decode(seqs)).tp_comm_s, 65 * ar + gather, 1e-12) << seqs;
  }
}

}  // namespace
}  // namespace rapid
