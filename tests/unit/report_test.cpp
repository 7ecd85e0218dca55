// `rapid predict`'s text (describe_result): the latency-bound warning states the modelled
// cost of the run's own TP collective, not a fixed "5-10 us".
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/eval/report.hpp"
#include "rapid/inference/serving_evaluator.hpp"
#include "rapid/inference/serving_report.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(Report, LatencyWarningQuotesTheRunsTpCollective) {
  // Llama 3 8B (h = 4096) on one DGX A100 at TP8 with SP, 64-token sequences, mbs 1: the
  // layer's first TP collective is the SP all-gather of T h e = 64 x 4096 x 2 = 524,288 B
  // (0.52 MB, below 1 MiB: flag 2). The ring over 8 GPUs of one node
  // (configs/networks/dgx-a100-superpod.yaml, configs/hardware/a100-sxm4-80gb.yaml;
  // docs/collectives.md sec 3 and 6b): 7 steps of NCCL's LL protocol (the fastest here),
  //   latency = collective_latency - 1.8 + 7 x 0.6 = 31 - 1.8 + 4.2 = 33.4 us
  //   bytes   = 7/8 x 524,288 x (7 + 0.58) / 7 = 496,968 B at 87.7 GB/s -> 5.67 us
  //   time    = 39.1 us.
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  const SweepSpec s = load_sweep_spec(
      test::write_temp("short-seq.yaml",
                       "model: llama3-8b\nhardware: [a100-sxm4-80gb]\nnetwork: "
                       "dgx-a100-superpod\ngpus: 8\ntraining: {global_batch_size: 8, "
                       "seq_length: 64}\nsearch: {tp: [8], pp: [1], sp: [true]}\n"));
  const Point p = test::flat_point(8, 1, true);
  const PointEvaluator eval(s);
  Workload w;
  EvalResult r;
  eval.evaluate(p, w, r);
  ASSERT_EQ(r.status, Status::Ok);
  ASSERT_TRUE(r.flags & kFlagLatencyBoundComm);
  const std::optional<TpCollectiveCost> tp = tp_collective_cost(w, eval.evaluator(0));
  ASSERT_TRUE(tp.has_value());
  EXPECT_EQ(tp->kind, CollectiveKind::AllGather);
  EXPECT_EQ(tp->bytes, 524288.0);
  // NCCL's LL protocol (docs/collectives.md sec 6b): start-up 31 - 1.8 us, 7 steps of
  // 0.6 us; 524288 B / (512 threads x 8 B x 8 ranks) = 16 of 24 channels, the call at
  // min(0.5 x 240, 16 x 20 x 0.5/0.92, 87.7) = 87.7 GB/s (Ampere's llMaxBw).
  EXPECT_NEAR(tp->latency_s, 31e-6 - 1.8e-6 + 7 * 0.6e-6, 1e-12);
  const double data_s = 7.0 / 8 * 524288 * (7 + 0.58) / 7 / 87.7e9;
  EXPECT_NEAR(tp->time_s, 31e-6 - 1.8e-6 + 7 * 0.6e-6 + data_s, 1e-12);
  // The model's own time of that op (what `rapid predict --ops` lists) is the one quoted.
  EXPECT_EQ(tp->time_s, eval.evaluator(0).collective_cost().time(CollectiveKind::AllGather,
                                                                 524288.0, w.group(CommGroup::TP)));
  const std::string text = describe_result(s, p, r, &*tp);
  EXPECT_NE(text.find("warning     TP collectives below 1 MiB: latency-bound (each all_gather "
                      "of 0.52 MB over TP takes 39.1 us in this run's collective model, 33.4 us "
                      "of it start-up and per-step latency)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("5-10 us"), std::string::npos);
}

TEST(Report, ServingNamesTheLoadsWhereTheClosedFormIsAtRisk) {
  // jobs/llama3-70b-serving-8xh100.yaml at tp 4 pp 2 (one replica of 8 GPUs, 731 requests
  // at most): two pipeline groups, c / 2 requests each, flagged from 32 per group
  // (docs/inference.md sec 4): concurrency 64, 128 and 256 of the job's 1-256.
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  const SweepSpec s = load_sweep_spec(test::source_path("jobs/llama3-70b-serving-8xh100.yaml"));
  Point p;
  p.par.tp = 4;
  p.par.pp = 2;
  p.par.dp = 1;
  std::vector<EvalResult> by_load(s.serving.loads.size());
  for (size_t k = 0; k < by_load.size(); ++k) {
    p.load = static_cast<int32_t>(k);
    evaluate_serving(s, p, by_load[k], false);
  }
  const std::string text = describe_serving(s, p, by_load);
  EXPECT_NE(text.find("warning     at concurrency 64, 128, 256: the closed form parts from the "
                      "simulation"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace rapid
