// The DES engine's parts solved by hand: event order, max-min fair rates (Bertsekas &
// Gallager, "Data Networks", sec. 6.5.2), incremental recomputation, routes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "rapid/des/event_queue.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/flow_network.hpp"

namespace rapid::des {
namespace {

TEST(EventQueue, OrdersByTimeThenBySchedulingOrder) {
  EventQueue q;
  q.push(30, 0, 1);
  q.push(10, 0, 2);
  q.push(20, 0, 3);
  q.push(10, 0, 4);  // same time as target 2, scheduled later: after it
  q.push(10, 0, 5);
  std::vector<int32_t> order;
  while (!q.empty()) order.push_back(q.pop().target);
  EXPECT_EQ(order, (std::vector<int32_t>{2, 4, 5, 3, 1}));
}

TEST(EventQueue, ManyEventsComeOutSorted) {
  EventQueue q;
  uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    q.push(static_cast<SimTime>(x >> 44), 0, i);
  }
  Event prev = q.pop();
  while (!q.empty()) {
    const Event e = q.pop();
    EXPECT_TRUE(e.time > prev.time || (e.time == prev.time && e.seq > prev.seq));
    prev = e;
  }
}

TEST(EventQueue, InterleavedPushesAndPopsMatchASortedReference) {
  // A simulator's pattern: pop the earliest, schedule a few events at or after it (a
  // quarter at the same time, which must come out after the ones already due then). The
  // reference is every pending event sorted by (time, scheduling order), whose first one
  // must come out.
  EventQueue q;
  std::vector<Event> ref;
  uint64_t x = 987654321, seq = 0;
  auto push = [&](SimTime t) {
    q.push(t, 0, static_cast<int32_t>(seq));
    ref.push_back({t, seq++, 0, 0, 0});
  };
  for (int i = 0; i < 64; ++i) push(static_cast<SimTime>(i % 7) * 100);
  for (int step = 0; step < 20000 && !ref.empty(); ++step) {
    auto first = std::min_element(ref.begin(), ref.end(), [](const Event& a, const Event& b) {
      return a.time < b.time || (a.time == b.time && a.seq < b.seq);
    });
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(q.top().seq, first->seq);
    const Event e = q.pop();
    ASSERT_EQ(e.seq, first->seq);
    ASSERT_EQ(e.time, first->time);
    ref.erase(first);
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int n = static_cast<int>((x >> 60) % 3);  // 0, 1 or 2 new events
    for (int k = 0; k < n && step < 18000; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      push(e.time + static_cast<SimTime>((x >> 40) % 4 == 0 ? 0 : (x >> 50) % 500));
    }
  }
  EXPECT_TRUE(q.empty());
}

constexpr double kGB = 1e9;
constexpr SimTime kS = 1'000'000'000'000;  // ps per second

TEST(MaxMin, TwoFlowsOnOneLinkShareItThenTheSurvivorSpeedsUp) {
  // Link 10 GB/s; A carries 10 GB, B 20 GB, both from t = 0: 5 GB/s each, A drains at
  // 2 s; B then has 20 - 10 = 10 GB left at 10 GB/s: drains at 3 s.
  FlowNetwork n;
  const int32_t l = n.add_resource(10 * kGB);
  const ResourceUse u[] = {{l, 1}};
  const int32_t a = n.start(0, u, 10 * kGB, 0);
  const int32_t b = n.start(0, u, 20 * kGB, 1);
  EXPECT_DOUBLE_EQ(n.rate(a), 5 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(b), 5 * kGB);
  EXPECT_EQ(n.drain_time(a), 2 * kS);
  n.finish(2 * kS, a);
  EXPECT_DOUBLE_EQ(n.rate(b), 10 * kGB);
  EXPECT_EQ(n.drain_time(b), 3 * kS);
  ASSERT_EQ(n.changed().size(), 1u);  // only B was recomputed
  EXPECT_EQ(n.changed()[0], b);
  n.finish(3 * kS, b);
  // Each flow's bytes crossed the link once: 30 GB, busy from 0 to 3 s.
  EXPECT_DOUBLE_EQ(n.carried_bytes(l), 30 * kGB);
  EXPECT_EQ(n.busy_time(l, 4 * kS), 3 * kS);
  EXPECT_EQ(n.peak_flows(l), 2);
}

TEST(MaxMin, AFlowBottleneckedElsewhereLeavesTheRestToTheOther) {
  // X = 10 GB/s carries A and B; Y = 2 GB/s carries B only. Filling: Y saturates first at
  // level 2/1 = 2 (B = 2); X has 10 - 2 = 8 left for A alone: A = 8.
  FlowNetwork n;
  const int32_t x = n.add_resource(10 * kGB), y = n.add_resource(2 * kGB);
  const ResourceUse ua[] = {{x, 1}}, ub[] = {{x, 1}, {y, 1}};
  const int32_t a = n.start(0, ua, 1 * kGB, 0);
  const int32_t b = n.start(0, ub, 1 * kGB, 1);
  EXPECT_DOUBLE_EQ(n.rate(b), 2 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(a), 8 * kGB);
}

TEST(MaxMin, ParkingLot) {
  // Links L1, L2, L3 of 1, 2, 3 GB/s in a row; flow 0 crosses all three, flows 1, 2, 3
  // one link each. Levels: L1 1/2, L2 2/2, L3 3/2 -> L1 first: flows 0 and 1 = 0.5.
  // Then L2: (2 - 0.5)/1 = 1.5 for flow 2; L3: (3 - 0.5)/1 = 2.5 for flow 3.
  FlowNetwork n;
  const int32_t l1 = n.add_resource(1 * kGB), l2 = n.add_resource(2 * kGB),
                l3 = n.add_resource(3 * kGB);
  const ResourceUse u0[] = {{l1, 1}, {l2, 1}, {l3, 1}}, u1[] = {{l1, 1}}, u2[] = {{l2, 1}},
                    u3[] = {{l3, 1}};
  const int32_t f0 = n.start(0, u0, kGB, 0), f1 = n.start(0, u1, kGB, 1),
                f2 = n.start(0, u2, kGB, 2), f3 = n.start(0, u3, kGB, 3);
  EXPECT_DOUBLE_EQ(n.rate(f0), 0.5 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f1), 0.5 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f2), 1.5 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f3), 2.5 * kGB);
  // Flow 0 leaves (at 2 s): every short flow has its link alone.
  n.finish(2 * kS, f0);
  EXPECT_DOUBLE_EQ(n.rate(f1), 1 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f2), 2 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f3), 3 * kGB);
}

TEST(MaxMin, ABundleOfTwoFlowsGetsTwoShares) {
  // A bundle with 2 member flows on a 9 GB/s link and a single flow: 3 flows, 3 GB/s each;
  // the bundle's load is 6 GB/s.
  FlowNetwork n;
  const int32_t l = n.add_resource(9 * kGB);
  const ResourceUse two[] = {{l, 2}}, one[] = {{l, 1}};
  const int32_t b = n.start(0, two, kGB, 0);
  const int32_t f = n.start(0, one, kGB, 1);
  EXPECT_DOUBLE_EQ(n.rate(b), 3 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(f), 3 * kGB);
}

TEST(MaxMin, OnlyTheAffectedComponentIsRecomputed) {
  FlowNetwork n;
  const int32_t l1 = n.add_resource(kGB), l2 = n.add_resource(kGB);
  const ResourceUse u1[] = {{l1, 1}}, u2[] = {{l2, 1}};
  const int32_t a = n.start(0, u1, kGB, 0);
  const uint32_t va = n.version(a);
  n.start(kS / 2, u2, kGB, 1);  // another link: A untouched
  EXPECT_EQ(n.version(a), va);
  EXPECT_EQ(n.drain_time(a), kS);
}

TEST(MaxMin, LocalUpdatesGiveTheRatesOfAFullSolve) {
  // Two implementations on the same input: one network takes the local paths (an arrival
  // that only takes what its links have left, a departure from unsaturated links), the
  // other re-solves the component by progressive filling on every change. Random bundles
  // of 1-3 links with 1-2 flows each on 6 links of 10-40 GB/s (some arrivals saturate a
  // link, some do not), started and drained in event order; every active bundle's rate
  // must agree to rounding and its drain to a picosecond per second of simulated time.
  FlowNetwork fast, full;
  full.set_local_updates(false);
  for (double c : {10.0, 20.0, 40.0, 10.0, 25.0, 40.0}) {
    fast.add_resource(c * kGB);
    full.add_resource(c * kGB);
  }
  uint64_t x = 42;
  auto next = [&](uint64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % n;
  };
  std::vector<int32_t> active;
  SimTime now = 0;
  for (int step = 0; step < 3000; ++step) {
    if (active.size() < 3 || (active.size() < 12 && next(2) == 0)) {
      std::vector<ResourceUse> uses;
      const uint64_t n = 1 + next(3), first = next(6);
      for (uint64_t k = 0; k < n; ++k)
        uses.push_back(
            {static_cast<int32_t>((first + 2 * k) % 6), 1 + static_cast<int32_t>(next(2))});
      const double bytes = (1 + static_cast<double>(next(100))) * 0.01 * kGB;
      const int32_t a = fast.start(now, uses, bytes, 0);
      ASSERT_EQ(full.start(now, uses, bytes, 0), a);
      active.push_back(a);
    } else {
      auto first = std::min_element(active.begin(), active.end(), [&](int32_t a, int32_t b) {
        return fast.drain_time(a) < fast.drain_time(b);
      });
      now = fast.drain_time(*first);
      fast.finish(now, *first);
      full.finish(now, *first);
      active.erase(first);
    }
    for (int32_t b : active) {
      ASSERT_NEAR(fast.rate(b), full.rate(b), 1e-9 * full.rate(b)) << "step " << step;
      ASSERT_NEAR(static_cast<double>(fast.drain_time(b)), static_cast<double>(full.drain_time(b)),
                  2 + static_cast<double>(now) / kS)
          << "step " << step;
    }
  }
  // The local path was taken on one side only.
  EXPECT_GT(fast.local_updates(), 0);
  EXPECT_EQ(full.local_updates(), 0);
  std::printf("local updates %lld of %lld arrivals and departures\n",
              static_cast<long long>(fast.local_updates()), static_cast<long long>(fast.solves()));
}

NetworkSpec small_fat_tree() {
  NetworkSpec net;
  net.topology = Topology::FatTree;
  net.gpus_per_node = 4;
  net.nics_per_node = 4;
  net.leaf_bandwidth_Bps = 50e9;
  net.spine_bandwidth_Bps = 50e9;
  net.nodes_per_leaf = 2;
  net.oversubscription = 2;
  net.network_efficiency = 1.0;
  net.link_latency_s = 1e-6;
  net.nvlink_latency_s = 0.5e-6;
  return net;
}

TEST(Fabric, NvSwitchNicsLeavesAndSpines) {
  NetworkSpec net = small_fat_tree();
  Fabric t;
  ASSERT_TRUE(t.reset(net, 360e9, 16));  // 4 nodes, 2 leaves
  // Leaf: 2 nodes x 4 NICs = 8 downlinks of 50 GB/s; uplinks carry 8 x 50 / 2 = 200 GB/s
  // as U = 200 / 50 = 4 links of 50 GB/s.
  EXPECT_EQ(t.spines(), 4);
  std::vector<int32_t> r;
  t.route(1, 2, r);  // same node: GPU -> NVSwitch -> GPU
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.link(r[0]).kind, LinkKind::GpuToSwitch);
  EXPECT_DOUBLE_EQ(t.link(r[0]).capacity_Bps, 360e9);
  r.clear();
  t.route(1, 5, r);  // nodes 0 and 1, one leaf: NIC -> leaf -> NIC
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.link(r[0]).kind, LinkKind::NicToLeaf);
  EXPECT_EQ(t.link(r[1]).kind, LinkKind::LeafToNic);
  r.clear();
  t.route(1, 9, r);  // node 0 (leaf 0) -> node 2 (leaf 1): through a spine
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.link(r[1]).kind, LinkKind::LeafToSpine);
  EXPECT_EQ(t.link(r[2]).kind, LinkKind::SpineToLeaf);
  EXPECT_EQ(t.link(r[1]).b, t.link(r[2]).a);  // the same spine
  EXPECT_DOUBLE_EQ(t.link(r[1]).capacity_Bps, 50e9);
  // ECMP is a deterministic function of (source, destination).
  std::vector<int32_t> again;
  t.route(1, 9, again);
  EXPECT_EQ(r, again);
  EXPECT_EQ(t.link_name(r[1]), "leaf 0 -> spine " + std::to_string(t.link(r[1]).b));
}

TEST(Fabric, RailOptimizedPutsEachRailOnItsLeaf) {
  NetworkSpec net = small_fat_tree();
  net.topology = Topology::RailOptimized;
  Fabric t;
  ASSERT_TRUE(t.reset(net, 360e9, 16));
  std::vector<int32_t> r;
  t.route(1, 5, r);  // GPU 1 of nodes 0 and 1: rail 1, leaf 1 of group 0
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.link(r[0]).b, 1);
  r.clear();
  t.route(1, 13, r);  // rail 1 of node 3 (group 1): leaf 4 + 1 = 5, through a spine
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.link(r[3]).b, 5);
  // Another rail (GPU 1 of node 0 -> GPU 2 of node 1): PXN, over NVLink to GPU 2 of node 0,
  // then rail 2's leaf.
  r.clear();
  t.route(1, 6, r);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.link_name(r[0]), "gpu 1 -> nvswitch 0");
  EXPECT_EQ(t.link_name(r[1]), "nvswitch 0 -> gpu 2");
  EXPECT_EQ(t.link_name(r[2]), "node 0 nic 2 -> leaf 2");
  EXPECT_EQ(t.link_name(r[3]), "leaf 2 -> node 1 nic 2");
}

TEST(Fabric, TorusRoutesDimensionOrderTheShortWayRound) {
  NetworkSpec net = small_fat_tree();
  net.topology = Topology::Torus2D;
  net.gpus_per_node = 1;
  net.nics_per_node = 1;
  net.torus_dims = {4, 3};
  Fabric t;
  ASSERT_TRUE(t.reset(net, 360e9, 12));
  // Node 0 = (0, 0) to node 7 = (3, 1): x from 0 to 3 is one hop the - way (wrap), then y
  // one hop +: NIC, x-, y+, NIC.
  std::vector<int32_t> r;
  t.route(0, 7, r);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.link_name(r[1]), "node 0 -> torus x-");
  EXPECT_EQ(t.link_name(r[2]), "node 3 -> torus y+");
  // Each node splits its NIC bandwidth over its 4 torus links: 50 / 4 GB/s each.
  EXPECT_DOUBLE_EQ(t.link(r[1]).capacity_Bps, 12.5e9);
  // A grid smaller than the job is refused.
  net.torus_dims = {2, 2};
  Fabric small;
  EXPECT_FALSE(small.reset(net, 360e9, 12));
}

}  // namespace
}  // namespace rapid::des
