// Each shipped GPU against its datasheet peaks (issue 32): one GEMM and one collective per
// chip, derived by hand from the numbers its hardware file cites.
#include <gtest/gtest.h>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/cost/gemm_model.hpp"
#include "rapid/spec/training_spec.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// A decode GEMV streams its weights: M = 1, N = K = 16384 in bf16 on 128 x 128 tiles
// (128 tiles, one wave, no split-K). B (16384^2 x 2 B = 512 MiB) does not fit in L2, so
// the operands are read per wave of tiles: A as its one 128-row tile (tile quantization:
// 128 x 16384 x 2 B = 4 MiB), B once; C (16384 x 2 B) written once: 541,097,984 B, at the
// datasheet HBM bandwidth times the file's streaming efficiency (0.85).
double gemv_bytes() {
  return 2.0 * (128.0 * 16384 + 16384.0 * 16384.0 + 16384.0);
}

TEST(ChipPeaks, H200StreamsTheDecodeGemvAtItsHbm3eBandwidth) {
  const HardwareSpec hw = test::shipped_hardware("h200-sxm-141gb");
  const GemmTiming t = GemmModel(hw, DType::BF16).time_with(1, 16384, 16384, 1, 128, 128, 1);
  EXPECT_DOUBLE_EQ(t.hbm_bytes, gemv_bytes());
  // 541,097,984 B / (4.8 TB/s x 0.85) = 132.62 us (H200 datasheet: 4.8 TB/s).
  EXPECT_NEAR(t.memory_s, gemv_bytes() / (4.8e12 * 0.85), 1e-12);
  EXPECT_GE(t.time_s, t.memory_s);
  // The H100 SXM5 moves the same bytes at 3.35 TB/s: 4.8 / 3.35 = 1.433 x longer.
  const GemmTiming h100 = GemmModel(test::shipped_hardware("h100-sxm5-80gb"), DType::BF16)
                              .time_with(1, 16384, 16384, 1, 128, 128, 1);
  EXPECT_NEAR(h100.memory_s / t.memory_s, 4.8 / 3.35, 1e-9);
}

TEST(ChipPeaks, H200RunsALargeGemmAtItsDatasheetPeak) {
  // 8192^3 bf16 on 128 x 256 tiles: 64 x 32 = 2048 tiles over 132 SMs, 16 waves (the last
  // of 68 tiles). Each SM: 989.4 TFLOP/s dense (datasheet) / 132 x 0.803 (the measured best
  // fraction) = 6.0189 TFLOP/s, below its operand feed (6.6 TB/s / 132 x 2 x 128 x 256 /
  // (384 x 2 B) x multicast 2 = 8.53 TFLOP/s). A tile: 2 x 128 x 256 x 8192 FLOP at that
  // rate (89.198 us) + 0.7 us of prologue. Then the last wave's C tiles, 68 x 128 x 256 x
  // 2 B, written at 4.8 TB/s x 0.85. Compute: 16 x 89.898 + 1.092 us = 1.43946 ms.
  const HardwareSpec hw = test::shipped_hardware("h200-sxm-141gb");
  const GemmTiming t = GemmModel(hw, DType::BF16).time_with(8192, 8192, 8192, 1, 128, 256, 1);
  const double sm_rate = 989.4e12 / 132 * 0.803;
  const double tile_s = 2.0 * 128 * 256 * 8192 / sm_rate + 0.7e-6;
  const double epilogue_s = 68.0 * 128 * 256 * 2 / (4.8e12 * 0.85);
  EXPECT_EQ(t.waves, 16);
  EXPECT_NEAR(t.compute_s, 16 * tile_s + epilogue_s, 1e-12);
  EXPECT_GT(t.compute_s, t.memory_s);  // compute-bound
  // The H100 SXM5 (the same die) differs only in that epilogue, at 3.35 TB/s.
  const GemmTiming h100 = GemmModel(test::shipped_hardware("h100-sxm5-80gb"), DType::BF16)
                              .time_with(8192, 8192, 8192, 1, 128, 256, 1);
  EXPECT_NEAR(h100.compute_s - t.compute_s, epilogue_s * (4.8 / 3.35 - 1.0), 1e-12);
}

TEST(ChipPeaks, H200AllReducesOverNvlink4AsTheH100) {
  // NVLink 4: 900 GB/s bidirectional, 450 GB/s a direction (H200 datasheet), at the file's
  // 0.8: B_nv = 360 GB/s. A 1 GB all-reduce over the 8 GPUs of an HGX H200 board (the DGX
  // H100 network: the same NVSwitch board) is a ring inside the node; its bus bandwidth
  // plateau is B_nv x 2(n-1) / (2(n-1) + k_nv) (docs/collectives.md).
  const NetworkSpec net = test::shipped_network("dgx-h100-superpod");
  const HardwareSpec hw = test::shipped_hardware("h200-sxm-141gb");
  const CollectiveCost h200(hw, net);
  const GroupShape node{8, 8, 1};
  const double plateau = 360e9 * 14.0 / (14.0 + net.nvlink_ring_bubble);
  EXPECT_NEAR(h200.busbw_Bps(CollectiveKind::AllReduce, 1e15, node), plateau, 1e-3 * plateau);
  EXPECT_LT(h200.busbw_Bps(CollectiveKind::AllReduce, 1e9, node), plateau);
  const CollectiveCost h100(test::shipped_hardware("h100-sxm5-80gb"), net);
  EXPECT_DOUBLE_EQ(h200.time(CollectiveKind::AllReduce, 1e9, node),
                   h100.time(CollectiveKind::AllReduce, 1e9, node));
}

TEST(ChipPeaks, A100With40GbStreamsTheDecodeGemvAtItsHbm2Bandwidth) {
  // The same GEMV on the A100 SXM4 40GB, on 128 x 256 tiles (64 tiles: one wave of its
  // 108 SMs): the same 541,097,984 B (A's one 128-row tile, B, C) at 1,555 GB/s x 0.85
  // (datasheet) = 409.38 us.
  const GemmTiming t = GemmModel(test::shipped_hardware("a100-sxm4-40gb"), DType::BF16)
                           .time_with(1, 16384, 16384, 1, 128, 256, 1);
  EXPECT_DOUBLE_EQ(t.hbm_bytes, gemv_bytes());
  EXPECT_NEAR(t.memory_s, gemv_bytes() / (1555e9 * 0.85), 1e-12);
  // 8192^3 at 312 TFLOP/s dense / 108 x 0.87 per SM on 128 x 256 tiles: 2048 tiles, 19
  // waves (the last of 104), 2 x 128 x 256 x 8192 FLOP a tile + 0.7 us; the last wave's
  // C tiles (104 x 128 x 256 x 2 B) at 1,555 GB/s x 0.85. Operand feed: 7.2 TB/s / 108 x
  // 85.33 FLOP/B = 5.69 TFLOP/s > 2.51 TFLOP/s: compute-limited.
  const GemmTiming g = GemmModel(test::shipped_hardware("a100-sxm4-40gb"), DType::BF16)
                           .time_with(8192, 8192, 8192, 1, 128, 256, 1);
  const double tile_s = 2.0 * 128 * 256 * 8192 / (312e12 / 108 * 0.87) + 0.7e-6;
  EXPECT_EQ(g.waves, 19);
  EXPECT_NEAR(g.compute_s, 19 * tile_s + 104.0 * 128 * 256 * 2 / (1555e9 * 0.85), 1e-12);
}

TEST(ChipPeaks, A100With40GbAllReducesOverNvlink3) {
  // NVLink 3: 600 GB/s bidirectional, 300 GB/s a direction (datasheet), at 0.8: 240 GB/s.
  // The DGX A100 board's 8 GPUs: ring plateau 240 GB/s x 14 / (14 + k_nv).
  const NetworkSpec net = test::shipped_network("dgx-a100-superpod");
  const CollectiveCost c(test::shipped_hardware("a100-sxm4-40gb"), net);
  const double plateau = 240e9 * 14.0 / (14.0 + net.nvlink_ring_bubble);
  EXPECT_NEAR(c.busbw_Bps(CollectiveKind::AllReduce, 1e15, GroupShape{8, 8, 1}), plateau,
              1e-3 * plateau);
}

TEST(ChipPeaks, H800AllReducesAtItsCutNvlinkRate) {
  // NVLink 400 GB/s bidirectional (H800 datasheet): 200 GB/s a direction, at 0.8 = 160
  // GB/s, the achieved figure DeepSeek-V3 (sec 3.2.2) gives for its H800s. An 8-GPU ring
  // all-reduce's plateau: 160 GB/s x 14 / (14 + k_nv); 1 GB takes 450 / 200 = 2.25 x the
  // H100's bandwidth term.
  const NetworkSpec net = test::shipped_network("dgx-h100-superpod");
  const CollectiveCost h800(test::shipped_hardware("h800-sxm5-80gb"), net);
  const GroupShape node{8, 8, 1};
  const double plateau = 160e9 * 14.0 / (14.0 + net.nvlink_ring_bubble);
  EXPECT_NEAR(h800.busbw_Bps(CollectiveKind::AllReduce, 1e15, node), plateau, 1e-3 * plateau);
  // Its GEMMs are the H100's: the same die.
  const GemmTiming g = GemmModel(test::shipped_hardware("h800-sxm5-80gb"), DType::BF16)
                           .time_with(8192, 8192, 8192, 1, 128, 256, 1);
  const GemmTiming h = GemmModel(test::shipped_hardware("h100-sxm5-80gb"), DType::BF16)
                           .time_with(8192, 8192, 8192, 1, 128, 256, 1);
  EXPECT_DOUBLE_EQ(g.time_s, h.time_s);
}

TEST(ChipPeaks, AGpuNoStackListsRunsTheFactorsOfTheDieItNames) {
  // Megatron-Core 0.8's end_to_end: lists the A100 SXM4 80GB and the H100 SXM5 (step 0.785,
  // elementwise 0.950: configs/frameworks/megatron-core-0.8.yaml), not the H200. The H200's
  // file names the H100 SXM5 (stack_factors_from): it runs those. A stack's own entry for a
  // GPU wins over the file's pointer.
  TrainingSpec t;
  t.framework.end_to_end["h100-sxm5-80gb"] = {0.785, 0.950, kOverlapAll};
  const HardwareSpec h200 = test::shipped_hardware("h200-sxm-141gb");
  EXPECT_EQ(h200.stack_factors_from, "h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(stack_hardware(h200, t).step_efficiency, 0.785);
  EXPECT_DOUBLE_EQ(stack_hardware(h200, t).elementwise_efficiency, 0.950);
  t.framework.end_to_end["h200-sxm-141gb"] = {0.8, 0.9, kOverlapAll};
  EXPECT_DOUBLE_EQ(stack_hardware(h200, t).step_efficiency, 0.8);
  // Memory for fitting: nvidia-smi's 143771 MiB (141 GB on the datasheet).
  EXPECT_EQ(h200.hbm_capacity_bytes, 143771.0 * 1024 * 1024);
}

}  // namespace
}  // namespace rapid
