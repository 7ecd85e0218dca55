// The serving distributions (docs/inference.md sec 5): the nearest-rank rule on samples
// small enough to rank by hand, a simulation whose requests are all alike (no spread), the
// closed form (no tails) and an overloaded replica (no steady state, no figures).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rapid/common/percentiles.hpp"
#include "rapid/inference/serving_analytical.hpp"
#include "rapid/inference/serving_des.hpp"
#include "rapid/inference/serving_memory.hpp"
#include "rapid/inference/step_model.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = n; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  return v;
}

TEST(NearestRank, PercentilesOfSamplesRankedByHand) {
  // 1..100: rank ceil(0.5 x 100) = 50, ceil(90) = 90, ceil(99) = 99.
  std::vector<double> hundred = one_to(100);
  Percentiles p = nearest_rank_percentiles(hundred);
  EXPECT_EQ(p.p50, 50.0);
  EXPECT_EQ(p.p90, 90.0);
  EXPECT_EQ(p.p99, 99.0);
  // 1..10: ceil(5) = 5, ceil(9) = 9, ceil(9.9) = 10 (the largest).
  std::vector<double> ten = one_to(10);
  p = nearest_rank_percentiles(ten);
  EXPECT_EQ(p.p50, 5.0);
  EXPECT_EQ(p.p90, 9.0);
  EXPECT_EQ(p.p99, 10.0);
  // 1..3: ceil(1.5) = 2, ceil(2.7) = 3, ceil(2.97) = 3.
  std::vector<double> three = one_to(3);
  p = nearest_rank_percentiles(three);
  EXPECT_EQ(p.p50, 2.0);
  EXPECT_EQ(p.p90, 3.0);
  EXPECT_EQ(p.p99, 3.0);
  // One value is every percentile; none has none.
  std::vector<double> one = {7.0}, none;
  p = nearest_rank_percentiles(one);
  EXPECT_EQ(p.p50, 7.0);
  EXPECT_EQ(p.p99, 7.0);
  EXPECT_TRUE(std::isnan(nearest_rank_percentiles(none).p50));
}

struct Case {
  HardwareSpec hw = test::shipped_hardware("a100-sxm4-80gb");
  ModelSpec m = test::shipped_model("llama2-7b");
  NetworkSpec net = test::shipped_network("dgx-a100-superpod");
  ServingSpec s;
  ParallelConfig par;
  Case() {
    test::fixed_lengths(s, 512, 128);
    s.num_requests = 16;
    par.tp = 2;
  }
};

TEST(ServingPercentiles, RequestsAllAlikeOneAtATimeHaveNoSpread) {
  // Concurrency 1, every prompt 512 tokens and every answer 128: each request meets an
  // empty replica, so every TTFT and every E2E is the same number and each of their
  // percentiles is it (the mean, up to the sum's rounding). The gaps grow with the
  // context (decode reads a longer KV cache), so the ITL percentiles are ordered and lie
  // within the gaps: p50 <= p90 <= p99.
  const Case k;
  const StepModel step(k.m, k.hw, k.net, k.s, k.par);
  const ServingMemory mem = serving_memory(k.m, k.hw, k.s, k.par);
  const ReplicaMetrics d = serving_simulate(step, k.s, mem, 1, 1.0);
  for (double p : {d.ttft_p50_s, d.ttft_p90_s, d.ttft_p99_s})
    EXPECT_NEAR(p, d.ttft_s, 1e-12 * d.ttft_s);
  for (double p : {d.e2e_p50_s, d.e2e_p90_s, d.e2e_p99_s})
    EXPECT_NEAR(p, d.e2e_latency_s, 1e-12 * d.e2e_latency_s);
  EXPECT_GT(d.itl_p50_s, 0.0);
  EXPECT_LE(d.itl_p50_s, d.itl_p90_s);
  EXPECT_LE(d.itl_p90_s, d.itl_p99_s);
}

TEST(ServingPercentiles, TheClosedFormHasNoTails) {
  // The closed form gives each request class one latency: it writes means, no percentiles.
  const Case k;
  const StepModel step(k.m, k.hw, k.net, k.s, k.par);
  const ServingMemory mem = serving_memory(k.m, k.hw, k.s, k.par);
  const ReplicaMetrics a = serving_closed_form(step, k.s, mem, 1, 8.0);
  EXPECT_FALSE(std::isnan(a.ttft_s));
  for (double p : {a.ttft_p50_s, a.ttft_p90_s, a.ttft_p99_s, a.itl_p50_s, a.itl_p90_s, a.itl_p99_s,
                   a.e2e_p50_s, a.e2e_p90_s, a.e2e_p99_s})
    EXPECT_TRUE(std::isnan(p));
}

TEST(ServingPercentiles, AnOverloadedReplicaHasNone) {
  // Arrivals at three times what the replica serves at its largest batch: no steady state,
  // so no latency figure, percentiles included (docs/inference.md sec 4).
  Case k;
  k.s.num_requests = 64;
  const StepModel step(k.m, k.hw, k.net, k.s, k.par);
  const ServingMemory mem = serving_memory(k.m, k.hw, k.s, k.par);
  const double capacity =
      serving_closed_form(step, k.s, mem, 1, static_cast<double>(mem.max_batch)).requests_per_s;
  ServingSpec open = k.s;
  open.load_kind = LoadKind::ArrivalRate;
  const ReplicaMetrics over = serving_simulate(step, open, mem, 1, 3.0 * capacity);
  ASSERT_TRUE(over.overloaded);
  for (double p :
       {over.ttft_p50_s, over.ttft_p99_s, over.itl_p90_s, over.e2e_p50_s, over.e2e_p99_s})
    EXPECT_TRUE(std::isnan(p));
}

}  // namespace
}  // namespace rapid
