// The simulation's metrics window (docs/inference.md sec 4, `metrics_window`): the steady
// state, or every request as a benchmark client's run reports it. Derived on one request at
// a time (max_num_seqs 1), where the queue is exact arithmetic.
#include <gtest/gtest.h>

#include "rapid/inference/serving_des.hpp"
#include "rapid/inference/serving_memory.hpp"
#include "rapid/inference/step_model.hpp"
#include "rapid/spec/serving_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(ServingWindow, TheStartUpBurstOfAOneAtATimeServer) {
  // Llama 2 7B on one A100 serving one request at a time (the NeMo 2023 stack), every
  // request 512 in / 64 out. Alone (concurrency 1) a request takes T = its E2E, p of it
  // to its first token. Under c = 3 clients each request waits for the c - 1 others:
  // steady TTFT p + 2T, E2E 3T, throughput 1/T. A benchmark client also counts the
  // start-up burst: the first c arrive together at 0 and the k-th of them waits kT. Over
  // all n = 12 requests the mean TTFT is p + T (0 + 1 + 2 + 9 x 2) / 12 = p + 1.75 T; the
  // server is never idle, so n requests take n T: throughput 1/T.
  const HardwareSpec hw = test::shipped_hardware("a100-sxm4-80gb");
  const ModelSpec m = test::shipped_model("llama2-7b");
  const NetworkSpec net = test::shipped_network("dgx-a100-superpod");
  ServingSpec s;
  s.stack = load_serving_stack("nemo-inference-2023", RAPID_SOURCE_DIR, "test", "stack");
  test::fixed_lengths(s, 512, 64);
  s.num_requests = 12;
  ParallelConfig par;
  const StepModel step(m, hw, net, s, par);
  const ServingMemory mem = serving_memory(m, hw, s, par);
  const ReplicaMetrics alone = serving_simulate(step, s, mem, 1, 1.0);
  const double p = alone.ttft_s, T = alone.e2e_latency_s;
  ASSERT_GT(T, p);

  const ReplicaMetrics steady = serving_simulate(step, s, mem, 1, 3.0);
  EXPECT_NEAR(steady.ttft_s, p + 2 * T, 1e-9 * T);
  EXPECT_NEAR(steady.e2e_latency_s, 3 * T, 1e-9 * T);
  EXPECT_NEAR(steady.requests_per_s, 1 / T, 1e-9 / T);

  s.metrics_window = MetricsWindow::All;
  const ReplicaMetrics all = serving_simulate(step, s, mem, 1, 3.0);
  EXPECT_NEAR(all.ttft_s, p + 1.75 * T, 1e-9 * T);
  EXPECT_NEAR(all.e2e_latency_s, (1 + 2 + 3 + 9 * 3) / 12.0 * T, 1e-9 * T);
  EXPECT_NEAR(all.requests_per_s, 1 / T, 1e-9 / T);
  // The median is rank 6 of 12 TTFTs: p, p + T, then ten of p + 2T.
  EXPECT_NEAR(all.ttft_p50_s, p + 2 * T, 1e-9 * T);
}

TEST(ServingWindow, TheJobKeyParses) {
  const std::string path = test::write_temp("window.yaml",
                                            "serving:\n  stack: vllm\n  metrics_window: all\n"
                                            "  requests: {input_tokens: 128, output_tokens: 64}\n");
  const YamlMap top(load_yaml_file(path), path);
  EXPECT_EQ(parse_serving(top.map("serving"), path).metrics_window, MetricsWindow::All);
}

}  // namespace
}  // namespace rapid
