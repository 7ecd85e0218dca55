#include "rapid/sweep/enumerator.hpp"

#include <gtest/gtest.h>

#include <set>

#include "rapid/common/error.hpp"
#include "rapid/spec/legality.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// A small job: 16 GPUs, 8 per node; 8 layers, 8 heads; gbs 16; seq 1024.
std::string small_job(const std::string& extra = "",
                      const std::string& tp_pp = "tp: [1, 2, 4, 8], pp: [1, 2, 4]", int gbs = 16) {
  return "model: {name: tiny, num_layers: 8, hidden_size: 1024, num_attention_heads: 8,\n"
         "        ffn_hidden_size: 4096, vocab_size: 32000, seq_length: 1024, activation: gelu}\n"
         "hardware: " +
         test::source_path("configs/hardware/h100-sxm5-80gb.yaml") +
         "\n"
         "network: {topology: fat_tree, spine_bandwidth: 400Gbps, leaf_bandwidth: 400Gbps,\n"
         "          link_latency: 0.5us}\n"
         "gpus: 16\n"
         "training: {global_batch_size: " +
         std::to_string(gbs) +
         "}\n"
         "search: {" +
         tp_pp +
         ", mbs: [1, 2], recompute: [none, full],\n"
         "         sp: [false, true], zero_stage: [0, 1]}\n" +
         extra;
}

TEST(Enumerator, CountsTheSmallJobByHand) {
  SweepSpec spec = load_sweep_spec(test::write_temp("small.yaml", small_job()));
  Enumerator e(spec);
  // (tp, pp, dp) with tp*pp*dp = 16 and pp | 8 layers, tp <= 8:
  //   (1,1,16) (1,2,8) (1,4,4) (2,1,8) (2,2,4) (2,4,2) (4,1,4) (4,2,2) (4,4,1) (8,1,2) (8,2,1)
  // mbs: gbs 16 divisible by dp*mbs -> dp 16: {1}; dp <= 8: {1, 2}
  // sp: tp 1 -> {false}; tp > 1 -> {false, true}    zero: dp 1 -> {0}; dp > 1 -> {0, 1}
  // recompute: 2. Points per (tp,pp,dp) = mbs * sp * zero * 2:
  //   (1,1,16) 1*1*2*2 = 4; (1,2,8) (1,4,4) 2*1*2*2 = 8 each;
  //   (2,1,8) (2,2,4) (2,4,2) (4,1,4) (4,2,2) (8,1,2) 2*2*2*2 = 16 each;
  //   (4,4,1) (8,2,1) 2*2*1*2 = 8 each.          Total 4 + 16 + 96 + 16 = 132.
  EXPECT_EQ(e.size(), 132);
}

// The small job walks 1 hardware x 1 GPU count x (pp 3 x tp 4 x cp 1) x (ep 1 x etp 1 x
// vpp 1) x (mbs 2 x offload 1 x sp 2) x (zero 2 x recompute 2) = 192 candidates: a cap of
// 191 refuses it before any enumeration, naming the count; 192 admits it.
TEST(Enumerator, RefusesASearchSpaceAboveItsCap) {
  SweepSpec spec = load_sweep_spec(test::write_temp("small.yaml", small_job()));
  spec.search.max_candidates = 191;
  try {
    Enumerator e(spec);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "search");
    EXPECT_EQ(e.value(), "192 candidate points");
  }
  spec.search.max_candidates = 192;
  EXPECT_EQ(Enumerator(spec).size(), 132);
}

TEST(Enumerator, DecodesOnlyLegalDistinctPointsAndRoundTrips) {
  SweepSpec spec = load_sweep_spec(test::write_temp("small.yaml", small_job()));
  Enumerator e(spec);
  std::set<std::string> seen;
  for (int64_t i = 0; i < e.size(); ++i) {
    Point p = e.decode(i);
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.par.num_gpus(), 16);
    EXPECT_EQ(illegal_reason(spec, p.par), nullptr) << p.par.describe();
    EXPECT_TRUE(seen.insert(p.par.describe()).second) << "duplicate " << p.par.describe();
    EXPECT_EQ(e.encode(p.hardware, p.par), i);
  }
}

TEST(Enumerator, FindsTheBaselineAndRejectsOneOutsideTheSpace) {
  SweepSpec spec = load_sweep_spec(test::write_temp(
      "base.yaml", small_job("baseline: {tp: 4, pp: 2, mbs: 2, sp: true, recompute: full, "
                             "zero_stage: 1}\n")));
  Enumerator e(spec);
  ASSERT_GE(e.baseline_index(), 0);
  Point b = e.decode(e.baseline_index());
  EXPECT_EQ(b.par.dp, 2);  // 16 / (4 * 2)
  EXPECT_EQ(b.par.tp, 4);
  EXPECT_EQ(b.par.recompute, Recompute::Full);

  // Selective recompute is legal but not in the job's search list.
  SweepSpec outside = load_sweep_spec(test::write_temp(
      "outside.yaml", small_job("baseline: {tp: 4, pp: 2, recompute: selective}\n")));
  EXPECT_THROW(Enumerator{outside}, InputError);
}

TEST(Enumerator, EmptySpaceIsAnInputError) {
  // tp, pp in {1, 2}: tp*pp <= 4, so dp >= 4 on 16 GPUs, and gbs 3 is not divisible by
  // dp*mbs >= 4: no legal point.
  SweepSpec spec =
      load_sweep_spec(test::write_temp("empty.yaml", small_job("", "tp: [1, 2], pp: [1, 2]", 3)));
  EXPECT_THROW(Enumerator{spec}, InputError);
}

}  // namespace
}  // namespace rapid
