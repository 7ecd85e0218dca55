// Collective costs derived by hand from docs/collectives.md (expected values first).
#include "rapid/cost/collective_cost.hpp"

#include <gtest/gtest.h>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {
namespace {

// A DGX A100-like node: NVLink 300 GB/s per direction at 80% -> B_nv = 240 GB/s; one
// 200 Gb/s NIC per GPU (25 GB/s) at 90% -> B_net = 22.5 GB/s. Round latencies: start-up
// L = 8 us, NVLink step a_nv = 2 us, network step a_net = 10 us (inside one leaf; across
// the spine +2 x 0.5 us link latency); ring bubble k_nv = 0.5 chunk, k_net = 0. NCCL's
// Simple protocol only (NCCL_PROTO=Simple): the low-latency protocols have their own tests
// (nccl_protocol_test.cpp).
class CollectiveCostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hw.nvlink_bandwidth_Bps = 300e9;
    hw.nvlink_efficiency = 0.8;
    net.gpus_per_node = 8;
    net.nics_per_node = 8;
    net.leaf_bandwidth_Bps = 25e9;
    net.network_efficiency = 0.9;
    net.link_latency_s = 0.5e-6;
    net.collective_latency_s = 8e-6;
    net.nvlink_step_latency_s = 2e-6;
    net.network_step_latency_s = 10e-6;
    net.nvlink_ring_bubble = 0.5;
    net.network_ring_bubble = 0.0;
    net.nodes_per_leaf = 32;
    net.nccl_ll = false;
    net.nccl_ll128 = false;
  }
  HardwareSpec hw;
  NetworkSpec net;
};

TEST_F(CollectiveCostTest, RingAllReduceInsideOneNode) {
  CollectiveCost c(hw, net);
  // n = 8, S = 1 GB: L + 2(n-1) a_nv + (2(n-1) + k_nv) S / (n B_nv)
  //   = 8 us + 14 * 2 us + 14.5 * 1e9 / (8 * 240e9) = 36e-6 + 7.5520833e-3 = 7.5880833e-3 s
  const GroupShape g{8, 8, 1};
  CollectiveEstimate e = c.estimate(CollectiveKind::AllReduce, 1e9, g);
  EXPECT_NEAR(e.time_s, 7.5880833e-3, 1e-9);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::Ring);  // no tree inside one node
  // nccl-tests: busbw = S / t * 2(n-1)/n = 1e9 / 7.5880833e-3 * 1.75 = 230.624 GB/s
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e9, g), 230.624e9, 0.01e9);
}

TEST_F(CollectiveCostTest, BusbwRampsAsAHyperbolaToItsPlateau) {
  CollectiveCost c(hw, net);
  const GroupShape g{8, 8, 1};
  // Plateau: busbw_max = B_nv * 2(n-1) / (2(n-1) + k_nv) = 240e9 * 14 / 14.5 = 231.7241 GB/s.
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e14, g), 231.7241e9, 0.01e9);
  // Half of it at S_half = algbw_max * (L + 14 a_nv) = (8 * 240e9 / 14.5) * 36e-6 = 4.7668966e6.
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 4.7668966e6, g), 115.8621e9, 0.01e9);
}

TEST_F(CollectiveCostTest, TwoNodesPickTheTree) {
  CollectiveCost c(hw, net);
  // 16 ranks, 8 per node, 2 nodes, S = 1 GB.
  // Ring: 30 steps, 2 through the NICs: latency 8 + 28 * 2 + 2 * 10 = 84 us; per GPU
  //   1.875 GB sent, 7/8 on NVLink: 1.640625e9 / 240e9 * 30.5/30 = 6.9498698e-3,
  //   1/8 on the NIC: 2.34375e8 / 22.5e9 = 10.416667e-3 (slower) -> 10.500667e-3 s.
  // Tree: latency 8 + 2 (7 * 2 + 1 * 10) = 56 us; chain 2S / B_nv = 8.3333333e-3; two nodes
  //   send S each through 8 NICs: 1e9 / 180e9 = 5.5555556e-3 -> 8.3893333e-3 s (faster).
  const GroupShape g{16, 8, 2};
  CollectiveEstimate e = c.estimate(CollectiveKind::AllReduce, 1e9, g);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_NEAR(e.time_s, 8.3893333e-3, 1e-9);
}

TEST_F(CollectiveCostTest, FourNodesPickTheRingForLargeAndTheTreeForSmallMessages) {
  CollectiveCost c(hw, net);
  const GroupShape g{32, 8, 4};
  // S = 1 GB. Ring: 62 steps, 6 through the NICs: 8 + 56 * 2 + 6 * 10 = 180 us; NIC share
  //   2 * 31/32 * 1e9 / 8 / 22.5e9 = 10.763889e-3 (NVLink 7.1207682e-3) -> 10.943889e-3 s.
  // Tree: 8 + 2 (7 * 2 + 2 * 10) = 76 us; a node sends 2S through 8 NICs: 2e9 / 180e9 =
  //   11.111111e-3 -> 11.187111e-3 s. Ring is faster.
  CollectiveEstimate big = c.estimate(CollectiveKind::AllReduce, 1e9, g);
  EXPECT_EQ(big.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_NEAR(big.time_s, 10.943889e-3, 1e-9);
  // S = 1 MB: ring 180 us + 10.763889 us = 190.763889 us; tree 76 us + 11.111111 us.
  CollectiveEstimate small = c.estimate(CollectiveKind::AllReduce, 1e6, g);
  EXPECT_EQ(small.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_NEAR(small.time_s, 87.111111e-6, 1e-11);
}

TEST_F(CollectiveCostTest, OneRankPerNodeUsesTheNicRing) {
  CollectiveCost c(hw, net);
  // DP across 4 nodes with TP 8 inside each: reduce-scatter ring over the NICs.
  //   L + 3 a_net + (n-1)/n S / B_net = 8 us + 30 us + 0.75 * 1e8 / 22.5e9 = 3.3713333e-3 s
  EXPECT_NEAR(c.time(CollectiveKind::ReduceScatter, 1e8, GroupShape{4, 1, 4}), 3.3713333e-3, 1e-9);
}

TEST_F(CollectiveCostTest, SmallMessagesAreLatencyBoundAndOneRankIsFree) {
  CollectiveCost c(hw, net);
  EXPECT_EQ(c.time(CollectiveKind::AllReduce, 1e9, GroupShape{1, 1, 1}), 0.0);
  EXPECT_EQ(c.busbw_Bps(CollectiveKind::AllReduce, 1e9, GroupShape{1, 1, 1}), 0.0);
  // 8 KB all-reduce on 8 GPUs: 8e3 B < 24 channels x 512 threads x 64 B, so NCCL runs it on
  // one channel of 24, at 1/24 of the links (NCCL enqueue.cc, tuning.cc):
  // 8 us + 14 * 2 us + 14.5 * 8e3 * 24 / 1920e9 = 37.45 us.
  EXPECT_NEAR(c.time(CollectiveKind::AllReduce, 8e3, GroupShape{8, 8, 1}), 37.45e-6, 1e-12);
}

TEST_F(CollectiveCostTest, OversubscribedSpineSlowsGroupsSpanningLeaves) {
  net.nodes_per_leaf = 2;
  net.oversubscription = 4.0;
  CollectiveCost c(hw, net);
  // 4 nodes over 2 leaves: NIC share 22.5e9 / 4 = 5.625e9; a step crosses the spine:
  // 10 + 2 * 0.5 = 11 us. Ring all-gather of 1e8: 8 + 3 * 11 us + 0.75e8 / 5.625e9
  //   = 41e-6 + 13.333333e-3 = 13.374333e-3 s
  EXPECT_NEAR(c.time(CollectiveKind::AllGather, 1e8, GroupShape{4, 1, 4}), 13.3743333e-3, 1e-9);
}

TEST_F(CollectiveCostTest, AllToAllIsAPairwiseExchangeOverBothTiers) {
  CollectiveCost c(hw, net);
  // 16 ranks over 2 nodes, 1.6 GB send buffer: 7/16 of it to local peers over NVLink
  //   (0.7e9 / 240e9 = 2.9166667e-3), 8/16 through the NIC (0.8e9 / 22.5e9 = 35.555556e-3);
  //   one step per peer: 8 us + 7 * 2 us + 8 * 10 us = 102 us -> 35.657556e-3 s.
  const GroupShape g{16, 8, 2};
  EXPECT_NEAR(c.time(CollectiveKind::AllToAll, 1.6e9, g), 35.657556e-3, 1e-9);
  // nccl-tests all-to-all busbw = algbw * (n-1)/n.
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllToAll, 1.6e9, g), 1.6e9 / 35.657556e-3 * 0.9375, 1e3);
}

TEST_F(CollectiveCostTest, SendRecvInsideAndAcrossNodes) {
  CollectiveCost c(hw, net);
  // Inside a node: 8 us + 2 us + 1e8 / 240e9; across: 8 us + 10 us + 1e8 / 22.5e9.
  EXPECT_NEAR(c.time(CollectiveKind::SendRecv, 1e8, GroupShape{2, 2, 1}), 10e-6 + 1e8 / 240e9,
              1e-12);
  EXPECT_NEAR(c.time(CollectiveKind::SendRecv, 1e8, GroupShape{2, 1, 2}), 18e-6 + 1e8 / 22.5e9,
              1e-12);
  // busbw of send/recv is its algbw.
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::SendRecv, 1e8, GroupShape{2, 1, 2}),
              1e8 / (18e-6 + 1e8 / 22.5e9), 1e3);
}

TEST(NetworkCurveKeys, ParsedWithUnitsAndDefaultedFromNcclTuning) {
  const std::string base = "leaf_bandwidth: 200Gbps\n";
  NetworkSpec d = parse_network(load_yaml_text(base, "<t>"), "<t>");
  // Defaults: NCCL tuning.cc hwLat[NVLINK][RING][SIMPLE] = 3.4 us, [NET] = 14 us; bubble
  // 0.5 on NVLink (DGX A100 fit), 0 on the NICs.
  EXPECT_DOUBLE_EQ(d.nvlink_step_latency_s, 3.4e-6);
  EXPECT_DOUBLE_EQ(d.network_step_latency_s, 14e-6);
  EXPECT_DOUBLE_EQ(d.nvlink_ring_bubble, 0.5);
  EXPECT_DOUBLE_EQ(d.network_ring_bubble, 0.0);
  NetworkSpec n = parse_network(
      load_yaml_text(base + "nvlink_step_latency: 2.5us\nnetwork_step_latency: 0.1ms\n"
                            "nvlink_ring_bubble: 0.25\nnetwork_ring_bubble: 1\n",
                     "<t>"),
      "<t>");
  EXPECT_DOUBLE_EQ(n.nvlink_step_latency_s, 2.5e-6);
  EXPECT_DOUBLE_EQ(n.network_step_latency_s, 1e-4);
  EXPECT_DOUBLE_EQ(n.nvlink_ring_bubble, 0.25);
  EXPECT_DOUBLE_EQ(n.network_ring_bubble, 1.0);
  EXPECT_THROW(parse_network(load_yaml_text(base + "nvlink_ring_bubble: -1\n", "<t>"), "<t>"),
               InputError);
}

}  // namespace
}  // namespace rapid
