// The overlaps a stack's end-to-end factors were fitted with (EndToEndFactors::
// fitted_overlaps, docs/model.md sec 9): an overlap the runs behind a GPU's factors did not
// have is not credited on that GPU (stack_training). The expected values are read off the
// stack files by hand: configs/frameworks/megatron-core-0.8.yaml fits the A100 factors on
// Megatron-LM 2021-22 runs (`fitted_overlaps: [grad_reduce]`) and the H100 factors on runs
// with all three overlaps; nemo-24.07.yaml (based on it) turns all three on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "rapid/common/error.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/eval/report.hpp"
#include "rapid/spec/legality.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

SweepSpec load(const std::string& name, const std::string& text) {
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  return load_sweep_spec(test::write_temp(name, text));
}

// Llama 3 70B on 256 A100s (an A100 variant beside the base) and on 256 H100s, NeMo 24.07
// with its recipe's overlaps, unless `training` adds keys.
SweepSpec nemo_job(const std::string& hardware, const std::string& network,
                   const std::string& training = "") {
  return load("nemo-" + hardware + ".yaml",
              "model: llama3-70b\nhardware: [" + hardware + "]\nnetwork: " + network +
                  "\ngpus: 256\ntraining: {framework: nemo-24.07, global_batch_size: 512, "
                  "seq_length: 8192" +
                  training + "}\nsearch: {tp: [8], pp: [1], sp: [true], zero_stage: [1]}\n");
}

TEST(StackTraining, A100CreditsOnlyTheOverlapItsFactorsRunsHad) {
  for (const char* hw : {"a100-sxm4-80gb", "a100-c-3d-hbm"}) {  // a variant: its base's
    const SweepSpec s = nemo_job(hw, "dgx-a100-superpod");
    ASSERT_TRUE(s.training.tp_comm_overlap && s.training.overlap_grad_reduce &&
                s.training.overlap_param_gather);  // the NeMo recipe asks for all three
    EXPECT_EQ(uncredited_overlaps(s.hardware[0], s.training), kOverlapTpComm | kOverlapParamGather)
        << hw;
    const TrainingSpec t = stack_training(s.hardware[0], s.training);
    EXPECT_FALSE(t.tp_comm_overlap) << hw;
    EXPECT_TRUE(t.overlap_grad_reduce) << hw;  // SC21's DDP rows overlapped it
    EXPECT_FALSE(t.overlap_param_gather) << hw;
  }
  EXPECT_EQ(overlap_names(kOverlapTpComm | kOverlapParamGather),
            "tp_comm_overlap, overlap_param_gather");
}

TEST(StackTraining, H100CreditsEveryOverlapOfTheNemoRecipe) {
  const SweepSpec s = nemo_job("h100-sxm5-80gb", "dgx-h100-superpod");
  EXPECT_EQ(uncredited_overlaps(s.hardware[0], s.training), 0u);
  const TrainingSpec t = stack_training(s.hardware[0], s.training);
  EXPECT_TRUE(t.tp_comm_overlap && t.overlap_grad_reduce && t.overlap_param_gather);
}

TEST(StackTraining, AnUncreditedOverlapPredictsAsTheSameJobWithoutIt) {
  // The rule is "run as without the overlap": NeMo on A100 gives the step time of the same
  // job that turns TP overlap and the parameter-gather overlap off itself, to the bit, and
  // a shorter step on no layout (the overlaps are gone, not charged twice).
  const SweepSpec nemo = nemo_job("a100-sxm4-80gb", "dgx-a100-superpod");
  const SweepSpec off = nemo_job("a100-sxm4-80gb", "dgx-a100-superpod",
                                 ", tp_comm_overlap: false, overlap_param_gather: false");
  ASSERT_EQ(uncredited_overlaps(off.hardware[0], off.training), 0u);
  const Point p = test::flat_point(8, 32, true, 1);
  Workload w;
  EvalResult a, b;
  PointEvaluator(nemo).evaluate(p, w, a);
  Workload w2;
  PointEvaluator(off).evaluate(p, w2, b);
  ASSERT_EQ(a.status, Status::Ok);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.tp_comm_time_s, b.tp_comm_time_s);
  EXPECT_GT(a.tp_comm_time_s, 0.0);  // TP8 collectives exposed, as in Megatron-LM 2021-22
  // `rapid predict` says why.
  const std::string text = describe_result(nemo, p, a);
  EXPECT_NE(text.find("stack       nemo-24.07 on a100-sxm4-80gb: tp_comm_overlap, "
                      "overlap_param_gather not credited"),
            std::string::npos)
      << text;
  EXPECT_EQ(describe_result(off, p, b).find("not credited"), std::string::npos);
}

// ZeRO-3/FSDP's per-unit prefetch is the stack's structure, not an opt-in overlap
// (docs/model.md sec 9): torchtitan-2025 (zero3_prefetch_units 1, overlap_param_gather true)
// keeps it on A100, whose factors' runs had no parameter gather (fitted_overlaps
// [grad_reduce]); the ZeRO-1/2 gather of the updated weights still follows the list.
TEST(StackTraining, Zero3PrefetchIsCreditedWhateverTheFittedOverlaps) {
  const SweepSpec a100 = test::spec_with_stack("llama3-8b", "a100-sxm4-80gb", "dgx-a100-superpod",
                                               8, 4096, "torchtitan-2025");
  ASSERT_TRUE(a100.training.overlap_param_gather);
  ASSERT_EQ(a100.training.zero3_prefetch_units, 1);
  EXPECT_EQ(uncredited_overlaps(a100.hardware[0], a100.training), kOverlapParamGather);
  const TrainingSpec t = stack_training(a100.hardware[0], a100.training);
  EXPECT_FALSE(t.overlap_param_gather);
  EXPECT_TRUE(t.zero3_prefetch_credited);
  EXPECT_FALSE(t.param_gather_overlapped(1));  // the distributed optimizer's gather
  EXPECT_FALSE(t.param_gather_overlapped(2));
  EXPECT_TRUE(t.param_gather_overlapped(3));  // FSDP's next-block gather
  // A stack that gathers no unit ahead has no prefetch to keep.
  TrainingSpec none = a100.training;
  none.zero3_prefetch_units = 0;
  EXPECT_FALSE(stack_training(a100.hardware[0], none).param_gather_overlapped(3));
  // A job that turns the overlap off itself gets no prefetch either (nothing dropped).
  TrainingSpec off = a100.training;
  off.overlap_param_gather = false;
  EXPECT_FALSE(stack_training(a100.hardware[0], off).param_gather_overlapped(3));
  // H100's factors were fitted with every overlap: nothing dropped, nothing to keep.
  const SweepSpec h100 = test::spec_with_stack("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod",
                                               8, 4096, "torchtitan-2025");
  const TrainingSpec th = stack_training(h100.hardware[0], h100.training);
  EXPECT_TRUE(th.overlap_param_gather);
  EXPECT_FALSE(th.zero3_prefetch_credited);
  EXPECT_TRUE(th.param_gather_overlapped(1) && th.param_gather_overlapped(3));
}

// FSDP (torchtitan-2025) on one DGX A100: Llama 3 8B, dp 8, ZeRO-3, micro-batch 1 of 4096
// tokens, gbs 8 (one micro-batch), no recompute. By hand:
//   a layer holds P_L = 4096 x (2 x 4096 + 2 x 1024) (q, o; k, v) + 3 x 4096 x 14336 (SwiGLU)
//   + 2 x 4096 (norms) = 218,112,000 parameters; its gather moves 2 P_L bytes (bf16) over
//   the node's NVLink in g_L seconds (CollectiveCost, the A100's NVLink; its own tests
//   derive it), its reduce-scatter 4 P_L bytes (fp32) in r_L; the embedding and the LM
//   head gather in g_E and g_H, reduce in r_E.
//   A layer's forward is at least 2 P_L x 4096 FLOPs at the A100's 312 TFLOP/s bf16 dense
//   peak (A100 datasheet): c_L >= 5.73 ms; its backward twice that. So g_L < c_L and
//   g_L + r_L < 2 c_L: the next block's gather (and in backward the reduce-scatter beside
//   it) is hidden under the block's compute.
// With the prefetch (every unit's gather posted at the pass's start, each unit waiting for
// its own, docs/model.md sec 7 "ZeRO-3 units") each pass waits only until its first layer
// can start: at least the first unit's whole gather (forward g_E, backward g_H: nothing runs
// before it), at most that plus the first layer's gather (forward g_E + g_L, backward
// g_H + g_L); every later gather is done before its unit is reached. After the backward the
// reductions of its last units (layer 0's and the embedding's) remain: at most r_L + r_E.
//   g_E + g_H <= exposed <= g_E + g_H + 2 g_L + r_L + r_E.
// Without it each pass waits for all its gathers before it starts:
//   exposed >= 2 (g_E + 32 g_L + g_H).
// The factors' runs (Megatron-LM 2021-22 on Selene) had no parameter gather, but that rule
// concerns the opt-in overlap, not FSDP's structure: the A100 prediction is the one the
// stack would get were param_gather in the list, to the bit, in both fidelities.
TEST(StackTraining, FsdpPrefetchOnA100HidesTheGatherUnderTheBlock) {
  const SweepSpec s = test::spec_with_stack("llama3-8b", "a100-sxm4-80gb", "dgx-a100-superpod", 8,
                                            4096, "torchtitan-2025");
  SweepSpec fitted = s;  // the same factors, fitted with the parameter gather
  EndToEndFactors f = s.training.framework.factors_for("a100-sxm4-80gb");
  ASSERT_EQ(f.fitted_overlaps & kOverlapParamGather, 0u);
  f.fitted_overlaps |= kOverlapParamGather;
  fitted.training.framework.end_to_end["a100-sxm4-80gb"] = f;
  SweepSpec exposed = s;  // the job without the prefetch
  exposed.training.overlap_param_gather = false;
  const Point p = test::flat_point(1, 8, false, 3);
  for (Fidelity fid : {Fidelity::Analytical, Fidelity::Des}) {
    Workload w;
    EvalResult r, rf, rx;
    PointEvaluator(s, fid).evaluate(p, w, r);
    ASSERT_EQ(r.status, Status::Ok);
    ASSERT_EQ(w.layer_params, 218112000.0);
    const GroupShape& dp = w.group(CommGroup::DPCP);
    ASSERT_EQ(dp.size, 8);
    ASSERT_EQ(dp.nodes, 1);
    const CollectiveCost cost(s.hardware[0], s.network);
    auto gather = [&](double params) {
      return cost.time(CollectiveKind::AllGather, 2.0 * params, dp);
    };
    auto reduce = [&](double params) {
      return cost.time(CollectiveKind::ReduceScatter, 4.0 * params, dp);
    };
    const double gL = gather(w.layer_params), gE = gather(w.embedding_params),
                 gH = gather(w.lm_head_params), rL = reduce(w.layer_params),
                 rE = reduce(w.embedding_params);
    const double cL = 2.0 * w.layer_params * 4096 / 312e12;
    ASSERT_LT(gL, cL);
    ASSERT_LT(gL + rL, 2.0 * cL);
    EXPECT_GE(r.dp_exposed_time_s, gE + gH) << static_cast<int>(fid);
    EXPECT_LE(r.dp_exposed_time_s, gE + gH + 2.0 * gL + rL + rE) << static_cast<int>(fid);
    Workload w2, w3;
    PointEvaluator(fitted, fid).evaluate(p, w2, rf);
    EXPECT_EQ(r.step_time_s, rf.step_time_s) << static_cast<int>(fid);
    EXPECT_EQ(r.dp_exposed_time_s, rf.dp_exposed_time_s) << static_cast<int>(fid);
    PointEvaluator(exposed, fid).evaluate(p, w3, rx);
    EXPECT_GE(rx.dp_exposed_time_s, 2.0 * (gE + 32.0 * gL + gH)) << static_cast<int>(fid);
  }
  // `rapid predict` says which gather is credited.
  Workload w;
  EvalResult r;
  PointEvaluator(s).evaluate(p, w, r);
  const std::string text = describe_result(s, p, r);
  EXPECT_NE(text.find("overlap_param_gather not credited"), std::string::npos) << text;
  EXPECT_NE(text.find("ZeRO-3 per-unit prefetch credited"), std::string::npos) << text;
}

TEST(StackTraining, InterleavingWithTwoStagesFollowsTheStack) {
  // Megatron-Core core_r0.8.0 refuses the interleaved schedule with pp = 2
  // (megatron-core-0.8.yaml supports.interleaved_pp2 false, [PS]); pp = 4 interleaves.
  // Llama 3 70B (80 layers) on 256 GPUs at tp 8: pp 2 (dp 16) vpp 2 gives 20 layers per
  // chunk and 512 / 16 = 32 micro-batches, divisible by 2; pp 4 (dp 8) vpp 2 gives 10 layers
  // per chunk and 64 micro-batches, divisible by 4.
  SweepSpec s = nemo_job("h100-sxm5-80gb", "dgx-h100-superpod");
  ParallelConfig c;
  c.dp = 16;
  c.tp = 8;
  c.sp = true;
  c.pp = 2;
  c.vpp = 2;
  const char* why = illegal_reason(s, c);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("interleaved_pp2"), std::string::npos) << why;
  c.pp = 4;
  c.dp = 8;
  EXPECT_EQ(illegal_reason(s, c), nullptr);
  // A stack that lifts it interleaves two stages.
  c.pp = 2;
  c.dp = 16;
  s.training.framework.interleaved_pp2 = true;
  EXPECT_EQ(illegal_reason(s, c), nullptr);
}

TEST(StackTraining, FittedOverlapsMustBeKnownNames) {
  const std::string file = test::write_temp("bad-stack.yaml",
                                            "name: bad\nend_to_end:\n  a100-sxm4-80gb: "
                                            "{step: 0.9, fitted_overlaps: [tp]}\n");
  try {
    parse_framework(YAML::LoadFile(file), file, FrameworkSpec{});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fitted_overlaps"), std::string::npos) << what;
    EXPECT_NE(what.find("'tp'"), std::string::npos) << what;
  }
  // An empty list: the runs had none of them.
  const std::string none = test::write_temp("none-stack.yaml",
                                            "name: none\nend_to_end:\n  a100-sxm4-80gb: "
                                            "{step: 0.9, fitted_overlaps: []}\n");
  const FrameworkSpec f = parse_framework(YAML::LoadFile(none), none, FrameworkSpec{});
  EXPECT_EQ(f.factors_for("a100-sxm4-80gb").fitted_overlaps, 0u);
  EXPECT_EQ(f.factors_for("h100-sxm5-80gb").fitted_overlaps, kOverlapAll);  // no entry
}

}  // namespace
}  // namespace rapid
