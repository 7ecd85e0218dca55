// Prediction intervals (docs/validation.md "Prediction intervals"): the split-conformal
// quantile, the family / pooled / extrapolated rule on residuals made by hand, the interval
// a row gets, the file's bad input, and the shipped file read with a job.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rapid/common/error.hpp"
#include "rapid/core/prediction_interval.hpp"
#include "rapid/spec/interval_spec.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// |r| = 0.01, 0.02, ..., n/100, signs alternating.
std::vector<double> ramp(int n) {
  std::vector<double> r;
  for (int i = 1; i <= n; ++i) r.push_back((i % 2 ? -1 : 1) * i / 100.0);
  return r;
}

TEST(PredictionInterval, ConformalQuantileIsTheCeilNPlusOneCoverageThSmallest) {
  // n = 9 at 80%: ceil(10 x 0.8) = 8th smallest |r| = 0.08 (Lei et al. 2018, Algorithm 2).
  EXPECT_DOUBLE_EQ(conformal_abs_quantile(ramp(9), 0.8), 0.08);
  // n = 43 (the training rows): ceil(44 x 0.8) = ceil(35.2) = 36th.
  EXPECT_DOUBLE_EQ(conformal_abs_quantile(ramp(43), 0.8), 0.36);
  // NaN rows are not residuals: the same 9 plus two NaN give the same 8th.
  std::vector<double> with_nan = ramp(9);
  with_nan.push_back(NAN);
  with_nan.push_back(NAN);
  EXPECT_DOUBLE_EQ(conformal_abs_quantile(with_nan, 0.8), 0.08);
  // n = 3 is too few for 80% (ceil(4 x 0.8) = 4 > 3): the largest.
  EXPECT_DOUBLE_EQ(conformal_abs_quantile(ramp(3), 0.8), 0.03);
  EXPECT_TRUE(std::isnan(conformal_abs_quantile({}, 0.8)));
  // (99 + 1) x 0.55 is 55.00000000000001 in binary floating point: still the 55th, not 56th.
  EXPECT_DOUBLE_EQ(conformal_abs_quantile(ramp(99), 0.55), 0.55);
  const LogInterval b = conformal_interval(ramp(9), 0.8);
  EXPECT_DOUBLE_EQ(b.lo, -0.08);
  EXPECT_DOUBLE_EQ(b.hi, 0.08);
  // e^0.08 - e^-0.08 = 1.083287 - 0.923116.
  EXPECT_NEAR(b.relative_width(), 0.160171, 1e-6);
}

TEST(PredictionInterval, WidenedKeepsTheCentreAndScalesTheWidth) {
  const LogInterval a = widened({-0.1, 0.1}, 2);
  EXPECT_DOUBLE_EQ(a.lo, -0.2);
  EXPECT_DOUBLE_EQ(a.hi, 0.2);
  const LogInterval b = widened({0, 0.2}, 1.5);  // centre 0.1, half-width 0.1 -> 0.15
  EXPECT_DOUBLE_EQ(b.lo, -0.05);
  EXPECT_DOUBLE_EQ(b.hi, 0.25);
}

TEST(PredictionInterval, StackFamilyIsTheNameUpToItsFirstDash) {
  EXPECT_EQ(stack_family("megatron-core-0.8"), "megatron");
  EXPECT_EQ(stack_family("megatron-lm-2022"), "megatron");
  EXPECT_EQ(stack_family("nemo-24.07"), "nemo");
  EXPECT_EQ(stack_family("nemo-inference-2023"), "nemo");
  EXPECT_EQ(stack_family("nanotron"), "nanotron");
}

// A residual row of `table`; the DES's residual is twice the analytical one.
IntervalResidual row(const std::string& table, const std::string& gpu, const std::string& stack,
                     double r) {
  return {table, table, gpu, stack, r, 2 * r};
}

// Three tables of gpu-x with stack a-1 (4 rows each, |r| 0.01 ... 0.12), one of gpu-y with
// a-2 (4 rows, |r| 0.21 ... 0.24); moved to the other GPU type every row's error doubles,
// moved to another stack family gpu-x's rows' errors grow by half.
IntervalSpec hand_made() {
  IntervalSpec s;
  for (int t = 0; t < 3; ++t)
    for (int i = 1; i <= 4; ++i) {
      IntervalResidual r = row("x" + std::to_string(t), "gpu-x", "a-1", (4 * t + i) / 100.0);
      r.other_gpu = 2 * r.analytical;
      r.other_stack = 1.5 * r.analytical;
      s.training.push_back(r);
    }
  for (int i = 1; i <= 4; ++i) {
    IntervalResidual r = row("y", "gpu-y", "a-2", -(20 + i) / 100.0);
    r.other_gpu = 2 * r.analytical;
    s.training.push_back(r);
  }
  for (int i = 1; i <= 4; ++i) s.serving.push_back(row("srv", "gpu-x", "b-1", i / 1000.0));
  return s;
}

TEST(PredictionInterval, FamilyWithThreeTablesGetsItsOwnIntervalOthersThePooledOne) {
  const IntervalSpec s = hand_made();
  // gpu-x x a: 12 rows of 3 tables: ceil(13 x 0.8) = 11th of |r| 0.01 ... 0.12 = 0.11.
  const IntervalBand x = resolve_band(s, "gpu-x", true, "a-7", false);
  EXPECT_FALSE(x.extrapolated);
  EXPECT_DOUBLE_EQ(x.interval.analytical.hi, 0.11);
  EXPECT_DOUBLE_EQ(x.interval.des.hi, 0.22);  // the DES's own residuals, 2r
  // gpu-y x a: 4 rows of 1 table: the pooled 16 rows, ceil(17 x 0.8) = 14th smallest |r|:
  // 0.01 ... 0.12, then 0.21, 0.22: 0.22.
  const IntervalBand y = resolve_band(s, "gpu-y", true, "a-2", false);
  EXPECT_FALSE(y.extrapolated);
  EXPECT_DOUBLE_EQ(y.interval.analytical.lo, -0.22);
  EXPECT_DOUBLE_EQ(y.interval.analytical.hi, 0.22);
}

TEST(PredictionInterval, UncoveredPairsAreWidenedByTheMeasuredTransferPenalty) {
  const IntervalSpec s = hand_made();
  // Moved errors are exactly 2x (GPU type) and 1.5x (stack family, gpu-x's 12 rows): the
  // quantiles' ratio is that factor.
  EXPECT_DOUBLE_EQ(gpu_transfer_penalty(s), 2.0);
  EXPECT_DOUBLE_EQ(stack_transfer_penalty(s), 1.5);
  // The widest band: pooled +-0.22 (wider than gpu-x x a's +-0.11).
  const IntervalBand gpu = resolve_band(s, "gpu-z", true, "a-1", false);
  EXPECT_TRUE(gpu.extrapolated);
  EXPECT_DOUBLE_EQ(gpu.widening, 2.0);
  EXPECT_DOUBLE_EQ(gpu.interval.analytical.hi, 0.44);
  const IntervalBand stack = resolve_band(s, "gpu-x", true, "c-1", false);
  EXPECT_TRUE(stack.extrapolated);
  EXPECT_DOUBLE_EQ(stack.widening, 1.5);
  EXPECT_DOUBLE_EQ(stack.interval.analytical.hi, 0.33);
  // A hardware variant is never covered, even under a measured name.
  const IntervalBand variant = resolve_band(s, "gpu-x", false, "a-1", false);
  EXPECT_TRUE(variant.extrapolated);
  EXPECT_DOUBLE_EQ(variant.interval.analytical.hi, 0.44);
  EXPECT_NE(variant.extrapolation.find("hardware variant"), std::string::npos);
  // Neither the GPU type nor the family: the larger penalty.
  EXPECT_DOUBLE_EQ(resolve_band(s, "gpu-z", true, "c-1", false).widening, 2.0);
}

TEST(PredictionInterval, ServingIsNeverNarrowerThanTheTrainingBand) {
  const IntervalSpec s = hand_made();
  // The 4 serving rows (|r| <= 0.004) give +-0.004; the training pooled band is +-0.22.
  const IntervalBand b = resolve_band(s, "gpu-x", true, "b-2", true);
  EXPECT_FALSE(b.extrapolated);
  EXPECT_DOUBLE_EQ(b.interval.analytical.hi, 0.22);
}

TEST(PredictionInterval, RowIntervalsScaleTimesAndInvertRates) {
  IntervalBand b;
  b.coverage = 0.8;
  b.interval.analytical = {-0.1, 0.2};
  b.interval.des = {-0.3, 0.3};
  EvalResult r;
  r.step_time_s = 10;
  r.tokens_per_s = 1000;
  r.mfu = 0.5;
  apply_interval(interval_factors(b, false), false, r);
  EXPECT_NEAR(r.step_time_lo_s, 9.048374, 1e-6);      // 10 e^-0.1
  EXPECT_NEAR(r.step_time_hi_s, 12.214028, 1e-6);     // 10 e^0.2
  EXPECT_NEAR(r.tokens_per_s_lo, 818.730753, 1e-6);   // 1000 e^-0.2
  EXPECT_NEAR(r.tokens_per_s_hi, 1105.170918, 1e-6);  // 1000 e^0.1
  EXPECT_NEAR(r.mfu_lo, 0.409365, 1e-6);
  EXPECT_TRUE(std::isnan(r.ttft_lo_s));  // a training row
  EXPECT_EQ(r.extrapolated, 0);
  apply_interval(interval_factors(b, true), false, r);  // a DES row: the DES's interval
  EXPECT_NEAR(r.step_time_hi_s, 13.498588, 1e-6);       // 10 e^0.3
  EvalResult s;
  s.step_time_s = 0.01;
  s.ttft_s = 0.05;
  s.itl_s = 0.01;
  s.e2e_latency_s = 2;
  b.extrapolated = true;
  apply_interval(interval_factors(b, false), true, s);
  EXPECT_NEAR(s.ttft_hi_s, 0.061070, 1e-6);  // 0.05 e^0.2
  EXPECT_NEAR(s.itl_lo_s, 0.009048, 1e-6);
  EXPECT_NEAR(s.e2e_latency_hi_s, 2.442806, 1e-6);
  EXPECT_EQ(s.extrapolated, 1);
  EvalResult oom;
  oom.status = Status::OutOfMemory;
  apply_interval(interval_factors(b, false), false, oom);
  EXPECT_TRUE(std::isnan(oom.step_time_lo_s));
  EXPECT_EQ(oom.extrapolated, 1);  // a property of the pair, on every row
}

TEST(PredictionInterval, BadFileNamesFileKeyAndValue) {
  const std::string path =
      test::write_temp("intervals-bad.yaml", "coverage: 1.5\ntraining: []\nserving: []\n");
  try {
    load_interval_spec(path);
    FAIL() << "coverage 1.5 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.key(), "coverage");
    EXPECT_EQ(e.value(), "1.5");
  }
  const std::string typo =
      test::write_temp("intervals-typo.yaml",
                       "training:\n  - table: t.csv\n    hardware: h\n    rows:\n"
                       "      - {label: a, stack: s, analytcal: 0.1}\nserving: []\n");
  try {
    load_interval_spec(typo);
    FAIL() << "unknown key accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), typo);
    EXPECT_NE(e.key().find("analytcal"), std::string::npos) << e.what();
  }
}

// The shipped configs/calibration/intervals.yaml read with the jobs: the demo (H100, NeMo
// 24.07: tables of that pair exist) gets the pooled interval; the A100 variants job (NeMo on
// an A100: no table ran that pair; its variants never measured) the pooled one widened by
// the measured penalty.
TEST(PredictionInterval, ShippedFileCoversTheDemoAndWidensUncoveredPairs) {
  const SweepSpec demo = load_sweep_spec(test::source_path("jobs/llama3-70b-256xh100.yaml"));
  ASSERT_EQ(demo.intervals.size(), 1u);
  const IntervalBand& d = demo.intervals[0];
  EXPECT_DOUBLE_EQ(d.coverage, 0.8);
  EXPECT_FALSE(d.extrapolated);
  ASSERT_TRUE(d.interval.analytical.valid());
  ASSERT_TRUE(d.interval.des.valid());
  const IntervalSpec file = load_interval_spec(demo.intervals_source.path);
  // An extrapolated band is the widest band a measured pair of the file resolves to (its own
  // when it has enough rows, else the pooled one), widened about its centre: find it by
  // resolving every (GPU, stack) pair the file holds.
  LogInterval widest = d.interval.analytical;
  for (const IntervalResidual& r : file.training) {
    const LogInterval b = resolve_band(file, r.hardware, true, r.stack, false).interval.analytical;
    if (b.relative_width() > widest.relative_width()) widest = b;
  }
  const SweepSpec variants =
      load_sweep_spec(test::source_path("jobs/a100-variants-llama3-70b.yaml"));
  ASSERT_GT(variants.intervals.size(), 1u);
  for (size_t h = 0; h < variants.intervals.size(); ++h) {
    const IntervalBand& v = variants.intervals[h];
    EXPECT_TRUE(v.extrapolated) << variants.hardware[h].name;
    EXPECT_GE(v.widening, 1.0);
    // The base A100 is measured, but not with NeMo: the stack-family penalty. Its variants
    // were never measured, and NeMo was (on the H100): the GPU type's.
    const double k = h == 0 ? stack_transfer_penalty(file) : gpu_transfer_penalty(file);
    EXPECT_DOUBLE_EQ(v.widening, k) << variants.hardware[h].name;
    EXPECT_NEAR(v.interval.analytical.hi, widened(widest, k).hi, 1e-12);
    EXPECT_NEAR(v.interval.analytical.lo, widened(widest, k).lo, 1e-12);
  }
}

}  // namespace
}  // namespace rapid
