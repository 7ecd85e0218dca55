// AMD MI300X against its data sheet (issue 32): one GEMM by hand, and its Infinity Fabric
// full mesh, where a collective over k of a platform's 8 GPUs uses only the k - 1 links
// among its members (NetworkSpec::scale_up_share; docs/collectives.md "Full mesh").
#include <gtest/gtest.h>

#include "chip_gemm.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(ChipPeaksMi300x, RunsALargeGemmAtItsDatasheetPeak) {
  // 8192^3 bf16 on 128 x 256 tiles: 2048 tiles over 304 CUs, 7 waves (6 x 304 = 1824, the
  // last of 224). Each CU: 1,307.4 TFLOP/s dense (data sheet) / 304 x 0.803 = 3.4535
  // TFLOP/s, below its operand feed from the Infinity Cache (17.2 TB/s / 304 x 2 x 128 x
  // 256 / (384 x 2 B) = 4.83 TFLOP/s, no multicast). A tile: 2 x 128 x 256 x 8192 FLOP +
  // 0.7 us; the last wave's 224 C tiles at 5.3 TB/s x 0.85. A and B (256 MiB) fit in the
  // 256 MiB Infinity Cache: read once, C written once.
  const HardwareSpec hw = test::shipped_hardware("mi300x-oam-192gb");
  const GemmTiming t = test::chip_gemm(hw, DType::BF16);
  EXPECT_EQ(t.waves, 7);
  EXPECT_NEAR(t.compute_s, test::chip_gemm_compute_s(1307.4e12, 304, 0.803, 7, 224, 5.3e12, 2),
              1e-12);
  EXPECT_DOUBLE_EQ(t.hbm_bytes, 3.0 * 8192.0 * 8192.0 * 2.0);
  // Memory for fitting: rocm-smi's 205,822,885,888 B.
  EXPECT_EQ(hw.hbm_capacity_bytes, 205822885888.0);
}

TEST(ChipPeaksMi300x, Tp2SeesOneMeshLinkAndTp8AllSeven) {
  // 7 links x 64 GB/s per direction = 448 GB/s per GPU, 48 of 64 usable (0.75, AMD's RCCL
  // blog): 336 GB/s over all links, 48 GB/s over one. An all-reduce ring's bus bandwidth
  // plateau is its link rate x 2(n-1) / (2(n-1) + k_nv):
  //   TP2: one link,  48 GB/s x 2 / (2 + 0.5)  = 38.4 GB/s;
  //   TP8: 7 links,  336 GB/s x 14 / (14 + 0.5) = 324.4 GB/s.
  const NetworkSpec net = test::shipped_network("mi300x-roce-cluster");
  ASSERT_EQ(net.scale_up, ScaleUp::FullMesh);
  const double k = net.nvlink_ring_bubble;
  const CollectiveCost c(test::shipped_hardware("mi300x-oam-192gb"), net);
  const GroupShape tp2 = group_shape(2, 1, 8), tp4 = group_shape(4, 1, 8);
  const GroupShape tp8 = group_shape(8, 1, 8);
  const double tp2_plateau = 48e9 * 2.0 / (2.0 + k), tp8_plateau = 336e9 * 14.0 / (14.0 + k);
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, tp2), tp2_plateau, 1e-3 * tp2_plateau);
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, tp8), tp8_plateau, 1e-3 * tp8_plateau);
  // TP4: 3 of the 7 links, 144 GB/s: plateau 144 x 6 / 6.5.
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, tp4), 144e9 * 6.0 / (6.0 + k),
              1e-3 * 144e9);
  // Pipeline neighbours on one node exchange over their one link: 48 GB/s.
  EXPECT_DOUBLE_EQ(c.plan(CollectiveKind::SendRecv, 1e9, GroupShape{2, 2, 1}).tiers[0].link_Bps,
                   48e9);
  // Through NVSwitch every group has the whole bandwidth: the share is 1 whatever its size.
  const NetworkSpec dgx = test::shipped_network("dgx-h100-superpod");
  EXPECT_DOUBLE_EQ(dgx.scale_up_share(2), 1.0);
  EXPECT_DOUBLE_EQ(net.scale_up_share(2), 1.0 / 7.0);
  EXPECT_DOUBLE_EQ(net.scale_up_share(8), 1.0);
}

TEST(ChipPeaksMi300x, Mi325xIsTheSameComputeWithMoreFasterHbm) {
  // The same 8192^3 GEMM on the MI325X: the MI300X's 304 CUs and peaks, so the same 7 waves
  // of the same tiles; only the last wave's 224 C tiles stream at 6 TB/s x 0.85 (data sheet).
  const HardwareSpec hw = test::shipped_hardware("mi325x-oam-256gb");
  EXPECT_NEAR(test::chip_gemm(hw, DType::BF16).compute_s,
              test::chip_gemm_compute_s(1307.4e12, 304, 0.803, 7, 224, 6e12, 2), 1e-12);
  // 256 GiB less the 320 MiB the MI300X's rocm-smi total holds back.
  EXPECT_EQ(hw.hbm_capacity_bytes, 256.0 * (1 << 30) - 320.0 * (1 << 20));
  // Its fabric is the MI300X's: a TP8 all-reduce on the mesh takes the same time.
  const NetworkSpec net = test::shipped_network("mi300x-roce-cluster");
  const GroupShape tp8 = group_shape(8, 1, 8);
  EXPECT_DOUBLE_EQ(CollectiveCost(hw, net).time(CollectiveKind::AllReduce, 1e9, tp8),
                   CollectiveCost(test::shipped_hardware("mi300x-oam-192gb"), net)
                       .time(CollectiveKind::AllReduce, 1e9, tp8));
}

}  // namespace
}  // namespace rapid
