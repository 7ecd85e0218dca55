#include "rapid/cost/gemm_model.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace rapid {
namespace {

// test::round_gpu(): 100 SMs of 1 TFLOP/s, efficiency 1, no tile fill or launch, L2 never
// limiting, HBM 1 TB/s (test_support.hpp), so every case can be checked by hand.

TEST(GemmModel, OneTileMoreThanAFullWaveTakesTwoWaves) {
  GemmModel g(test::round_gpu(), DType::BF16);
  // 128x128 tiles: m = 128 * 100 gives exactly 100 tiles = one full wave of 100 SMs;
  // one more row of tiles (m = 128 * 101) gives 101 tiles -> 2 waves.
  // Per tile (k = 1024): 2 * 128 * 128 * 1024 FLOP / 1e12 FLOP/s = 33.554 us.
  const double tile_s = 2.0 * 128 * 128 * 1024 / 1e12;
  GemmTiming full = g.time_with(128 * 100, 128, 1024, 1, 128, 128, 1);
  GemmTiming plus_one = g.time_with(128 * 101, 128, 1024, 1, 128, 128, 1);
  EXPECT_EQ(full.tiles, 100);
  EXPECT_EQ(full.waves, 1);
  EXPECT_EQ(plus_one.tiles, 101);
  EXPECT_EQ(plus_one.waves, 2);
  // Compute: waves * tile time + the last wave's epilogue (its C tiles written to HBM:
  // tiles_in_last_wave * 128 * 128 * 2 B / 1e12 B/s).
  const double epi_full = 100 * 128.0 * 128 * 2 / 1e12, epi_one = 1 * 128.0 * 128 * 2 / 1e12;
  EXPECT_NEAR(full.compute_s, tile_s + epi_full, 1e-12);
  EXPECT_NEAR(plus_one.compute_s, 2 * tile_s + epi_one, 1e-12);
  // Both are compute-bound (A is 128*101 x 1024 x 2 B = 26.5 MB: 26.5 us of HBM < 36.8 us):
  // 1% more work costs (2 * 33.554 + 0.033) / (33.554 + 3.277) = 1.823x the time.
  EXPECT_DOUBLE_EQ(full.time_s, full.compute_s);
  EXPECT_NEAR(plus_one.time_s / full.time_s, (2 * tile_s + epi_one) / (tile_s + epi_full), 1e-9);
  EXPECT_NEAR(plus_one.time_s / full.time_s, 1.823, 0.001);
}

TEST(GemmModel, PartialEdgeTilesCostWholeTiles) {
  GemmModel g(test::round_gpu(), DType::BF16);
  // m = 129 needs 2 tiles of 128 rows: same time as m = 256.
  EXPECT_DOUBLE_EQ(g.time_with(129, 128, 1024, 1, 128, 128, 1).compute_s,
                   g.time_with(256, 128, 1024, 1, 128, 128, 1).compute_s);
}

TEST(GemmModel, DoublingHbmBandwidthSpeedsOnlyTheBandwidthBoundShape) {
  HardwareSpec hw = test::round_gpu();
  GemmModel slow(hw, DType::BF16);
  hw.hbm_bandwidth_Bps *= 2;
  GemmModel fast(hw, DType::BF16);
  // Bandwidth-bound: 8192 x 8192 x 64 with 128x128 tiles. Tiles 64 * 64 = 4096, 41 waves
  // of 2 * 128 * 128 * 64 / 1e12 = 2.097 us, plus the last wave's epilogue (96 tiles of
  // 32 KiB: 3.146 us): compute 89.13 us. HBM: A and B 1.05 MB each, C 134.2 MB:
  // 136.31 us at 1 TB/s (memory-bound), 68.16 us at 2 TB/s (now compute-bound: 85.98 us
  // plus the epilogue at the doubled bandwidth, 1.573 us = 87.56 us).
  const GemmTiming flat_slow = slow.time_with(8192, 8192, 64, 1, 128, 128, 1);
  const GemmTiming flat_fast = fast.time_with(8192, 8192, 64, 1, 128, 128, 1);
  EXPECT_NEAR(flat_slow.compute_s, 89.13e-6, 0.01e-6);
  EXPECT_NEAR(flat_slow.time_s, 136.31e-6, 0.01e-6);
  EXPECT_NEAR(flat_fast.time_s, 87.56e-6, 0.01e-6);
  // Compute-bound: 8192^3 (1.1 TFLOP, 11 ms at 100 TFLOP/s) moves 0.4 GB (0.4 ms).
  const GemmTiming square_slow = slow.time(8192, 8192, 8192),
                   square_fast = fast.time(8192, 8192, 8192);
  EXPECT_GT(square_slow.compute_s, square_slow.memory_s);
  EXPECT_NEAR(square_fast.time_s / square_slow.time_s, 1.0, 0.01);
}

TEST(GemmModel, OperandFeedLimitsSmallTilesWhenL2IsSlow) {
  HardwareSpec hw = test::round_gpu();
  hw.l2_bandwidth_Bps = 10e12;  // 10 TB/s shared by 100 active SMs: 100 GB/s each
  GemmModel g(hw, DType::BF16);
  // 64x64 tile: 2 * 64 * 64 / ((64 + 64) * 2 B) = 32 FLOP/B -> 3.2 TFLOP/s > 1 TFLOP/s peak:
  // not limited. With 10x slower L2 (1 TB/s, 10 GB/s per SM): 0.32 TFLOP/s, feed-bound.
  const double k = 4096, tile = 2.0 * 64 * 64 * k;
  GemmTiming fed = g.time_with(64 * 100, 64, 4096, 1, 64, 64, 1);
  EXPECT_NEAR(fed.compute_s - 100 * 64.0 * 64 * 2 / 1e12, tile / 1e12, 1e-12);
  hw.l2_bandwidth_Bps = 1e12;
  GemmModel starved(hw, DType::BF16);
  GemmTiming slow = starved.time_with(64 * 100, 64, 4096, 1, 64, 64, 1);
  EXPECT_NEAR(slow.compute_s - 100 * 64.0 * 64 * 2 / 1e12, tile / 0.32e12, 1e-9);
}

}  // namespace
}  // namespace rapid
