// FlowNetwork::solve()'s progressive filling with its levels in a heap (issue 35):
// systems solved by hand where the order of the levels changes as bundles freeze, and
// random systems against a textbook progressive filling (Bertsekas & Gallager, "Data
// Networks", 2nd ed., sec. 6.5.2) that scans every resource for the lowest level.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "rapid/des/flow_network.hpp"

namespace rapid::des {
namespace {

constexpr double kGB = 1e9;

TEST(FlowNetworkSolve, AStaleLevelIsNotTheNextToSaturate) {
  // L1 = 6 carries a, b, c; L2 = 10 carries c, d; L5 = 9 carries b twice and e; d alone
  // crosses L3 = 3 and L4 = 8, e alone L6 = 4. Levels (residual / unfrozen flows): L1 6/3
  // = 2, L2 10/2 = 5, L3 3, L5 9/3 = 3, L6 4, L4 8.
  //  1. L1 at 2: a = b = c = 2. L2 has 10 - 2 = 8 left for d alone (level 8); L5 has
  //     9 - 2 x 2 = 5 for e alone (level 5: its level 3 is stale).
  //  2. L3 at 3 (d's lowest link of its own): d = 3.
  //  3. L6 at 4 (e's own link, below L5's 5): e = 4, not 3.
  FlowNetwork n;
  n.set_local_updates(false);  // every rate from solve()
  const int32_t l1 = n.add_resource(6 * kGB), l2 = n.add_resource(10 * kGB),
                l3 = n.add_resource(3 * kGB), l4 = n.add_resource(8 * kGB),
                l5 = n.add_resource(9 * kGB), l6 = n.add_resource(4 * kGB);
  const ResourceUse ua[] = {{l1, 1}}, ub[] = {{l1, 1}, {l5, 2}}, uc[] = {{l1, 1}, {l2, 1}},
                    ud[] = {{l2, 1}, {l3, 1}, {l4, 1}}, ue[] = {{l5, 1}, {l6, 1}};
  const int32_t a = n.add(0, ua, kGB, 0), b = n.add(0, ub, 10 * kGB, 1),
                c = n.add(0, uc, 10 * kGB, 2), d = n.add(0, ud, 10 * kGB, 3),
                e = n.add(0, ue, 10 * kGB, 4);
  n.commit(0);
  EXPECT_DOUBLE_EQ(n.rate(a), 2 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(b), 2 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(c), 2 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(d), 3 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(e), 4 * kGB);
  EXPECT_EQ(n.changed().size(), 5u);
  EXPECT_EQ(n.drain_time(a), 500'000'000'000);  // 1 GB at 2 GB/s
  // a leaves at 0.5 s: L1 has 6 for b and c (level 3), L5 9 / 3 = 3 as well, L3 3. Whichever
  // of the three saturates first, b = c = d = e = 3 (L1 first: L5 has 9 - 2 x 3 = 3 left for
  // e, below L6's 4; L5 first: L1 has 6 - 3 for c). c then has 10 - 0.5 x 2 = 9 GB left: it
  // drains 3 s later.
  n.finish(500'000'000'000, a);
  EXPECT_DOUBLE_EQ(n.rate(b), 3 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(c), 3 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(d), 3 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(e), 3 * kGB);
  EXPECT_EQ(n.drain_time(c), 3'500'000'000'000);
}

TEST(FlowNetworkSolve, ABundleBottleneckedOnItsOwnLinkBesideSharedOnes) {
  // X = 10 carries f (2 flows) and g; f alone crosses P = 2 (its bottleneck: 2 / 2 = 1 per
  // flow) and Q = 1.5 x 2 (level 1.5, never reached). g gets 10 - 2 x 1 = 8.
  FlowNetwork n;
  n.set_local_updates(false);
  const int32_t x = n.add_resource(10 * kGB), p = n.add_resource(2 * kGB),
                q = n.add_resource(3 * kGB);
  const ResourceUse uf[] = {{x, 2}, {p, 2}, {q, 2}}, ug[] = {{x, 1}};
  const int32_t f = n.add(0, uf, kGB, 0), g = n.add(0, ug, kGB, 1);
  n.commit(0);
  EXPECT_DOUBLE_EQ(n.rate(f), 1 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(g), 8 * kGB);
}

// Textbook progressive filling over every active bundle: each round scans all resources
// for the lowest residual / unfrozen flows and freezes the bundles crossing it.
std::vector<double> reference_rates(const std::vector<double>& cap,
                                    const std::vector<std::vector<ResourceUse>>& uses) {
  std::vector<double> residual = cap, rate(uses.size(), 0);
  std::vector<int32_t> weight(cap.size(), 0);
  std::vector<bool> frozen(uses.size(), false);
  for (const auto& u : uses)
    for (const ResourceUse& x : u) weight[static_cast<size_t>(x.res)] += x.mult;
  for (size_t left = uses.size(); left > 0;) {
    double level = std::numeric_limits<double>::infinity();
    size_t at = 0;
    for (size_t r = 0; r < cap.size(); ++r)
      if (weight[r] > 0 && std::max(residual[r], 0.0) / weight[r] < level) {
        level = std::max(residual[r], 0.0) / weight[r];
        at = r;
      }
    for (size_t b = 0; b < uses.size(); ++b) {
      if (frozen[b]) continue;
      const bool crosses = std::any_of(uses[b].begin(), uses[b].end(), [&](const ResourceUse& x) {
        return static_cast<size_t>(x.res) == at;
      });
      if (!crosses) continue;
      frozen[b] = true;
      rate[b] = level;
      --left;
      for (const ResourceUse& x : uses[b]) {
        residual[static_cast<size_t>(x.res)] -= level * x.mult;
        weight[static_cast<size_t>(x.res)] -= x.mult;
      }
    }
  }
  return rate;
}

TEST(FlowNetworkSolve, RandomSystemsGiveTheRatesOfAScanOfEveryResource) {
  // 3,000 random arrivals and departures of bundles of 1-5 links (1-3 flows each) on 16
  // links of 10-80 GB/s, up to 40 at once: components of many bundles, shared and private
  // links, levels that change order as bundles freeze. Every active rate must be the
  // reference's to rounding, with the local updates on and off.
  for (const bool local : {false, true}) {
    FlowNetwork n;
    n.set_local_updates(local);
    std::vector<double> cap;
    uint64_t x = 7;
    auto next = [&](uint64_t m) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return (x >> 33) % m;
    };
    for (int r = 0; r < 16; ++r) {
      cap.push_back((10 + 10 * static_cast<double>(next(8))) * kGB);
      n.add_resource(cap.back());
    }
    std::vector<int32_t> active;
    std::vector<std::vector<ResourceUse>> active_uses;
    SimTime now = 0;
    for (int step = 0; step < 3000; ++step) {
      if (active.size() < 4 || (active.size() < 40 && next(2) == 0)) {
        std::vector<ResourceUse> uses;
        const uint64_t k = 1 + next(5), first = next(16), stride = 1 + next(5);
        for (uint64_t i = 0; i < k; ++i) {
          const auto res = static_cast<int32_t>((first + stride * i) % 16);
          if (std::none_of(uses.begin(), uses.end(),
                           [&](const ResourceUse& u) { return u.res == res; }))
            uses.push_back({res, 1 + static_cast<int32_t>(next(3))});
        }
        active.push_back(n.start(now, uses, (1 + static_cast<double>(next(100))) * 0.01 * kGB, 0));
        active_uses.push_back(uses);
      } else {
        const auto first = std::min_element(
            active.begin(), active.end(),
            [&](int32_t a, int32_t b) { return n.drain_time(a) < n.drain_time(b); });
        now = n.drain_time(*first);
        n.finish(now, *first);
        active_uses.erase(active_uses.begin() + (first - active.begin()));
        active.erase(first);
      }
      const std::vector<double> want = reference_rates(cap, active_uses);
      for (size_t i = 0; i < active.size(); ++i)
        ASSERT_NEAR(n.rate(active[i]), want[i], 1e-9 * want[i]) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace rapid::des
