#include "rapid/sweep/enumerator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <span>

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

// The frames-and-tables decoding against a brute-force walk of every candidate (issue 13:
// the space is never materialised): a wider job (vpp, pp up to 8, two GPU counts, two
// hardware variants, partial recompute) holds exactly the candidates illegal_reason
// accepts, each once, in the documented order: hardware, GPU count, tp, pp, cp, ep, etp,
// then vpp, mbs, offload, sp, zero and the recompute option.
TEST(Enumerator, EqualsABruteForceWalkOfEveryCandidate) {
  const std::string hw = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  auto swap = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  std::string job = small_job("", "tp: [1, 2, 4, 8], pp: [1, 2, 4, 8], vpp: [1, 2, 4]", 32);
  job = swap(job, "gpus: 16", "gpus: [16, 32]");
  job = swap(
      job, "hardware: " + hw,
      "hardware: [" + hw + ", " + test::source_path("configs/hardware/a100-sxm4-80gb.yaml") + "]");
  job = swap(job, "recompute: [none, full]",
             "recompute: [none, selective, full], recompute_method: [uniform, block],"
             " recompute_num_layers: [1, 2]");
  SweepSpec spec = load_sweep_spec(test::write_temp("wide.yaml", job));
  const Enumerator e(spec);
  std::vector<ParallelConfig> expected;
  const SearchSpace& S = spec.search;
  for (int64_t gpus : S.num_gpus)
    for (int64_t tp : S.tp)
      for (int64_t pp : S.pp) {
        const int64_t dp = data_parallel_degree(gpus, tp, pp, 1);
        if (dp <= 0) continue;
        for (int64_t mbs : S.mbs)
          for (bool sp : S.sp)
            for (int64_t vpp : S.vpp)
              for (int64_t zero : S.zero_stage)
                for (Recompute r : S.recompute)
                  for (RecomputeMethod m : S.recompute_method)
                    for (int64_t layers : S.recompute_layers) {
                      // none and selective take uniform / 1 only (one option each)
                      if (r != Recompute::Full &&
                          (m != RecomputeMethod::Uniform || layers != S.recompute_layers[0]))
                        continue;
                      ParallelConfig c;
                      c.dp = static_cast<int32_t>(dp);
                      c.tp = static_cast<int32_t>(tp);
                      c.pp = static_cast<int32_t>(pp);
                      c.vpp = static_cast<int32_t>(vpp);
                      c.mbs = static_cast<int32_t>(mbs);
                      c.sp = sp;
                      c.zero_stage = static_cast<int8_t>(zero);
                      c.recompute = r;
                      c.recompute_method = r == Recompute::Full ? m : RecomputeMethod::Uniform;
                      c.recompute_layers = r == Recompute::Full ? static_cast<int32_t>(layers) : 1;
                      if (!illegal_reason(spec, c)) expected.push_back(c);
                    }
      }
  ASSERT_GT(expected.size(), 100u);
  ASSERT_EQ(e.size(), 2 * static_cast<int64_t>(expected.size()));  // two hardware entries
  // The hardware variant is the innermost axis: point i is layout i / 2 on variant i % 2.
  for (int64_t i = 0; i < e.size(); ++i) {
    const Point p = e.decode(i);
    EXPECT_EQ(p.hardware, i % 2);
    ASSERT_EQ(p.par, expected[static_cast<size_t>(i / 2)]) << "point " << i;
    EXPECT_EQ(e.encode(p.hardware, p.par), i);
  }
  // Decoding out of order (another thread's frame cache, a jump back) gives the same points.
  for (int64_t i = e.size() - 1; i >= 0; i -= 7)
    EXPECT_EQ(e.decode(i).par, expected[static_cast<size_t>(i / 2)]);
}

// Shared counting: rank r of R counts its part of the frames, `sum` adds the parts. With
// the other part's counts supplied (what MPI_Allreduce would add), each part's enumerator
// equals the unshared one point for point.
TEST(Enumerator, SharedCountingEqualsCountingAlone) {
  SweepSpec spec = load_sweep_spec(test::write_temp(
      "shared.yaml", small_job("", "tp: [1, 2, 4, 8], pp: [1, 2, 4], vpp: [1, 2]")));
  const Enumerator alone(spec);
  std::vector<int64_t> part1;
  EnumerationShare one{1, 2, [&](std::span<int64_t> v) { part1.assign(v.begin(), v.end()); }};
  const Enumerator second(spec, one);  // its counts: part 1 only (the "sum" kept them)
  std::vector<int64_t> part0;
  EnumerationShare zero{0, 2, [&](std::span<int64_t> v) {
                          part0.assign(v.begin(), v.end());
                          for (size_t i = 0; i < v.size(); ++i) v[i] += part1[i];
                        }};
  const Enumerator first(spec, zero);
  // Each part counted some frames and left the rest at 0.
  EXPECT_GT(std::count_if(part0.begin(), part0.end(), [](int64_t v) { return v > 0; }), 0);
  EXPECT_GT(std::count_if(part1.begin(), part1.end(), [](int64_t v) { return v > 0; }), 0);
  ASSERT_EQ(first.size(), alone.size());
  for (int64_t i = 0; i < alone.size(); ++i) ASSERT_EQ(first.decode(i).par, alone.decode(i).par);
  EXPECT_EQ(first.unused_recompute_options(), alone.unused_recompute_options());
}

}  // namespace
}  // namespace rapid
