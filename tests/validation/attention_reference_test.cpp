// Attention kernels against their published benchmarks (issue 8, part 2): FlashAttention-2,
// FlashAttention-3 and cuDNN fused attention on H100 SXM5 as Shah et al. 2024
// ("FlashAttention-3", arXiv 2407.08608v1, Figures 5-7) measured them, transcribed in
// data/reference/attention_h100_fa3_paper.csv. Each kernel's two constants per direction
// (MMA efficiency, exposed softmax share; configs/hardware/h100-sxm5-80gb.yaml) are
// fitted on its bf16 rows from 2k tokens up; shorter sequences and every FP8 row are
// out-of-sample. Three shapes per kernel, the ones Llama-style training runs (head dim
// 128, causal forward, backward), within the 10%:
//   forward causal 8k (in-sample), backward 8k (in-sample; the paper's backward charts are
//   unmasked), forward causal 1k (out-of-sample).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "validation/validation_support.hpp"

namespace rapid {
namespace {

const ValidationRow* find_row(const ValidationTable& t, const std::string& prefix) {
  for (const ValidationRow& r : t.rows)
    if (r.label.rfind(prefix + " ", 0) == 0) return &r;
  return nullptr;
}

TEST(AttentionReference, EachKernelWithinTenPercentAtThreeTrainingShapes) {
  const ValidationTable t = test::table("attention_h100_fa3_paper");
  for (const char* impl : {"fa2", "fa3", "cudnn"})
    for (const char* shape :
         {"forward bf16 d128 causal=true seq 8192", "backward bf16 d128 causal=false seq 8192",
          "forward bf16 d128 causal=true seq 1024"}) {
      const std::string key = std::string(impl) + " " + shape;
      const ValidationRow* r = find_row(t, key);
      ASSERT_NE(r, nullptr) << key;
      std::printf("%-50s predicted %6.1f published %6.1f TFLOP/s  error %4.1f%%\n", key.c_str(),
                  r->predicted, r->measured, r->abs_pct_error());
      EXPECT_LE(r->abs_pct_error(), 10.0) << key;
    }
}

TEST(AttentionReference, ReportsInAndOutOfSampleError) {
  // Reported, not bounded beyond the shapes above: the fit set (bf16, 2k tokens and more)
  // against the rest (shorter sequences, FP8: the FP8 MMA efficiency is the measured
  // FP8/bf16 matmul ratio, nothing fitted on FP8 attention).
  const ValidationTable t = test::table("attention_h100_fa3_paper");
  double in = 0, out = 0;
  int n_in = 0, n_out = 0;
  for (const ValidationRow& r : t.rows) {
    const bool fitted = r.label.find(" bf16 ") != std::string::npos &&
                        r.label.find(" seq 512 ") == std::string::npos &&
                        r.label.find(" seq 1024 ") == std::string::npos;
    (fitted ? in : out) += r.abs_pct_error();
    ++(fitted ? n_in : n_out);
  }
  ASSERT_GT(n_in, 0);
  ASSERT_GT(n_out, 0);
  std::printf("attention kernels: in-sample MAPE %.1f%% (%d rows), out-of-sample %.1f%% (%d)\n",
              in / n_in, n_in, out / n_out, n_out);
  EXPECT_EQ(n_in + n_out, 180);
}

}  // namespace
}  // namespace rapid
