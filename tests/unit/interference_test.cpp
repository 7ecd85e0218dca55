// Compute/communication interference (issue 8, part 4): a collective running beside a GEMM
// holds SMs (NCCL: one thread block per channel) and HBM bandwidth, so the GEMM's tiles
// re-quantize onto fewer SMs. Hand derivations on a round GPU, then the SM counts the
// shipped files give each collective.
#include "rapid/cost/interference.hpp"

#include <gtest/gtest.h>

#include "rapid/spec/framework_spec.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

// test::round_gpu(): 100 SMs of 1 TFLOP/s (bf16, efficiency 1), no tile fill or launch, L2
// never limiting, HBM 1 TB/s: every GEMM below is compute-bound and timed by waves of
// 128 x 128 tiles.

TEST(Interference, OneFullWaveGemmBesideSixteenChannelsNeedsASecondWave) {
  // 100 tiles of 128 x 128 (m = 12800, n = 128), k = 1024: one tile is 2 * 128 * 128 *
  // 1024 / 1e12 = 33.554 us; its epilogue writes 128 * 128 * 2 B per tile at 1 TB/s.
  // Alone: 1 wave + 100 tiles' epilogue = 33.554 + 3.277 = 36.831 us. Beside an NCCL
  // collective of 16 channels (16 SMs): 84 SMs, ceil(100 / 84) = 2 waves + the last
  // wave's 16 tiles' epilogue = 67.109 + 0.524 = 67.633 us: 1.836x, the "nearly doubles"
  // of a 132-CTA GEMM beside a 24-block all-gather on H100 (NVIDIA developer forum).
  const HardwareSpec hw = test::round_gpu();
  const double tile_s = 2.0 * 128 * 128 * 1024 / 1e12, epi = 128.0 * 128 * 2 / 1e12;
  const GemmModel alone(hw, DType::BF16), beside(hw, DType::BF16, 16);
  const GemmTiming a = alone.time_with(12800, 128, 1024, 1, 128, 128, 1);
  const GemmTiming b = beside.time_with(12800, 128, 1024, 1, 128, 128, 1);
  EXPECT_EQ(a.waves, 1);
  EXPECT_EQ(b.waves, 2);
  EXPECT_NEAR(a.time_s, tile_s + 100 * epi, 1e-12);
  EXPECT_NEAR(b.time_s, 2 * tile_s + 16 * epi, 1e-12);
  EXPECT_NEAR(b.time_s / a.time_s, 1.836, 0.001);
}

TEST(Interference, ManyWaveGemmSlowsByTheSmShare) {
  // 8400 tiles (m = 128 * 8400): 84 waves on 100 SMs, 100 waves on 84: 100 / 84 = 1.190
  // (the epilogues: 100 tiles' and 84 tiles' of the last wave, 3.3 and 2.8 us of ~2.8 ms).
  // Measured: GEMMs overlapped with NCCL collectives run 18.9% slower on average
  // (arXiv 2507.03114).
  const HardwareSpec hw = test::round_gpu();
  const double tile_s = 2.0 * 128 * 128 * 1024 / 1e12, epi = 128.0 * 128 * 2 / 1e12;
  const GemmTiming a = GemmModel(hw, DType::BF16).time_with(128 * 8400, 128, 1024, 1, 128, 128, 1);
  const GemmTiming b =
      GemmModel(hw, DType::BF16, 16).time_with(128 * 8400, 128, 1024, 1, 128, 128, 1);
  EXPECT_EQ(a.waves, 84);
  EXPECT_EQ(b.waves, 100);
  EXPECT_NEAR(b.time_s / a.time_s, (100 * tile_s + 84 * epi) / (84 * tile_s + 100 * epi), 1e-9);
  EXPECT_NEAR(b.time_s / a.time_s, 1.190, 0.001);
}

TEST(Interference, MemoryBoundOpGetsWhatTheCollectiveLeavesOfHbm) {
  // A collective moving 100 GB/s through HBM (its copies and reductions) leaves 900 GB/s:
  // 1 GB streams in 1.111 ms instead of 1 ms.
  const HardwareSpec hw = test::round_gpu();
  Op op;
  op.kind = OpKind::MemoryBound;
  op.bytes = 1e9;
  EXPECT_NEAR(ComputeCost(hw, DType::BF16).time(op), 1e-3, 1e-12);
  EXPECT_NEAR(ComputeCost(hw, DType::BF16, AttentionImpl::FA2, {0, 100e9}).time(op), 1e-3 / 0.9,
              1e-12);
}

TEST(Interference, SmsHeldFollowNcclChannelsAndTheStacksTpOverlap) {
  // DGX H100 SuperPOD: NCCL runs 16 channels across nodes and 24 inside a DGX H100 node
  // (one SM each; configs/networks/dgx-h100-superpod.yaml); NeMo's TP overlap (TE
  // userbuffers) gathers by ring exchange on 1 SM, reduce-scatters on 16
  // (configs/frameworks/nemo-24.07.yaml). HBM: 2 bytes of local traffic per byte moved.
  SweepSpec s = test::spec_with_stack("llama3-70b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 8192,
                                      "nemo-24.07");
  const HardwareSpec hw = stack_hardware(s.hardware[0], s.training);
  const InterferenceModel m(hw, s.network, s.training, AttentionImpl::CuDNN);
  EXPECT_EQ(m.contention(InterferenceModel::DpNetwork).reserved_sms, 16);
  EXPECT_EQ(m.contention(InterferenceModel::DpNvlink).reserved_sms, 24);
  EXPECT_EQ(m.contention(InterferenceModel::TpGather).reserved_sms, 1);
  EXPECT_EQ(m.contention(InterferenceModel::TpScatter).reserved_sms, 16);
  const double nic = s.network.nic_bandwidth_per_gpu_Bps() * s.network.network_efficiency;
  EXPECT_NEAR(m.contention(InterferenceModel::DpNetwork).hbm_Bps, 2.0 * nic, 1.0);
}

}  // namespace
}  // namespace rapid
