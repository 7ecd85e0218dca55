// The two fidelities agree on the shipped jobs (issue 8, part 6): on the 405B job at TP8
// PP16 (126 layers over 16 stages: the first and last stages run one layer less), full
// recompute, ZeRO-1, at vpp 1, 2, 4 and 7, and on layouts of the demo job (pipelined,
// interleaved, ZeRO-2 and ZeRO-3 on one node's NVLink and across nodes), step time and
// every breakdown column. The bound is the issue's: 2% of the step time, for the step and
// for each column (docs/model.md "One breakdown, two evaluators" defines the columns both
// fill). What still differs by construction is listed there: the DES's flows share links
// and overlap two DP streams' latencies, the analytical model serializes them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/spec/legality.hpp"
#include "unit/test_support.hpp"

namespace rapid {
namespace {

struct Layout {
  int tp, pp, vpp;
  Recompute recompute;
  int zero;
};

// The shipped job `job` with its evaluators, loaded once per test.
struct Job {
  explicit Job(const std::string& path)
      : name(path),
        spec(load_sweep_spec(std::string(RAPID_SOURCE_DIR) + "/" + path)),
        pe(spec, Fidelity::Des) {}
  std::string name;
  SweepSpec spec;
  PointEvaluator pe;
};

// Layout `c` of `spec` by both fidelities into `a` and `d`, both ok.
void evaluate_both(const SweepSpec& spec, const PointEvaluator& pe, const ParallelConfig& c,
                   EvalResult& a, EvalResult& d) {
  const char* illegal = illegal_reason(spec, c);
  ASSERT_EQ(illegal, nullptr) << c.describe() << ": " << illegal;
  Point p;
  p.par = c;
  Workload w;
  pe.evaluate(p, w, a, Fidelity::Analytical);
  pe.evaluate(p, w, d, Fidelity::Des);
  ASSERT_EQ(a.status, Status::Ok) << c.describe();
  ASSERT_EQ(d.status, Status::Ok) << c.describe();
}

void expect_agreement(const Job& j, const Layout& l) {
  const SweepSpec& spec = j.spec;
  const std::string& job = j.name;
  ParallelConfig c = *spec.baseline;
  c.tp = l.tp;
  c.pp = l.pp;
  c.vpp = l.vpp;
  c.recompute = l.recompute;
  c.zero_stage = static_cast<int8_t>(l.zero);
  c.dp = spec.search.num_gpus.front() / (c.tp * c.pp * c.cp);  // num_gpus = dp tp pp cp
  EvalResult a, d;
  evaluate_both(spec, j.pe, c, a, d);
  if (::testing::Test::HasFatalFailure()) return;
  const struct {
    const char* name;
    double analytical, des;
  } cols[] = {{"step", a.step_time_s, d.step_time_s},
              {"compute", a.compute_time_s, d.compute_time_s},
              {"interference", a.interference_time_s, d.interference_time_s},
              {"gemm", a.gemm_time_s, d.gemm_time_s},
              {"attention", a.attention_time_s, d.attention_time_s},
              {"memory_bound", a.memory_bound_time_s, d.memory_bound_time_s},
              {"tp_comm", a.tp_comm_time_s, d.tp_comm_time_s},
              {"cp_comm", a.cp_comm_time_s, d.cp_comm_time_s},
              {"ep_comm", a.ep_comm_time_s, d.ep_comm_time_s},
              {"pp_comm", a.pp_comm_time_s, d.pp_comm_time_s},
              {"bubble", a.bubble_time_s, d.bubble_time_s},
              {"dp_exposed", a.dp_exposed_time_s, d.dp_exposed_time_s},
              {"host_bound", a.host_bound_time_s, d.host_bound_time_s},
              {"optimizer", a.optimizer_time_s, d.optimizer_time_s}};
  std::printf("%s\n ", c.describe().c_str());
  for (const auto& col : cols) {
    std::printf(" %s %.3f/%.3f", col.name, col.analytical, col.des);
    EXPECT_LE(std::fabs(col.analytical - col.des), 0.02 * d.step_time_s)
        << job << " " << c.describe() << ": " << col.name << " analytical " << col.analytical
        << " s, DES " << col.des << " s";
  }
  std::printf("  (step %+.2f%%)\n", 100.0 * (a.step_time_s - d.step_time_s) / d.step_time_s);
}

TEST(FidelityAgreement, Llama405bUnevenStagesAtEveryVpp) {
  const Job job("jobs/llama3-405b-8192xh100.yaml");
  for (int vpp : {1, 2, 4, 7}) expect_agreement(job, {8, 16, vpp, Recompute::Full, 1});
}

TEST(FidelityAgreement, DemoJobLayouts) {
  const Layout layouts[] = {
      {8, 4, 1, Recompute::Selective, 1},  // the baseline
      {4, 4, 1, Recompute::None, 1},
      {8, 2, 1, Recompute::Selective, 1},  // two stages: 1F1B (Megatron-Core 0.8 interleaves
                                           // only pp > 2: supports.interleaved_pp2)
      {8, 8, 5, Recompute::Selective, 1},
      {8, 4, 5, Recompute::None, 2},
      {8, 1, 1, Recompute::Full, 3},       // ZeRO-3 gathers across 32 nodes
      {4, 1, 1, Recompute::Selective, 3},  // ZeRO-3, two DP ranks per node
  };
  const Job job("jobs/llama3-70b-256xh100.yaml");
  for (const Layout& l : layouts) expect_agreement(job, l);
}

TEST(FidelityAgreement, BloomLikeFewerMicroBatchesThanStages) {
  // A BLOOM-like job (Scao et al. 2022, "BLOOM", sec. 3.4: 176B, 70 layers, hidden 14336,
  // 112 heads, vocabulary 250,880, 2048 tokens; TP4 PP12 DP8 on 384 A100 80GB, Megatron-
  // DeepSpeed, ZeRO-1, micro-batch 2) with full recompute and no SP, at m = 1, 2, 4, 6
  // (fewer micro-batches than the 12 stages: the whole step is warm-up and cool-down) and
  // 24. The closed form charged the round trip of the pipeline twice when m < pp and gave
  // the same step for m = 1 to 6; the schedule gives (m + pp - 1)(f + b) for equal stages.
  SweepSpec spec = test::spec_with_stack("gpt3-175b", "a100-sxm4-80gb", "dgx-a100-superpod", 16,
                                         2048, "megatron-lm-2022");
  spec.model.name = "bloom-like-176b";
  spec.model.num_layers = 70;
  spec.model.hidden_size = 14336;
  spec.model.num_attention_heads = 112;
  spec.model.num_kv_heads = 112;
  spec.model.ffn_hidden_size = 4 * 14336;
  spec.model.vocab_size = 250880;
  ParallelConfig c;
  c.dp = 8;
  c.tp = 4;
  c.pp = 12;
  c.mbs = 2;
  c.sp = false;
  c.recompute = Recompute::Full;
  c.zero_stage = 1;
  spec.search.num_gpus = {384};
  spec.search.allow_uneven_pp = true;  // 70 layers over 12 stages
  for (int64_t m : {1, 2, 4, 6, 24}) {
    spec.training.global_batch_size = c.dp * c.mbs * m;
    const PointEvaluator pe(spec, Fidelity::Des);
    EvalResult a, d;
    evaluate_both(spec, pe, c, a, d);
    if (::testing::Test::HasFatalFailure()) return;
    std::printf("m %lld: analytical %.3f s, DES %.3f s (%+.2f%%)\n", static_cast<long long>(m),
                a.step_time_s, d.step_time_s, 100.0 * (a.step_time_s / d.step_time_s - 1.0));
    EXPECT_NEAR(a.step_time_s, d.step_time_s, 0.02 * d.step_time_s) << "m " << m;
  }
}

}  // namespace
}  // namespace rapid
