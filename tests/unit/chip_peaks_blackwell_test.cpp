// The Blackwell GPUs against their datasheet peaks (issue 32): B200 (HGX/DGX B200) and the
// GB200 of an NVL72 rack, one GEMM and one collective each, derived by hand from the numbers
// their hardware files cite; the 72-GPU NVLink domain of the NVL72 rack.
#include <gtest/gtest.h>

#include "chip_gemm.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(ChipPeaksBlackwell, B200RunsALargeBf16GemmAtItsDatasheetPeak) {
  // 8192^3 bf16 on 128 x 256 tiles: 64 x 32 = 2048 tiles over 148 SMs, 14 waves (13 x 148 =
  // 1924, the last of 124). Each SM: 2,250 TFLOP/s dense (HGX B200 table) / 148 x 0.803 =
  // 12.208 TFLOP/s, below its operand feed (7.5 TB/s x multicast 4 / 148 x 2 x 128 x 256 /
  // (384 x 2 B) = 17.30 TFLOP/s). A tile: 2 x 128 x 256 x 8192 FLOP at that rate + 0.7 us;
  // then the last wave's 124 C tiles (128 x 256 x 2 B each) at 7.7 TB/s x 0.85.
  const GemmTiming t = test::chip_gemm(test::shipped_hardware("b200-sxm-180gb"), DType::BF16);
  EXPECT_EQ(t.waves, 14);
  EXPECT_NEAR(t.compute_s, test::chip_gemm_compute_s(2250e12, 148, 0.803, 14, 124, 7.7e12, 2),
              1e-12);
  EXPECT_GT(t.compute_s, t.memory_s);  // compute-bound
}

TEST(ChipPeaksBlackwell, B200RunsAnFp4GemmAtItsFp4Peak) {
  // The same GEMM with FP4 (E2M1) operands, half a byte each: 9,000 TFLOP/s dense (HGX B200)
  // / 148 x 0.709 (the file's FP8 fraction, which FP4 GEMMs use) = 43.115 TFLOP/s per SM,
  // below the feed (7.5 TB/s x 4 / 148 x 2 x 128 x 256 / (384 x 0.5 B) = 69.2 TFLOP/s).
  // 14 waves of 2 x 128 x 256 x 8192 FLOP + 0.7 us, then 124 C tiles of 128 x 256 x 0.5 B
  // at 7.7 TB/s x 0.85.
  const HardwareSpec hw = test::shipped_hardware("b200-sxm-180gb");
  const GemmTiming t = test::chip_gemm(hw, DType::FP4);
  EXPECT_EQ(t.waves, 14);
  EXPECT_NEAR(t.compute_s, test::chip_gemm_compute_s(9000e12, 148, 0.709, 14, 124, 7.7e12, 0.5),
              1e-12);
  // A and B (2 x 8192^2 x 0.5 B = 64 MiB) fit in the 126.5 MiB L2: read once; C written once.
  EXPECT_DOUBLE_EQ(t.hbm_bytes, 3.0 * 8192.0 * 8192.0 * 0.5);
  // FP8 on the same tiles: 4,500 TFLOP/s at the same 0.709 (feed 34.6 TFLOP/s per SM),
  // 1-byte C tiles.
  EXPECT_NEAR(test::chip_gemm(hw, DType::FP8).compute_s,
              test::chip_gemm_compute_s(4500e12, 148, 0.709, 14, 124, 7.7e12, 1), 1e-12);
}

TEST(ChipPeaksBlackwell, B200AllReducesOverNvlink5) {
  // NVLink 5: 1.8 TB/s bidirectional, 900 GB/s a direction (HGX B200), at the file's 0.8:
  // B_nv = 720 GB/s. 8 GPUs of a DGX B200 node: a ring inside the node, bus bandwidth
  // plateau B_nv x 2(n-1) / (2(n-1) + k_nv) (docs/collectives.md), twice the H100's.
  const NetworkSpec net = test::shipped_network("dgx-b200-superpod");
  const CollectiveCost c(test::shipped_hardware("b200-sxm-180gb"), net);
  const GroupShape node{8, 8, 1};
  const double plateau = 720e9 * 14.0 / (14.0 + net.nvlink_ring_bubble);
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, node), plateau, 1e-3 * plateau);
  // Across two nodes the ring's NIC tier sends 1/8 of each GPU's traffic through its 400 Gb/s
  // ConnectX-7 at 0.9: 45 GB/s against 720 x 7/8 = 630 GB/s on NVLink.
  EXPECT_DOUBLE_EQ(net.nic_bandwidth_per_gpu_Bps(), 50e9);
}

TEST(ChipPeaksBlackwell, Gb200RunsALargeGemmAtItsDatasheetPeak) {
  // GB200: 2,500 TFLOP/s dense bf16 (NVL72 table) over 152 SMs at 0.803 = 13.207 TFLOP/s
  // per SM; 2048 tiles of 128 x 256 in 14 waves (13 x 152 = 1976, the last of 72); feed
  // 8.3 TB/s x 4 / 152 x 85.33 = 18.6 TFLOP/s. The last wave's 72 C tiles at 8 TB/s x 0.85.
  const HardwareSpec hw = test::shipped_hardware("gb200-nvl72-186gb");
  const GemmTiming t = test::chip_gemm(hw, DType::BF16);
  EXPECT_EQ(t.waves, 14);
  EXPECT_NEAR(t.compute_s, test::chip_gemm_compute_s(2500e12, 152, 0.803, 14, 72, 8e12, 2), 1e-12);
  // Memory for fitting: nvidia-smi's 189471 MiB (186 GB on the datasheet); its host link
  // is NVLink-C2C, 450 GB/s a direction.
  EXPECT_EQ(hw.hbm_capacity_bytes, 189471.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(hw.host_link_bandwidth_Bps, 450e9);
}

TEST(ChipPeaksBlackwell, Gb200AllReducesOver64GpusOfOneRackAtNvlinkBandwidth) {
  // A 64-GPU job on one NVL72 rack (gpus_per_node 72: one NVLink domain): its one group of
  // 64 lies inside the domain: group_shape gives 64 per node, one node. The ring never leaves
  // NVLink: its plateau is 720 GB/s x 2 x 63 / (2 x 63 + k_nv), not the NICs' 0.9 x 50 GB/s.
  const NetworkSpec net = test::shipped_network("gb200-nvl72-superpod");
  EXPECT_EQ(net.gpus_per_node, 72);
  const GroupShape g = group_shape(64, 1, net.gpus_per_node, 64);
  EXPECT_EQ(g.per_node, 64);
  EXPECT_EQ(g.nodes, 1);
  const CollectiveCost c(test::shipped_hardware("gb200-nvl72-186gb"), net);
  const CollectivePlan p = c.plan(CollectiveKind::AllReduce, 1e9, g);
  ASSERT_EQ(p.num_tiers, 1);
  EXPECT_DOUBLE_EQ(p.tiers[0].link_Bps, 720e9);
  EXPECT_EQ(p.net_steps, 0.0);
  const double plateau = 720e9 * 126.0 / (126.0 + net.nvlink_ring_bubble);
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, g), plateau, 1e-3 * plateau);
  // The same 64 GPUs on DGX B200 nodes of 8 span 8 nodes: each GPU sends 1/8 of the ring's
  // traffic through its NIC at 400 Gb/s x 0.9 = 45 GB/s (no NIC bubble), which bounds the
  // bus bandwidth at 8 x 45 = 360 GB/s (the tree: 2S per node, 2S/8 per NIC, 354 GB/s).
  const NetworkSpec dgx = test::shipped_network("dgx-b200-superpod");
  const GroupShape g8 = group_shape(64, 1, dgx.gpus_per_node);
  EXPECT_EQ(g8.nodes, 8);
  const CollectiveCost c8(test::shipped_hardware("b200-sxm-180gb"), dgx);
  EXPECT_NEAR(c8.busbw_Bps(CollectiveKind::AllReduce, 1e15, g8), 360e9, 1e-3 * 360e9);
}

TEST(ChipPeaksBlackwell, GroupsThatStraddleARackAreShapedByTheWorstOne) {
  // DP 16 over TP 8 on 72-GPU racks: groups of 16 ranks 8 apart (blocks of 128 ranks),
  // which do not tile the 72-rank racks. The group at 640 (block 5): 640 alone in rack 8
  // (ranks 576-647), 648 ... 712 (9) in rack 9, 720 ... 760 (6) in rack 10: 3 racks, 1 in
  // the emptiest. No group spans more (121 ranks < 2 x 72) or has fewer in a rack.
  const GroupShape g = group_shape(16, 8, 72);
  EXPECT_EQ(g.nodes, 3);
  EXPECT_EQ(g.per_node, 1);
  // Only the groups the job has count: 128 GPUs (ranks 0-127) hold the groups at 0-7,
  // whose 9 + 7 ranks span 2 racks.
  EXPECT_EQ(group_shape(16, 8, 72, 128).nodes, 2);
  EXPECT_EQ(group_shape(16, 8, 72, 128).per_node, 7);
  // Groups of 64 on 72-GPU racks: a second group (ranks 64-127) would straddle two racks
  // (8 + 56); a 64-GPU job has only the first.
  EXPECT_EQ(group_shape(64, 1, 72).nodes, 2);
  EXPECT_EQ(group_shape(64, 1, 72).per_node, 8);
  // Blocks that tile the rack keep the plain shape: DP 9 over TP 8 (72 ranks), TP 8.
  EXPECT_EQ(group_shape(9, 8, 72).per_node, 9);
  EXPECT_EQ(group_shape(9, 8, 72).nodes, 1);
  EXPECT_EQ(group_shape(8, 1, 72).nodes, 1);
  // 8-GPU nodes with power-of-two groups always tile: DP 4 over TP 4 spans 2 nodes of 2.
  EXPECT_EQ(group_shape(4, 4, 8).per_node, 2);
  EXPECT_EQ(group_shape(4, 4, 8).nodes, 2);
}

}  // namespace
}  // namespace rapid
