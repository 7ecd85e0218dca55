// FLOPs per token of the workload against the 6N + attention rule (Kaplan et al. 2020,
// sec 2.1; Chowdhery et al. 2022, PaLM, Appendix B: 6N + 12 L h s per token).
#include <gtest/gtest.h>

#include "rapid/workload/model_flops.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

double workload_flops_per_token(const SweepSpec& s, ParallelConfig c) {
  c.dp = 1;
  Workload w;
  build_workload(s.model, s.training, s.network, c, w);
  return workload_step_flops(w, false) / static_cast<double>(w.tokens_per_step());
}

TEST(ModelFlops, Llama3_70B_MatchesSixNPlusAttention) {
  SweepSpec s = test::spec_with("llama3-70b", "h100-sxm5-80gb", "dgx-h100-superpod", 1, 8192);
  s.training.framework.attention = {
      AttentionImpl::Unfused};  // unfused: the full s x s scores, as the rule counts
  // By hand, h=8192, a=64, g=8, d=128, f=28672, V=128256, L=80, s=8192:
  //   layer matmul params = h(a+2g)d + a d h + 3 h f
  //                       = 83,886,080 + 67,108,864 + 704,643,072 = 855,638,016
  //   6 * (80 * 855,638,016 + V h = 1,050,673,152)       = 417,010,286,592
  //   attention 12 L h s = 12 * 80 * 8192 * 8192          =  64,424,509,440
  //   total                                               = 481,434,796,032 FLOP/token
  const double expected = 481434796032.0;
  EXPECT_NEAR(model_flops_per_token(s.model, 8192), expected, expected * 1e-12);
  EXPECT_NEAR(workload_flops_per_token(s, ParallelConfig{}), expected, expected * 1e-9);
  // TP splits the work, it does not change it (vocab 128256 divides by 8).
  ParallelConfig tp8;
  tp8.tp = 8;
  EXPECT_NEAR(workload_flops_per_token(s, tp8), expected, expected * 1e-9);
  // 6N with N = all 70,553,706,496 parameters (Meta: "70B", 70.6e9) counts the input
  // embedding's 1.05e9 lookup parameters too: within 2% of the op sum.
  const double six_n_rule = 6.0 * 70553706496.0 + 12.0 * 80 * 8192 * 8192;
  EXPECT_NEAR(workload_flops_per_token(s, ParallelConfig{}), six_n_rule, 0.02 * six_n_rule);
  EXPECT_EQ(s.model.total_params(), 70553706496);
}

TEST(ModelFlops, Gpt3_175B_MatchesSixNPlusAttention) {
  SweepSpec s = test::spec_with("gpt3-175b", "a100-sxm4-80gb", "dgx-a100-superpod", 1, 2048);
  s.training.framework.attention = {AttentionImpl::Unfused};
  // h=12288, L=96, f=4h, V=51200 (tied), s=2048:
  //   layer matmul = 12 h^2 = 1,811,939,328; * 96 = 173,946,175,488
  //   6 * (173,946,175,488 + 629,145,600)            = 1,047,451,926,528
  //   12 L h s = 12 * 96 * 12288 * 2048              =    28,991,029,248
  //   total                                          = 1,076,442,955,776 FLOP/token
  const double expected = 1076442955776.0;
  EXPECT_NEAR(model_flops_per_token(s.model, 2048), expected, expected * 1e-12);
  EXPECT_NEAR(workload_flops_per_token(s, ParallelConfig{}), expected, expected * 1e-9);
  // GPT-3 is "175B": 96 layers of 12h^2 + biases/norms + 51200*12288 tied embedding.
  EXPECT_NEAR(static_cast<double>(s.model.total_params()), 175e9, 0.01 * 175e9);
}

TEST(ModelFlops, CausalFlashAttentionHalvesTheAttentionTerm) {
  SweepSpec s = test::spec_with("llama3-70b", "h100-sxm5-80gb", "dgx-h100-superpod", 1, 8192);
  s.training.framework.attention = {AttentionImpl::FA2};
  // FlashAttention skips the masked half: 64,424,509,440 / 2 fewer FLOPs per token, and
  // its backward does 2.5x the forward (5 matmuls vs 2) instead of 2x: the attention term
  // becomes (1 + 2.5) / 3 of the causal half = 0.5 * 3.5/3 of the full term.
  const double dense = 417010286592.0, attention = 64424509440.0;
  const double expected = dense + attention * 0.5 * 3.5 / 3.0;
  EXPECT_NEAR(workload_flops_per_token(s, ParallelConfig{}), expected, expected * 1e-9);
}

TEST(ModelFlops, MegatronSc21FormulaAtOneSequence) {
  // Narayanan et al. 2021 eq. 3 for B=1, s=2048, l=96, h=12288, V=51200:
  //   96 * 2048 * 96 = 18,874,368;  * 12288^2 (150,994,944) = 2.849952e15
  //   * (1 + 0.0277778 + 0.0027127) = * 1.0304898            = 2.93683e15
  const double f = megatron_sc21_flops(1, 2048, 96, 12288, 51200);
  const double by_hand = 96.0 * 2048 * 96 * 12288.0 * 12288.0 *
                         (1.0 + 2048.0 / (6 * 12288.0) + 51200.0 / (16.0 * 96 * 12288));
  EXPECT_DOUBLE_EQ(f, by_hand);
  EXPECT_NEAR(f, 2.93683e15, 0.00001e15);
}

}  // namespace
}  // namespace rapid
