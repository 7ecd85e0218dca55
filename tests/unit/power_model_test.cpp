// Board power of ops (docs/nonideal.md sec 1) derived by hand: the J/FLOP that makes the
// reference 8192^3 GEMM draw TDP, a streaming op's data-movement energy, the TDP cap, the
// collectives' energy and the DVFS power law (dynamic energy ~ f^2, power ~ f^3).
#include "rapid/nonideal/power_model.hpp"
#include "rapid/nonideal/thermal_feedback.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rapid/spec/yaml_reader.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

HardwareSpec h100() {
  const std::string path = test::source_path("configs/hardware/h100-sxm5-80gb.yaml");
  return parse_hardware(load_yaml_file(path), path);
}

// The reference GEMM (PowerModel::reference_gemm): m = n = k = 8192, F = 2 x 8192^3 FLOPs,
// inputs and output once through HBM: 3 x 8192^2 elements of 2 B (bf16) or 1 B (fp8).
Op reference_gemm(bool fp8) {
  const Op g = PowerModel::reference_gemm(fp8);
  EXPECT_EQ(g.flops, 2.0 * 8192.0 * 8192.0 * 8192.0);
  EXPECT_EQ(g.bytes, 3.0 * 8192.0 * 8192.0 * (fp8 ? 1.0 : 2.0));
  return g;
}

double rel(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

TEST(PowerModel, ReadsTheFilesEnergies) {
  // configs/hardware/h100-sxm5-80gb.yaml: idle 130 W, no `active`, 31.2 / 8 / 10.4 / 170
  // pJ per byte for HBM / L2 / NVLink / NIC, TDP 700 W.
  const HardwareSpec hw = h100();
  EXPECT_EQ(hw.tdp_W, 700.0);
  EXPECT_EQ(hw.power.idle_W, 130.0);
  EXPECT_EQ(hw.power.active_W, 0.0);
  EXPECT_NEAR(hw.power.hbm_J_per_byte, 31.2e-12, 1e-24);
  EXPECT_NEAR(hw.power.l2_J_per_byte, 8e-12, 1e-24);
  EXPECT_NEAR(hw.power.nvlink_J_per_byte, 10.4e-12, 1e-24);
  EXPECT_NEAR(hw.power.nic_J_per_byte, 170e-12, 1e-24);
}

// 2a. The derived J/FLOP: TDP = idle + active + (F e_flop + B e_hbm + F (2 / 128) e_l2) / t.
TEST(PowerModel, ReferenceGemmDrawsExactlyTdp) {
  const HardwareSpec hw = h100();
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  for (bool fp8 : {false, true}) {
    SCOPED_TRACE(fp8 ? "fp8" : "bf16");
    const Op g = reference_gemm(fp8);
    const double t = cost.time(g);
    // By hand: e_flop = ((700 - 130 - 0) t - B x 31.2e-12 - F x (s / 128) x 8e-12) / F, with
    // s = 2 (bf16) or 1 (fp8) bytes per element: a 128-wide tile reads (128 + 128) s bytes
    // from L2 per k step for 2 x 128 x 128 FLOPs. bf16: B = 402,653,184 B (12.56 mJ of HBM),
    // F / 64 = 17.18 GB of L2 (137.4 mJ).
    const double l2_bytes = g.flops * (fp8 ? 1.0 : 2.0) / 128.0;
    const double data_J = g.bytes * 31.2e-12 + l2_bytes * 8e-12;
    const double e_flop = (570.0 * t - data_J) / g.flops;
    const DType dt = fp8 ? DType::FP8 : DType::BF16;
    EXPECT_LT(rel(pm.J_per_flop(dt), e_flop), 1e-12);
    const OpEnergy e = pm.op_energy(g, t);
    EXPECT_EQ(e.time_s, t);
    EXPECT_LT(rel(e.compute_J, g.flops * e_flop), 1e-12);
    EXPECT_LT(rel(e.memory_J, data_J), 1e-12);
    EXPECT_EQ(e.hbm_bytes, g.bytes);
    // Board power: idle + dynamic / t = 700 W exactly; the cap leaves it alone.
    EXPECT_LT(rel(130.0 + (e.compute_J + e.memory_J) / t, 700.0), 1e-9);
    EXPECT_LT(rel(pm.capped_time(e), t), 1e-12);
    // As a WorkPower: idle 130 W, the rest split between compute and memory.
    const WorkPower w = e.power(pm.idle_W());
    EXPECT_LT(rel(w.full_W(), 700.0), 1e-9);
    EXPECT_EQ(w.idle_W, 130.0);
  }
  // FP16 has the same peak as bf16 in the file and the same reference GEMM: same J/FLOP.
  EXPECT_LT(rel(pm.J_per_flop(DType::FP16), pm.J_per_flop(DType::BF16)), 1e-12);
}

TEST(PowerModel, ReferenceGemmDrawsTdpWithActivePower) {
  // With 66 W of SM activity the FLOPs get 66 W less: TDP still drawn exactly.
  HardwareSpec hw = h100();
  hw.power.active_W = 66;
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  const Op g = reference_gemm(false);
  const double t = cost.time(g);
  const OpEnergy e = pm.op_energy(g, t);
  // compute_J = active t + F e_flop, e_flop = ((700 - 130 - 66) t - data) / F.
  const double data_J = g.bytes * 31.2e-12 + g.flops / 64.0 * 8e-12;
  EXPECT_LT(rel(e.compute_J, 66.0 * t + (504.0 * t - data_J)), 1e-12);
  EXPECT_LT(rel(130.0 + (e.compute_J + e.memory_J) / t, 700.0), 1e-9);
  // A GPU waiting on NCCL with 16 of its 132 SMs polling: 130 + 66 x 16 / 132 = 138 W.
  EXPECT_NEAR(pm.waiting_W(16), 138.0, 1e-12);
}

TEST(PowerModel, GemmRooflineSplit) {
  const HardwareSpec hw = h100();
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  // bf16: compute-bound F / (989.4e12 x 0.803) = 1.0995e12 / 7.9449e14 = 1.38392 ms of the
  // reference GEMM's time; the rest of its time is memory-bound.
  const Op g = reference_gemm(false);
  const double t = cost.time(g);
  const OpEnergy e = pm.op_energy(g, t);
  const double cb = g.flops / (989.4e12 * 0.803);
  EXPECT_NEAR(cb, 1.38392e-3, 1e-8);
  EXPECT_LT(rel(e.compute_bound_s, cb), 1e-12);
  EXPECT_LT(rel(e.memory_bound_s, t - cb), 1e-9);
  // Given less time than the tensor cores need, all of it is compute-bound.
  const OpEnergy fast = pm.op_energy(g, 0.5 * cb);
  EXPECT_EQ(fast.compute_bound_s, 0.5 * cb);
  EXPECT_EQ(fast.memory_bound_s, 0.0);
}

TEST(PowerModel, Fp8GemmRooflineSplitUsesTheFp8Efficiency) {
  const HardwareSpec hw = h100();
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  // The FP8 tensor cores reach gemm_fp8 = 0.709 of 1979 TFLOP/s (the file's [MAMF] value,
  // the GEMM model's own): F / (1979e12 x 0.709) = 1.0995e12 / 1.40311e15 = 0.783624 ms is
  // compute-bound, as bf16's F / (peak x efficiency) is (95% of the GEMM's time either way).
  const Op g = reference_gemm(true);
  const OpEnergy e = pm.op_energy(g, cost.time(g));
  const double cb = g.flops / (1979e12 * 0.709);
  EXPECT_NEAR(cb, 0.783624e-3, 1e-9);
  EXPECT_LT(rel(e.compute_bound_s, cb), 1e-12);
}

// 2b. Streaming kernels: every byte through HBM and L2 once.
TEST(PowerModel, MemoryBoundOpMovesBytesOnly) {
  const HardwareSpec hw = h100();
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  Op op;
  op.kind = OpKind::MemoryBound;
  op.bytes = 1e9;
  const double t = 4e-4;
  // memory_J = 1e9 x (31.2 + 8) pJ = 0.0392 J; compute_J = active x t = 0 (no `active`).
  const OpEnergy e = pm.op_energy(op, t);
  EXPECT_NEAR(e.memory_J, 0.0392, 1e-15);
  EXPECT_EQ(e.compute_J, 0.0);
  EXPECT_EQ(e.memory_bound_s, t);
  EXPECT_EQ(e.compute_bound_s, 0.0);
  EXPECT_EQ(e.hbm_bytes, 1e9);
  // As power: 0.0392 J / 0.4 ms = 98 W of data movement on 130 W idle, all memory-bound.
  const WorkPower w = e.power(130);
  EXPECT_NEAR(w.memory_W, 98.0, 1e-9);
  EXPECT_EQ(w.compute_W, 0.0);
  EXPECT_EQ(w.memory_share, 1.0);
  EXPECT_EQ(w.compute_share, 0.0);
  EXPECT_NEAR(w.full_W(), 228.0, 1e-9);
}

TEST(PowerModel, CollectiveEnergy) {
  const HardwareSpec hw = h100();
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  // 1 GB sent per GPU: 2 B of local HBM traffic per byte sent plus the link's energy.
  // NVLink: 1e9 x (2 x 31.2 + 10.4) pJ = 0.0728 J; NIC: 1e9 x (62.4 + 170) pJ = 0.2324 J.
  const OpEnergy nv = pm.comm_energy(1e9, true, 16, 0.01);
  EXPECT_NEAR(nv.memory_J, 0.0728, 1e-15);
  EXPECT_EQ(nv.compute_J, 0.0);  // active 0 W
  EXPECT_EQ(nv.hbm_bytes, 2e9);
  EXPECT_EQ(nv.compute_bound_s + nv.memory_bound_s, 0.0);  // the links set the pace
  EXPECT_NEAR(pm.comm_energy(1e9, false, 16, 0.01).memory_J, 0.2324, 1e-15);
  EXPECT_EQ(pm.waiting_W(16), 130.0);
}

// 2c. The TDP cap: an op over TDP stretches until idle + dynamic / t = TDP.
TEST(PowerModel, CappedTimeStretchesToTdp) {
  const HardwareSpec hw = h100();
  const ComputeCost cost(hw, DType::BF16);
  const PowerModel pm(hw, cost);
  OpEnergy hot;
  hot.time_s = 1e-3;
  hot.compute_J = 0.8;
  hot.memory_J = 0.1;
  // 0.9 J in 1 ms = 900 W dynamic > 700 - 130 = 570 W: t = 0.9 / 570 = 1.578947 ms, where
  // 130 + 0.9 / t = 700 W.
  const double t = pm.capped_time(hot);
  EXPECT_LT(rel(t, 0.9 / 570.0), 1e-12);
  EXPECT_NEAR(t, 1.578947e-3, 1e-9);
  EXPECT_LT(rel(130.0 + 0.9 / t, 700.0), 1e-12);
  // 0.3 J in 1 ms = 300 W dynamic, 430 W board: under TDP, unchanged.
  OpEnergy cool = hot;
  cool.compute_J = 0.2;
  EXPECT_EQ(pm.capped_time(cool), 1e-3);
  // No time: nothing to stretch.
  OpEnergy none;
  EXPECT_EQ(pm.capped_time(none), 0.0);
}

// 2d. The DVFS power law: dynamic energy of compute ~ f^2 over a time ~ 1 / f: P ~ f^3.
TEST(PowerModel, DvfsPowerLaw) {
  WorkPower w{.idle_W = 130, .compute_W = 570, .compute_share = 1.0};
  // Clock 0.9: 130 + 570 x 0.81 / (1 / 0.9) = 130 + 570 x 0.729 = 130 + 415.53 = 545.53 W.
  EXPECT_NEAR(w.at(Derate{0.9, 1.0}), 545.53, 1e-9);
  EXPECT_NEAR(w.at(Derate{0.9, 1.0}) - w.idle_W, 0.729 * 570.0, 1e-9);
  // An HBM derate leaves compute-bound work alone.
  EXPECT_NEAR(w.at(Derate{1.0, 0.5}), 700.0, 1e-12);
  EXPECT_EQ(w.at(Derate{}), w.full_W());
  // Half compute-bound (300 W), half memory-bound (200 W): the time stretches by
  // 0.5 / 0.9 + 0.5 = 1.055556, the compute energy by 0.81, the memory energy stays:
  // 130 + (300 x 0.81 + 200) / 1.055556 = 130 + 443 / 1.055556 = 130 + 419.6842 W.
  WorkPower m{
      .idle_W = 130, .compute_W = 300, .memory_W = 200, .compute_share = 0.5, .memory_share = 0.5};
  EXPECT_NEAR(m.at(Derate{0.9, 1.0}), 130.0 + 443.0 / (0.5 / 0.9 + 0.5), 1e-9);
  EXPECT_NEAR(m.at(Derate{0.9, 1.0}), 549.6842, 1e-4);
  // HBM at 0.73 on the same work: 130 + 500 / (0.5 + 0.5 / 0.73) = 130 + 500 / 1.184932.
  EXPECT_NEAR(m.at(Derate{1.0, 0.73}), 130.0 + 500.0 / (0.5 + 0.5 / 0.73), 1e-9);
}

TEST(PowerColumns, TheRowsPowerColumnsFollowFromTheStepsEnergy) {
  // 4 GPUs use 1000 J in a 0.5 s step that trains 2000 tokens: 1000 / (4 x 0.5) = 500 W on
  // average, 2000 / 1000 = 2 tokens per joule; the peak is given (650 W); a swing of
  // 3e6 W is 3 MW.
  EvalResult r;
  set_power_columns(1000.0, 0.5, 4.0, 2000.0, 650.0, 3e6, r);
  EXPECT_DOUBLE_EQ(r.energy_per_step_J, 1000.0);
  EXPECT_DOUBLE_EQ(r.avg_gpu_power_W, 500.0);
  EXPECT_DOUBLE_EQ(r.peak_gpu_power_W, 650.0);
  EXPECT_DOUBLE_EQ(r.tokens_per_J, 2.0);
  EXPECT_DOUBLE_EQ(r.cluster_power_swing_MW, 3.0);
}

}  // namespace
}  // namespace rapid
