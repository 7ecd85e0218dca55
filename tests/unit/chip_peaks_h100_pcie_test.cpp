// H100 PCIe and H100 NVL against their datasheet peaks (issue 32): one GEMM and one
// collective each, by hand. Their 8-GPU domain is modelled PCIe-only (the NVLink bridges
// between pairs are not): `nvlink_bandwidth` is PCIe Gen5 x16, 64 GB/s a direction.
#include <gtest/gtest.h>

#include "chip_gemm.hpp"
#include "rapid/cost/collective_cost.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

TEST(ChipPeaksH100Pcie, PcieCardRunsALargeGemmAtItsDatasheetPeak) {
  // 8192^3 bf16 on 128 x 256 tiles: 2048 tiles over 114 SMs, 18 waves (17 x 114 = 1938, the
  // last of 110). Each SM: 756.5 TFLOP/s dense (datasheet) / 114 x 0.803 = 5.329 TFLOP/s,
  // below the feed (5.5 TB/s measured L2 x 2 / 114 x 85.33 FLOP/B = 8.23 TFLOP/s). The last
  // wave's 110 C tiles at 2 TB/s x 0.85.
  const HardwareSpec hw = test::shipped_hardware("h100-pcie-80gb");
  const GemmTiming t = test::chip_gemm(hw, DType::BF16);
  EXPECT_EQ(t.waves, 18);
  EXPECT_NEAR(t.compute_s, test::chip_gemm_compute_s(756.5e12, 114, 0.803, 18, 110, 2e12, 2),
              1e-12);
  EXPECT_EQ(hw.hbm_capacity_bytes, 81559.0 * 1024 * 1024);
}

TEST(ChipPeaksH100Pcie, NvlCardRunsALargeGemmAtItsDatasheetPeak) {
  // H100 NVL: 835.5 TFLOP/s dense over 132 SMs at 0.803 = 5.083 TFLOP/s per SM (feed 5.57
  // TB/s x 2 / 132 x 85.33 = 7.2 TFLOP/s); 16 waves (15 x 132 = 1980, the last of 68); the
  // last wave's C tiles at 3.9 TB/s x 0.85.
  const HardwareSpec hw = test::shipped_hardware("h100-nvl-94gb");
  const GemmTiming t = test::chip_gemm(hw, DType::BF16);
  EXPECT_EQ(t.waves, 16);
  EXPECT_NEAR(t.compute_s, test::chip_gemm_compute_s(835.5e12, 132, 0.803, 16, 68, 3.9e12, 2),
              1e-12);
  EXPECT_EQ(hw.hbm_capacity_bytes, 95830.0 * 1024 * 1024);
}

TEST(ChipPeaksH100Pcie, EightCardsAllReduceOverPcie) {
  // PCIe Gen5 x16: 64 GB/s a direction at 0.8 = 51.2 GB/s per GPU for the 8 GPUs of a
  // node (the switch model at the PCIe rate). Ring plateau 51.2 GB/s x 14 / (14 + k_nv),
  // the same for both cards (the same link).
  const NetworkSpec net = test::shipped_network("dgx-h100-superpod");
  const GroupShape node{8, 8, 1};
  const double plateau = 51.2e9 * 14.0 / (14.0 + net.nvlink_ring_bubble);
  for (const char* gpu : {"h100-pcie-80gb", "h100-nvl-94gb"}) {
    const CollectiveCost c(test::shipped_hardware(gpu), net);
    EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, node), plateau, 1e-3 * plateau) << gpu;
  }
}

}  // namespace
}  // namespace rapid
