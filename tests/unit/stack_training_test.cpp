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
