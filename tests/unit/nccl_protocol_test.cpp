// NCCL's protocols (docs/collectives.md sec 6b), derived by hand from NCCL's tables.
#include "rapid/cost/nccl_protocol.hpp"

#include <gtest/gtest.h>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/spec/network_spec.hpp"

namespace rapid {
namespace {

TEST(NcclProtocol, ChannelsFollowNcclsThreadThresholds) {
  // Ring LL: 512 threads x 8 B x nRanks (8) = 32 KiB per channel; LL128: 640 x 8 B = 5 KiB;
  // Simple: 512 x 64 B = 32 KiB (NCCL comm.h, tuning.cc, enqueue.cc).
  const auto ring = ProtocolAlgorithm::Ring;
  EXPECT_EQ(channels_used(CollectiveProtocol::LL, ring, 8, 8, 24), 1);
  EXPECT_EQ(channels_used(CollectiveProtocol::LL, ring, 65535, 8, 24), 1);
  EXPECT_EQ(channels_used(CollectiveProtocol::LL, ring, 65536, 8, 24), 2);
  EXPECT_EQ(channels_used(CollectiveProtocol::LL, ring, 524288, 8, 24), 16);
  EXPECT_EQ(channels_used(CollectiveProtocol::LL, ring, 1048576, 8, 24), 24);
  // A tree's LL threshold is not multiplied by the ranks: 512 x 8 B = 4 KiB per channel.
  EXPECT_EQ(channels_used(CollectiveProtocol::LL, ProtocolAlgorithm::Tree, 65536, 8, 24), 16);
  EXPECT_EQ(channels_used(CollectiveProtocol::LL128, ring, 51200, 8, 24), 10);
  EXPECT_EQ(channels_used(CollectiveProtocol::Simple, ring, 8000, 8, 24), 1);
  EXPECT_EQ(channels_used(CollectiveProtocol::Simple, ring, 1e12, 8, 24), 24);
}

TEST(NcclProtocol, TablesPerArchitectureAndNodes) {
  // Hopper, one node, ring LL: base 6.6 - 8.4 = -1.8 us, 0.6 us per NVLink step (the
  // network file's default, NCCL's hwLat[NVLINK][RING][LL]), half of
  // the link, LL128's 36.7 GB/s per channel x 0.5 / 0.92, at most llMaxBw 141 GB/s.
  ProtocolCosts ll =
      protocol_costs(CollectiveProtocol::LL, ProtocolAlgorithm::Ring, NcclArch::Hopper, 1, true,
                     NetworkSpec{}.nvlink_step_latency_ll_s);
  EXPECT_NEAR(ll.base_offset_s, -1.8e-6, 1e-15);
  EXPECT_NEAR(ll.intra_step_s, 0.6e-6, 1e-15);
  EXPECT_NEAR(ll.net_step_s, 2.7e-6, 1e-15);
  EXPECT_DOUBLE_EQ(ll.link_share, 0.5);
  EXPECT_NEAR(ll.per_channel_Bps, 36.7e9 * 0.5 / 0.92, 1.0);
  EXPECT_NEAR(ll.total_cap_Bps, 141e9, 1.0);
  // Ampere's cap is 87.7 GB/s; across 3+ nodes 20.4 GB/s, and an intra-node step is at
  // least NCCL's 1 us network overhead.
  EXPECT_NEAR(protocol_costs(CollectiveProtocol::LL, ProtocolAlgorithm::Ring, NcclArch::Ampere, 1,
                             true, 0.6e-6)
                  .total_cap_Bps,
              87.7e9, 1.0);
  ProtocolCosts far = protocol_costs(CollectiveProtocol::LL, ProtocolAlgorithm::Ring,
                                     NcclArch::Hopper, 4, true, 0.6e-6);
  EXPECT_NEAR(far.total_cap_Bps, 20.4e9, 1.0);
  EXPECT_NEAR(far.intra_step_s, 1.0e-6, 1e-15);
  // Tree LL128 on PCIe: 14.0 - 8.4 = 5.6 us, 1.9 us per PCI step (the NVLink ring step
  // given does not apply), 120/128 of the link.
  ProtocolCosts t = protocol_costs(CollectiveProtocol::LL128, ProtocolAlgorithm::Tree,
                                   NcclArch::Hopper, 4, false, 7e-6);
  EXPECT_NEAR(t.base_offset_s, 5.6e-6, 1e-15);
  EXPECT_NEAR(t.intra_step_s, 1.9e-6, 1e-15);
  EXPECT_NEAR(t.per_channel_Bps, 29.0e9, 1.0);
  EXPECT_DOUBLE_EQ(t.link_share, 120.0 / 128.0);
  // LL128 only on sm_70/80/90/100 with NVLink (NCCL: "may cause silent data corruption").
  EXPECT_TRUE(protocol_enabled(CollectiveProtocol::LL128, 9.0, true));
  EXPECT_FALSE(protocol_enabled(CollectiveProtocol::LL128, 9.0, false));
  EXPECT_FALSE(protocol_enabled(CollectiveProtocol::LL128, 8.6, true));
  EXPECT_TRUE(protocol_enabled(CollectiveProtocol::LL, 8.6, false));
}

// One DGX H100-like node: 8 GPUs, NVLink 450 GB/s at 80% = 360 GB/s, start-up L = 8 us,
// Simple step 3.4 us, ring bubble 0.5, 24 channels; NCCL's LL / LL128 steps 0.6 / 1.9 us.
class ProtocolChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hw.compute_capability = 9.0;
    hw.nvlink_bandwidth_Bps = 450e9;
    hw.nvlink_efficiency = 0.8;
    net.gpus_per_node = 8;
    net.collective_latency_s = 8e-6;
    net.nvlink_step_latency_s = 3.4e-6;
    net.nvlink_ring_bubble = 0.5;
    net.nccl_channels_nvlink = 24;
  }
  HardwareSpec hw;
  NetworkSpec net;
  const GroupShape node{8, 8, 1};
};

TEST_F(ProtocolChoiceTest, SmallAllReduceRunsLowLatency) {
  CollectiveCost c(hw, net);
  // S = 32 KiB: LL on one channel at 36.7e9 * 0.5 / 0.92 = 19.946 GB/s (below half of 360
  // GB/s and below 141 GB/s). Latency 8 - 1.8 + 14 x 0.6 = 14.6 us; a GPU sends
  // 2 x 7/8 x 32768 = 57344 B, x 14.5/14 for the bubble: 57344 x 1.0357143 / 19.946e9 =
  // 2.9777 us -> 17.578 us. Simple: 8 + 14 x 3.4 = 55.6 us before any byte.
  const CollectiveEstimate e = c.estimate(CollectiveKind::AllReduce, 32768, node);
  EXPECT_EQ(e.protocol, CollectiveProtocol::LL);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_NEAR(e.time_s, 14.6e-6 + 57344.0 * 14.5 / 14.0 / (36.7e9 * 0.5 / 0.92), 1e-12);
  EXPECT_NEAR(e.time_s, 17.578e-6, 0.001e-6);
}

TEST_F(ProtocolChoiceTest, MidSizeRunsLl128AndLargeRunsSimple) {
  CollectiveCost c(hw, net);
  // S = 4 MiB, every protocol on all 24 channels; a GPU sends 1.75 x 4194304 x 14.5/14 =
  // 7601958 B:
  //   LL     14.6 us + 7601958 / 141e9 (cap)          = 68.515 us
  //   LL128  8 + 5.6 + 14 x 1.9 = 40.2 us + 7601958 / (0.92 x 360e9) = 63.153 us
  //   Simple 55.6 us + 7601958 / 360e9                = 76.717 us
  const double sent = 1.75 * 4194304 * 14.5 / 14.0;
  const CollectiveEstimate mid = c.estimate(CollectiveKind::AllReduce, 4194304, node);
  EXPECT_EQ(mid.protocol, CollectiveProtocol::LL128);
  EXPECT_NEAR(mid.time_s, 40.2e-6 + sent / (0.92 * 360e9), 1e-12);
  // 1 GB: Simple's full link share wins: 55.6 us + 1.8125e9 / 360e9 = 5.0903 ms, LL128's
  // 40.2 us + 1.8125e9 / 331.2e9 = 5.5065 ms.
  const CollectiveEstimate big = c.estimate(CollectiveKind::AllReduce, 1e9, node);
  EXPECT_EQ(big.protocol, CollectiveProtocol::Simple);
  EXPECT_NEAR(big.time_s, 55.6e-6 + 1.75e9 * 14.5 / 14.0 / 360e9, 1e-12);
}

TEST_F(ProtocolChoiceTest, NcclProtoRestrictsTheChoice) {
  // nccl_protocols: [simple] (NCCL_PROTO=Simple): 32 KiB on one of 24 channels at
  // 360/24 = 15 GB/s: 55.6 us + 57344 x 1.0357143 / 15e9 = 59.559 us.
  net.nccl_ll = false;
  net.nccl_ll128 = false;
  CollectiveCost c(hw, net);
  const CollectiveEstimate e = c.estimate(CollectiveKind::AllReduce, 32768, node);
  EXPECT_EQ(e.protocol, CollectiveProtocol::Simple);
  EXPECT_NEAR(e.time_s, 55.6e-6 + 57344.0 * 14.5 / 14.0 / 15e9, 1e-12);
  // Only LL128 on a machine without NVLink: NCCL falls back to the ring's Simple.
  net.nccl_ll128 = true;
  net.nccl_simple = false;
  hw.nvlink_bandwidth_Bps = 0;
  hw.pcie_bandwidth_Bps = 64e9;
  net.nvlink_bandwidth_Bps = 0;
  const CollectiveCost pcie(hw, net);
  EXPECT_EQ(pcie.estimate(CollectiveKind::AllReduce, 32768, node).protocol,
            CollectiveProtocol::Simple);
}

}  // namespace
}  // namespace rapid
