// Link faults (docs/faults.md) derived by hand: a degraded link slows exactly the flows
// through it, a failed uplink moves its flows to another spine, a GPU whose only NIC link
// failed makes the point NoRoute, go-back-N goodput and timeout, timed capacity changes,
// parse errors, and the closed form's network tiers.
#include "rapid/spec/link_fault.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "rapid/analytical/fault_network.hpp"
#include "rapid/common/error.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/des/des_evaluator.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/flow_network.hpp"
#include "rapid/spec/go_back_n.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

using des::Fabric;
using des::FlowNetwork;
using des::ResourceUse;
using des::SimTime;

constexpr double kGB = 1e9;
constexpr SimTime kS = 1'000'000'000'000;  // ps per second

// 4 GPUs and 4 NICs of 50 GB/s per node, 2 nodes per leaf, oversubscription 2: a leaf's
// 8 downlinks carry 400 GB/s, its uplinks 200 GB/s as U = 200 / 50 = 4 links of 50 GB/s,
// one to each of 4 spines. Efficiency 1 and no latency: capacities are the round numbers.
NetworkSpec small_fat_tree(Routing routing = Routing::Ecmp) {
  NetworkSpec net;
  net.topology = Topology::FatTree;
  net.routing = routing;
  net.gpus_per_node = 4;
  net.nics_per_node = 4;
  net.leaf_bandwidth_Bps = 50 * kGB;
  net.spine_bandwidth_Bps = 50 * kGB;
  net.nodes_per_leaf = 2;
  net.oversubscription = 2;
  net.network_efficiency = 1.0;
  net.link_latency_s = 0;
  return net;
}

LinkFault nic_fault(int64_t gpu, double health) {
  LinkFault f;
  f.selector = LinkSelector::Nic;
  f.index = gpu;
  f.health = health;
  return f;
}

// One resource per link of the routes, each at its fabric capacity; starts one bundle of
// `bytes` per route at t = 0 and returns their drain times.
std::vector<SimTime> drain_times(const Fabric& t, const std::vector<std::vector<int32_t>>& routes,
                                 double bytes) {
  FlowNetwork n;
  for (int32_t l = 0; l < t.num_links(); ++l) n.add_resource(t.link(l).capacity_Bps);
  std::vector<int32_t> b;
  for (const auto& r : routes) {
    std::vector<ResourceUse> uses;
    for (int32_t l : r) uses.push_back({l, 1});
    b.push_back(n.add(0, uses, bytes, 0));
  }
  n.commit(0);
  std::vector<SimTime> out;
  for (int32_t x : b) out.push_back(n.drain_time(x));
  return out;
}

TEST(LinkFaultFabric, ADegradedNicSlowsExactlyTheFlowsThroughIt) {
  // GPU 1 -> GPU 5 and GPU 2 -> GPU 6 (nodes 0 -> 1, one leaf): NIC -> leaf -> NIC each,
  // on different NICs. GPU 1's NIC link at health 0.5: 50 x 0.5 = 25 GB/s, so its 10 GB
  // take 10 / 25 = 0.4 s; the other flow keeps 50 GB/s: 10 / 50 = 0.2 s.
  const std::vector<LinkFault> faults = {nic_fault(1, 0.5)};
  Fabric t;
  ASSERT_TRUE(t.reset(small_fat_tree(), 360 * kGB, 16, faults));
  std::vector<int32_t> a, b;
  ASSERT_TRUE(t.route(1, 5, a));
  ASSERT_TRUE(t.route(2, 6, b));
  EXPECT_DOUBLE_EQ(t.link(a[0]).capacity_Bps, 25 * kGB);
  EXPECT_DOUBLE_EQ(t.link(a[0]).nominal_Bps, 50 * kGB);
  EXPECT_EQ(t.link(a[0]).faults, 1u);
  EXPECT_EQ(t.link(b[0]).faults, 0u);
  const auto d = drain_times(t, {a, b}, 10 * kGB);
  EXPECT_EQ(d[0], 4 * kS / 10);
  EXPECT_EQ(d[1], 2 * kS / 10);
}

TEST(LinkFaultFabric, AFailedUplinkMovesOnlyItsFlowsToAnotherSpine) {
  // Destination-mod-k: the spine is the destination's position under its leaf (nic % 8)
  // mod 4. GPU 1 -> GPU 9 (node 2 NIC 1, position 1): spine 1; GPU 2 -> GPU 10: spine 2.
  // Healthy, each flow has its own uplink of 50 GB/s: 10 GB in 0.2 s.
  Fabric healthy;
  ASSERT_TRUE(healthy.reset(small_fat_tree(Routing::DestinationModK), 360 * kGB, 16));
  std::vector<int32_t> a, b;
  ASSERT_TRUE(healthy.route(1, 9, a));
  ASSERT_TRUE(healthy.route(2, 10, b));
  EXPECT_EQ(healthy.link_name(a[1]), "leaf 0 -> spine 1");
  EXPECT_EQ(healthy.link_name(b[1]), "leaf 0 -> spine 2");
  auto d = drain_times(healthy, {a, b}, 10 * kGB);
  EXPECT_EQ(d[0], 2 * kS / 10);
  EXPECT_EQ(d[1], 2 * kS / 10);
  // Leaf 0 <-> spine 1 failed: the alive spines of the pair are {0, 2, 3}; the first flow
  // takes alive[position 1 mod 3] = spine 2, the second keeps spine 2. Both now share the
  // 50 GB/s uplink: 25 GB/s each, 10 GB in 0.4 s.
  LinkFault f;
  f.selector = LinkSelector::LeafSpine;
  f.index = 0;
  f.index2 = 1;
  f.failed = true;
  Fabric t;
  ASSERT_TRUE(
      t.reset(small_fat_tree(Routing::DestinationModK), 360 * kGB, 16, std::vector<LinkFault>{f}));
  a.clear();
  b.clear();
  ASSERT_TRUE(t.route(1, 9, a));
  ASSERT_TRUE(t.route(2, 10, b));
  EXPECT_EQ(t.link_name(a[1]), "leaf 0 -> spine 2");
  EXPECT_EQ(t.link_name(a[2]), "spine 2 -> leaf 1");
  EXPECT_EQ(a[1], b[1]);
  d = drain_times(t, {a, b}, 10 * kGB);
  EXPECT_EQ(d[0], 4 * kS / 10);
  EXPECT_EQ(d[1], 4 * kS / 10);
  // GPU 0 -> GPU 8 (position 0, spine 0) never used the failed link: it does not move.
  std::vector<int32_t> c;
  ASSERT_TRUE(t.route(0, 8, c));
  EXPECT_EQ(t.link_name(c[1]), "leaf 0 -> spine 0");
}

TEST(LinkFaultFabric, AFailedNicLinkLeavesNoRoute) {
  LinkFault f = nic_fault(3, 1.0);
  f.failed = true;
  Fabric t;
  ASSERT_TRUE(t.reset(small_fat_tree(), 360 * kGB, 16, std::vector<LinkFault>{f}));
  std::vector<int32_t> r;
  EXPECT_FALSE(t.route(3, 7, r));
  EXPECT_EQ(t.route_failure(), "node 0 nic 3 -> leaf 0 failed");
  r.clear();
  EXPECT_TRUE(t.route(3, 2, r));  // NVLink inside the node is alive
}

TEST(LinkFaultFabric, ATimedFaultChangesTheCapacityOnlyWhileInEffect) {
  // Health 0.5 from 1 s for 0.5 s: 50 GB/s before 1 s, 25 in [1, 1.5), 50 after.
  LinkFault f = nic_fault(1, 0.5);
  f.start_s = 1.0;
  f.duration_s = 0.5;
  Fabric t;
  ASSERT_TRUE(t.reset(small_fat_tree(), 360 * kGB, 16, std::vector<LinkFault>{f}));
  std::vector<int32_t> r;
  ASSERT_TRUE(t.route(1, 5, r));
  EXPECT_DOUBLE_EQ(t.link(r[0]).capacity_Bps, 50 * kGB);
  EXPECT_DOUBLE_EQ(t.capacity_at(r[0], 1.2), 25 * kGB);
  EXPECT_DOUBLE_EQ(t.capacity_at(r[0], 1.6), 50 * kGB);
  EXPECT_EQ(t.fault_times(), (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(t.timed_faults(), 1u);
}

TEST(LinkFaultFlowNetwork, ACapacityChangeReSolvesTheRates) {
  // 10 GB over a 10 GB/s link; at 0.5 s the link drops to 5 GB/s: 5 GB moved, the other 5
  // GB at 5 GB/s take 1 s more: drained at 1.5 s.
  FlowNetwork n;
  const int32_t l = n.add_resource(10 * kGB);
  const ResourceUse u[] = {{l, 1}};
  const int32_t b = n.start(0, u, 10 * kGB, 0);
  EXPECT_EQ(n.drain_time(b), kS);
  n.set_capacity(kS / 2, l, 5 * kGB);
  EXPECT_DOUBLE_EQ(n.rate(b), 5 * kGB);
  EXPECT_EQ(n.drain_time(b), 3 * kS / 2);
  ASSERT_EQ(n.changed().size(), 1u);
}

TEST(LinkFaultGoBackN, GoodputAndTimeoutAtAGivenLossAndRtt) {
  // 50 GB/s, RTT 8 us: bandwidth-delay product 50e9 x 8e-6 = 400,000 B = 97.66 packets of
  // 4096 B: W = 98. At p = 1e-3: goodput = (1 - 0.001) / (1 + 97 x 0.001) = 0.999 / 1.097
  // = 0.91067. RC timeout with NCCL_IB_TIMEOUT = 20: 4.096 us x 2^20 = 4.294967296 s; the
  // expected wait per message 1e-3 x that = 4.294967296 ms.
  const GoBackN g = go_back_n(1e-3, 50 * kGB, 8e-6);
  EXPECT_EQ(g.window_packets, 98);
  EXPECT_NEAR(g.goodput, 0.999 / 1.097, 1e-15);
  EXPECT_NEAR(g.goodput, 0.91067, 1e-5);
  EXPECT_DOUBLE_EQ(g.timeout_s, 4.294967296);
  EXPECT_DOUBLE_EQ(g.tail_delay_s, 4.294967296e-3);
  // No loss: full goodput, no wait; a window of one packet (no RTT): goodput 1 - p.
  EXPECT_EQ(go_back_n(0.0, 50 * kGB, 8e-6).goodput, 1.0);
  EXPECT_DOUBLE_EQ(go_back_n(0.01, 50 * kGB, 0.0).goodput, 0.99);
}

// --- Parsing ---

std::string parse_error(const std::string& yaml) {
  try {
    parse_link_faults(YAML::Load(yaml), "job.yaml", "nonideal.link_faults");
  } catch (const InputError& e) {
    return e.key() + " = " + e.value() + " : " + e.expected();
  }
  return "no error";
}

TEST(LinkFaultParse, ReadsEveryForm) {
  const auto f = parse_link_faults(YAML::Load(R"(
- {link: nic, gpu: 17, health: 0.5}
- {link: leaf_spine, leaf: 0, spine: 3, failed: true}
- {link: most_loaded, health: 0.25}
- {link: nic_up, gpu: 3, loss_rate: 1e-4, transport: infiniband, start: 2s, duration: 500ms}
)"),
                                   "job.yaml", "nonideal.link_faults");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].selector, LinkSelector::Nic);
  EXPECT_EQ(f[0].index, 17);
  EXPECT_EQ(f[0].health, 0.5);
  EXPECT_TRUE(f[0].permanent());
  EXPECT_EQ(f[1].selector, LinkSelector::LeafSpine);
  EXPECT_EQ(f[1].index2, 3);
  EXPECT_TRUE(f[1].failed);
  EXPECT_EQ(f[2].selector, LinkSelector::MostLoaded);
  EXPECT_EQ(f[3].loss_rate, 1e-4);
  EXPECT_EQ(f[3].transport, Transport::InfiniBand);
  EXPECT_EQ(f[3].start_s, 2.0);
  EXPECT_EQ(f[3].duration_s, 0.5);
  EXPECT_FALSE(f[3].permanent());
  EXPECT_EQ(describe_link_fault(f[0]), "nic of gpu 17: health 0.5");
}

TEST(LinkFaultParse, BadInputNamesKeyAndValue) {
  EXPECT_EQ(parse_error("[{link: nic, gpu: 0}, {link: nic, gpu: 1}, {link: nic, gpu: 2, "
                        "health: 0}]"),
            "nonideal.link_faults[0] = a fault without effect : at least one of health < 1, "
            "failed: true, loss_rate > 0");
  EXPECT_EQ(parse_error("[{link: nic, gpu: 2, health: 0}]"),
            "nonideal.link_faults[0].health = 0 : a number in [0.001, 1]");
  EXPECT_EQ(parse_error("[{link: nic, gpu: 2, health: 1.5}]"),
            "nonideal.link_faults[0].health = 1.5 : a number in [0.001, 1]");
  EXPECT_EQ(parse_error("[{link: nic, gpu: 2, loss_rate: 1}]"),
            "nonideal.link_faults[0].loss_rate = 1 : a number in [0, 0.5]");
  EXPECT_EQ(parse_error("[{link: nic, gpu: -1, failed: true}]"),
            "nonideal.link_faults[0].gpu = -1 : an integer between 0 and 1000000000");
  EXPECT_EQ(parse_error("[{link: nik, gpu: 1, failed: true}]"),
            "nonideal.link_faults[0].link = nik : one of nic_up, nic_down, nic, leaf_spine, "
            "nvlink, most_loaded");
  EXPECT_EQ(parse_error("[{link: nic, gpu: 1, helth: 0.5}]"),
            "nonideal.link_faults[0].helth = helth : a known key (unknown key; did you mean "
            "nonideal.link_faults[0].health?)");
  EXPECT_EQ(parse_error("[{link: leaf_spine, leaf: 0, failed: true}]"),
            "nonideal.link_faults[0].spine = <missing> : this key to be present");
  EXPECT_EQ(parse_error("[{link: nvlink, gpu: 0, loss_rate: 0.1}]"),
            "nonideal.link_faults[0].loss_rate = 0.1 : no loss_rate on nvlink (NVLink replays "
            "at the link level: give health)");
  EXPECT_EQ(parse_error("{link: nic, gpu: 0}"),
            "nonideal.link_faults = <mapping> : a list of faults, e.g. [{link: nic, gpu: 0, "
            "health: 0.5}]");
  EXPECT_NE(parse_error("[{link: nic, gpu: 1, failed: true, start: 1s}]").find("start = 1s"),
            std::string::npos);
}

TEST(LinkFaultParse, ANetworkFileCarriesItsFaults) {
  const NetworkSpec n = parse_network(
      YAML::Load("{leaf_bandwidth: 400Gbps, faults: [{link: nic_down, gpu: 5, health: 0.8}]}"),
      "net.yaml");
  ASSERT_EQ(n.faults.size(), 1u);
  EXPECT_EQ(n.faults[0].selector, LinkSelector::NicDown);
  try {
    parse_network(YAML::Load("{leaf_bandwidth: 400Gbps, faults: [{link: nic, gpu: 5}]}"),
                  "net.yaml");
    FAIL() << "a fault without effect is accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "net.yaml");
    EXPECT_EQ(e.key(), "faults[0]");
  }
}

// --- Through the DES evaluator, and the closed form ---

// Llama 3 8B, DP2 x TP8 on two DGX H100 nodes (one leaf per rail): the DP ring of TP rank i
// joins GPU i and GPU 8 + i through NIC i of each node, NIC -> leaf -> NIC, nothing else
// on the NICs (no pipeline). ZeRO 0 without overlap: one all-reduce of S bytes per step,
// T = L + S / B (a two-member ring moves S per flow; B = 400 Gb/s x 0.9 = 45 GB/s).
struct DpRing {
  SweepSpec spec = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 32, 4096);
  ParallelConfig par;
  Workload w;
  double S = 0, B = 0, T = 0, steps = 0;
  DpRing() {
    par.dp = 2;
    par.tp = 8;
    par.pp = 1;
    par.zero_stage = 0;
    par.sp = true;
    par.recompute = Recompute::Full;
    spec.training.overlap_grad_reduce = false;
    build_workload(spec.model, spec.training, spec.network, par, w);
    S = w.stages[0].params * spec.training.grad_reduce_bytes;
    B = spec.network.leaf_bandwidth_Bps * spec.network.network_efficiency;
    const CollectiveCost cc(spec.hardware[0], spec.network);
    T = cc.time(CollectiveKind::AllReduce, S, w.group(CommGroup::DP));
    steps = cc.plan(CollectiveKind::AllReduce, S, w.group(CommGroup::DP)).net_steps;
  }
  EvalResult des(const std::vector<LinkFault>& faults, DesReport* report = nullptr) const {
    DesOptions o;
    o.link_faults = faults;
    EvalResult r;
    DesEvaluator(spec.model, spec.training, spec.hardware[0], spec.network, o)
        .simulate(w, r, report, nullptr);
    return r;
  }
};

TEST(LinkFaultDes, ADegradedNicSlowsItsRingAndNamesTheFaultItBreaksSymmetryWith) {
  const DpRing c;
  EXPECT_NEAR(c.des({}).dp_comm_time_s, c.T, 1e-9 * c.T);
  // GPU 0's NIC link at health 0.5: ring 0 runs at B / 2, the all-reduce takes
  // L + S / (B / 2) = T + S / B; the other rings wait for nothing (the step waits for it).
  DesReport report;
  const EvalResult r = c.des({nic_fault(0, 0.5)}, &report);
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_NEAR(r.dp_comm_time_s, c.T + c.S / c.B, 1e-9 * c.T);
  EXPECT_EQ(report.replicas_simulated, 2);  // replica 0's NIC differs from replica 1's
  EXPECT_NE(report.asymmetry.find("link fault: nic of gpu 0: health 0.5"), std::string::npos)
      << report.asymmetry;
  // The closed form gives the same all-reduce: the network tier at B x 0.5.
  const FaultedNetwork f = apply_link_faults(c.spec.network, {nic_fault(0, 0.5)}, 16);
  EXPECT_FALSE(f.no_route);
  EXPECT_DOUBLE_EQ(f.network.leaf_bandwidth_Bps, 0.5 * c.spec.network.leaf_bandwidth_Bps);
  const CollectiveCost faulted(c.spec.hardware[0], f.network);
  EXPECT_NEAR(faulted.time(CollectiveKind::AllReduce, c.S, c.w.group(CommGroup::DP)),
              c.T + c.S / c.B, 1e-9 * c.T);
}

TEST(LinkFaultDes, MostLoadedGoesOnTheBusiestScaleOutLink) {
  // Only the DP rings cross the NICs, all alike: the busiest scale-out link is a NIC link;
  // at health 0.5 one ring runs at B / 2 as above.
  const DpRing c;
  LinkFault f;
  f.selector = LinkSelector::MostLoaded;
  f.health = 0.5;
  DesReport report;
  const EvalResult r = c.des({f}, &report);
  EXPECT_NE(report.most_loaded_link.find("nic"), std::string::npos) << report.most_loaded_link;
  EXPECT_NEAR(r.dp_comm_time_s, c.T + c.S / c.B, 1e-9 * c.T);
}

TEST(LinkFaultDes, ALossyNicCostsGoodputAndTimeouts) {
  // p = 1e-3 on GPU 0's NIC link; RTT = 8 links x 0.5 us = 4 us; W = ceil(45e9 x 4e-6 /
  // 4096) = ceil(43.9) = 44; goodput g = 0.999 / (1 + 43 x 0.001) = 0.999 / 1.043. Each
  // network step of the ring waits p x 4.294967296 s more: T' = T - S / B + S / (B g) +
  // steps x p x 4.294967296 s. The closed form: the same.
  const DpRing c;
  LinkFault f = nic_fault(0, 1.0);
  f.loss_rate = 1e-3;
  const double g = 0.999 / 1.043;
  const double expected = c.T - c.S / c.B + c.S / (c.B * g) + c.steps * 1e-3 * 4.294967296;
  EXPECT_GT(c.steps, 0);
  EXPECT_NEAR(c.des({f}).dp_comm_time_s, expected, 1e-9 * expected);
  const FaultedNetwork a = apply_link_faults(c.spec.network, {f}, 16);
  EXPECT_NEAR(a.nic_factor, g, 1e-15);
  EXPECT_NEAR(CollectiveCost(c.spec.hardware[0], a.network)
                  .time(CollectiveKind::AllReduce, c.S, c.w.group(CommGroup::DP)),
              expected, 1e-9 * expected);
}

TEST(LinkFaultDes, AGpusOnlyNicLinkFailedIsNoRoute) {
  const DpRing c;
  LinkFault f = nic_fault(3, 1.0);
  f.failed = true;
  DesReport report;
  const EvalResult r = c.des({f}, &report);
  EXPECT_EQ(r.status, Status::NoRoute);
  EXPECT_STREQ(status_name(r.status), "no_route");
  EXPECT_NE(report.no_route.find("node 0 nic 3 -> leaf 3 failed"), std::string::npos)
      << report.no_route;
  const FaultedNetwork a = apply_link_faults(c.spec.network, {f}, 16);
  EXPECT_TRUE(a.no_route);
  // The same NIC on a one-node job carries nothing: no effect.
  EXPECT_FALSE(apply_link_faults(c.spec.network, {f}, 8).no_route);
}

TEST(LinkFaultAnalytical, AFailedUplinkRaisesTheOversubscription) {
  // small_fat_tree with 16 GPUs: 4 nodes on 2 leaves, U = 4 uplinks per leaf. One of leaf
  // 0's fails: its traffic on 3: the spine crossing at 3/4 of the share, oversubscription
  // 2 / (3/4) = 8/3. Every uplink of leaf 0 failed: no route.
  LinkFault f;
  f.selector = LinkSelector::LeafSpine;
  f.index = 0;
  f.index2 = 1;
  f.failed = true;
  const FaultedNetwork a = apply_link_faults(small_fat_tree(), {f}, 16);
  EXPECT_FALSE(a.no_route);
  EXPECT_DOUBLE_EQ(a.spine_factor, 0.75);
  EXPECT_DOUBLE_EQ(a.network.oversubscription, 8.0 / 3.0);
  EXPECT_EQ(a.network.leaf_bandwidth_Bps, 50 * kGB);
  std::vector<LinkFault> all(4, f);
  for (int k = 0; k < 4; ++k) all[static_cast<size_t>(k)].index2 = k;
  EXPECT_TRUE(apply_link_faults(small_fat_tree(), all, 16).no_route);
  // Within one leaf (8 GPUs, 2 nodes) no collective crosses a spine: nothing changes.
  EXPECT_DOUBLE_EQ(apply_link_faults(small_fat_tree(), {f}, 8).network.oversubscription, 2.0);
}

}  // namespace
}  // namespace rapid
