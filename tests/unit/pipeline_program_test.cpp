// The compiled walk (pipeline_program.hpp) against the reference walk simulate_pipeline()
// on random shapes and random, unequal pass times: the same makespan, busy and end times,
// bit for bit (the program does the walk's additions and maxima in its order on each
// device).
#include "rapid/analytical/pipeline_program.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace rapid {
namespace {

void expect_same(const PipelineTimes& a, const PipelineTimes& b, const char* what) {
  EXPECT_EQ(a.makespan, b.makespan) << what;
  EXPECT_EQ(a.busy, b.busy) << what;
  EXPECT_EQ(a.end, b.end) << what;
}

TEST(PipelineProgram, EqualsTheWalkOnRandomInputs) {
  std::mt19937_64 rng(20240613);
  std::uniform_int_distribution<int64_t> pick_pp(1, 12), pick_vpp(1, 5), pick_groups(1, 6);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 600; ++trial) {
    PipelineInput in;
    in.pp = pick_pp(rng);
    in.vpp = pick_vpp(rng);
    // Interleaving needs m divisible by pp (workload/schedule.hpp); 1F1B takes any m.
    in.m = in.vpp > 1 ? in.pp * pick_groups(rng) : pick_groups(rng) * 3 + trial % 3;
    const size_t n = static_cast<size_t>(in.pp * in.vpp);
    // Times spread over three orders of magnitude, some devices much slower, some passes
    // free, transfers free or not.
    const double spread = trial % 4 == 0 ? 0.0 : 3.0;
    in.fwd.resize(n);
    in.bwd.resize(n);
    for (size_t k = 0; k < n; ++k) {
      in.fwd[k] = trial % 7 == 3 && k % 3 == 0 ? 0.0 : 1e-3 * std::pow(10.0, spread * unit(rng));
      in.bwd[k] = 1e-3 * std::pow(10.0, spread * unit(rng)) + in.fwd[k];
    }
    in.p2p_s = trial % 3 == 0 ? 0.0 : 1e-4 * unit(rng);
    ASSERT_TRUE(PipelineProgram::runnable(in));
    PipelineTimes program;
    PipelineProgram(in.pp, in.vpp, in.m).run(in, program);
    const PipelineTimes walk = simulate_pipeline(in);
    expect_same(program, walk, "fresh program");
    // The thread's cached program, and pipeline_timing's walked case, agree too.
    PipelineProgram::of(in.pp, in.vpp, in.m).run(in, program);
    expect_same(program, walk, "cached program");
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "pp " << in.pp << " vpp " << in.vpp << " m " << in.m;
      return;
    }
  }
}

TEST(PipelineProgram, PipelineTimingWalksThroughIt) {
  // pp 4, vpp 3, m 8, device 2 twice as slow: not alike, walked.
  PipelineInput in;
  in.pp = 4;
  in.vpp = 3;
  in.m = 8;
  in.p2p_s = 0.01;
  in.fwd.assign(12, 1.0);
  in.bwd.assign(12, 2.0);
  for (size_t k = 6; k < 9; ++k) in.fwd[k] = 2.0, in.bwd[k] = 4.0;
  expect_same(pipeline_timing(in), simulate_pipeline(in), "pipeline_timing");
}

// Random interleaved shapes of many rounds, unequal devices: the short program extended
// over its repeating rounds gives the full walk's makespan, busy and end times within
// rounding (relative 1e-10), and it does extend (the steady state repeats within
// kShortGroups rounds) on most of them.
TEST(PipelineProgram, ExtendedShortWalkEqualsTheFullWalk) {
  std::mt19937_64 rng(20261202);
  std::uniform_int_distribution<int64_t> pick_pp(2, 10), pick_vpp(2, 5), pick_groups(6, 30);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int extended = 0;
  const int trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    PipelineInput in;
    in.pp = pick_pp(rng);
    in.vpp = pick_vpp(rng);
    in.m = in.pp * pick_groups(rng);
    const size_t n = static_cast<size_t>(in.pp * in.vpp);
    const double spread = trial % 2 == 0 ? 0.3 : 1.0;  // devices within 2x, or 10x
    in.fwd.resize(n);
    in.bwd.resize(n);
    for (size_t k = 0; k < n; ++k) {
      in.fwd[k] = 1e-3 * std::pow(10.0, spread * unit(rng));
      in.bwd[k] = 2.0 * in.fwd[k] * (0.8 + 0.4 * unit(rng));
    }
    in.p2p_s = trial % 3 == 0 ? 0.0 : 1e-4 * unit(rng);
    const PipelineTimes walk = simulate_pipeline(in);
    PipelineTimes out;
    const PipelineProgram& short_program =
        PipelineProgram::of(in.pp, in.vpp, PipelineProgram::kShortGroups * in.pp);
    if (short_program.extend(in, out)) {
      ++extended;
      EXPECT_NEAR(out.makespan, walk.makespan, 1e-10 * walk.makespan);
      for (size_t j = 0; j < walk.busy.size(); ++j) {
        EXPECT_NEAR(out.busy[j], walk.busy[j], 1e-10 * walk.busy[j]);
        EXPECT_NEAR(out.end[j], walk.end[j], 1e-10 * walk.end[j]);
      }
    }
    PipelineProgram::walk(in, out);  // extended or not: the walk's times
    EXPECT_NEAR(out.makespan, walk.makespan, 1e-10 * walk.makespan);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "pp " << in.pp << " vpp " << in.vpp << " m " << in.m;
      return;
    }
  }
  std::printf("extended %d of %d\n", extended, trials);
  EXPECT_GT(extended, trials / 2);
}

// Equal devices, no transfers: every device busy m vpp (f + b), the step that plus the
// bubble (pp - 1)(f + b) (Narayanan et al. 2021, sec. 2.2.1: (pp - 1) / vpp of a stage's
// vpp (f + b) per micro-batch), here pp 4, vpp 2, m 400 (100 rounds), f 1, b 2:
// 400 x 2 x 3 + 3 x 3 = 2409, reached by extending 4 rounds by 96.
TEST(PipelineProgram, ExtendsEqualDevicesToTheBubbleFormula) {
  PipelineInput in;
  in.pp = 4;
  in.vpp = 2;
  in.m = 400;
  in.fwd.assign(8, 1.0);
  in.bwd.assign(8, 2.0);
  PipelineTimes out;
  ASSERT_TRUE(PipelineProgram::of(4, 2, PipelineProgram::kShortGroups * 4).extend(in, out));
  EXPECT_DOUBLE_EQ(out.makespan, 2409.0);
  for (double busy : out.busy) EXPECT_DOUBLE_EQ(busy, 2400.0);
}

TEST(PipelineProgram, CacheKeepsSeveralShapes) {
  // Alternating between shapes returns the program of each, not a stale one.
  for (int round = 0; round < 3; ++round)
    for (int64_t pp : {2, 3, 4})
      for (int64_t vpp : {2, 3})
        EXPECT_TRUE(PipelineProgram::of(pp, vpp, 2 * pp).is(pp, vpp, 2 * pp));
}

TEST(PipelineProgram, NotRunnableOnNegativeOrNonFiniteTimes) {
  PipelineInput in;
  in.pp = 2;
  in.vpp = 2;
  in.m = 2;
  in.fwd.assign(4, 1.0);
  in.bwd.assign(4, 1.0);
  EXPECT_TRUE(PipelineProgram::runnable(in));
  in.bwd[1] = std::nan("");
  EXPECT_FALSE(PipelineProgram::runnable(in));
  in.bwd[1] = -1.0;
  EXPECT_FALSE(PipelineProgram::runnable(in));
}

}  // namespace
}  // namespace rapid
