#include "rapid/cost/collective_cost.hpp"

#include <gtest/gtest.h>

namespace rapid {
namespace {

// A DGX A100-like node: NVLink 300 GB/s per direction at 80% -> 240 GB/s; one 200 Gb/s NIC
// per GPU (25 GB/s) at 90% -> 22.5 GB/s; NVLink step 0.5 us; network link 0.5 us (a step
// inside a leaf crosses 2 links: 1 us); 8 us start-up per collective.
class CollectiveCostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hw.nvlink_bandwidth_Bps = 300e9;
    hw.nvlink_efficiency = 0.8;
    net.gpus_per_node = 8;
    net.nics_per_node = 8;
    net.leaf_bandwidth_Bps = 25e9;
    net.network_efficiency = 0.9;
    net.nvlink_latency_s = 0.5e-6;
    net.link_latency_s = 0.5e-6;
    net.collective_latency_s = 8e-6;
    net.nodes_per_leaf = 32;
  }
  HardwareSpec hw;
  NetworkSpec net;
};

TEST_F(CollectiveCostTest, RingAllReduceInsideOneNode) {
  CollectiveCost c(hw, net);
  // 8 us + 2 (n-1)/n S / B + 2 (n-1) alpha = 8 us + 1.75 * 1e9 / 240e9 + 14 * 0.5 us
  //   = 8e-6 + 7.2916667e-3 + 7e-6 = 7.3066667e-3 s
  EXPECT_NEAR(c.time(CollectiveKind::AllReduce, 1e9, GroupShape{8, 8, 1}), 7.3066667e-3, 1e-9);
  // nccl-tests: busbw = algbw * 2(n-1)/n -> at 1 GB the predicted busbw is near 240 GB/s.
  double busbw = 1e9 / 7.3066667e-3 * 1.75;
  EXPECT_NEAR(busbw, 239.5e9, 0.1e9);
}

TEST_F(CollectiveCostTest, HierarchicalAllReduceAcrossTwoNodes) {
  CollectiveCost c(hw, net);
  // 16 ranks, 8 per node, 2 nodes:
  //   intra reduce-scatter + all-gather: 7.2916667e-3 + 14 * 0.5 us = 7.2986667e-3
  //   inter all-reduce on S/8: 2 * (1/2) * 125e6 / 22.5e9 + 2 * 1 * 1 us = 5.5575556e-3
  //   + 8 us start-up                                                   = 12.8642222e-3 s
  EXPECT_NEAR(c.time(CollectiveKind::AllReduce, 1e9, GroupShape{16, 8, 2}), 12.8642222e-3, 1e-9);
}

TEST_F(CollectiveCostTest, OneRankPerNodeUsesTheNicRing) {
  CollectiveCost c(hw, net);
  // DP across 4 nodes with TP 8 inside each: ring over NICs.
  //   reduce-scatter: (n-1)/n S / B + (n-1) * 1 us = 0.75 * 1e8 / 22.5e9 + 3 us
  //   = 3.3333333e-3 + 3e-6 + 8e-6 = 3.3443333e-3 s
  EXPECT_NEAR(c.time(CollectiveKind::ReduceScatter, 1e8, GroupShape{4, 1, 4}), 3.3443333e-3, 1e-9);
}

TEST_F(CollectiveCostTest, SmallMessagesAreLatencyBoundAndOneRankIsFree) {
  CollectiveCost c(hw, net);
  EXPECT_EQ(c.time(CollectiveKind::AllReduce, 1e9, GroupShape{1, 1, 1}), 0.0);
  // 8 KB all-reduce on 8 GPUs: 8 us + 14 * 0.5 us + 1.75 * 8e3 / 240e9 = 15.06 us:
  // start-up dominated (PRODUCT.md: 5-10 us per small all-reduce, plus the steps).
  double t = c.time(CollectiveKind::AllReduce, 8e3, GroupShape{8, 8, 1});
  EXPECT_NEAR(t, 15.0583e-6, 1e-9);
}

TEST_F(CollectiveCostTest, OversubscribedSpineSlowsGroupsSpanningLeaves) {
  net.nodes_per_leaf = 2;
  net.oversubscription = 4.0;
  CollectiveCost c(hw, net);
  // 4 nodes over 2 leaves: NIC share 22.5e9 / 4; a step crosses the spine (2 us).
  //   ring all-gather of 1e8: 0.75 * 1e8 / 5.625e9 + 3 * 2 us + 8 us = 13.347333e-3 s
  EXPECT_NEAR(c.time(CollectiveKind::AllGather, 1e8, GroupShape{4, 1, 4}), 13.3473333e-3, 1e-9);
}

TEST_F(CollectiveCostTest, SendRecvInsideAndAcrossNodes) {
  CollectiveCost c(hw, net);
  // Inside a node: 8 us + 0.5 us + 1e8 / 240e9; across: 8 us + 1 us + 1e8 / 22.5e9.
  EXPECT_NEAR(c.time(CollectiveKind::SendRecv, 1e8, GroupShape{2, 2, 1}), 8.5e-6 + 1e8 / 240e9,
              1e-12);
  EXPECT_NEAR(c.time(CollectiveKind::SendRecv, 1e8, GroupShape{2, 1, 2}), 9e-6 + 1e8 / 22.5e9,
              1e-12);
}

}  // namespace
}  // namespace rapid
