// The variant study's mechanisms, derived by hand (PRODUCT.md section 2; docs/variants.md):
// a GEMM bandwidth-bound at 2 TB/s gains with HBM bandwidth until its compute roof, then
// stays flat; case B (160 GB of HBM) makes a layout that needed full recomputation at 80 GB
// feasible with less.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "rapid/cost/gemm_model.hpp"
#include "rapid/cost/interference.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/workload/workload.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

SweepSpec load(const std::string& name, const std::string& text) {
  setenv("RAPID_CONFIG_DIR", test::source_path("configs").c_str(), 1);
  return load_sweep_spec(test::write_temp(name, text));
}

TEST(VariantStudy, GemmGainsWithBandwidthUntilItsComputeRoof) {
  // The A100 at HBM bandwidths 1, 1.5, ..., 12 TB/s (a grid of variants).
  const SweepSpec s = load("gemm-grid.yaml",
                           "model: llama3-8b\nhardware: a100-sxm4-80gb\nnetwork: "
                           "dgx-a100-superpod\ngpus: 8\ntraining: {global_batch_size: 64}\n"
                           "hardware_grid: {base: a100-sxm4-80gb, axes: {hbm_bandwidth: "
                           "{from: 1TB/s, to: 12TB/s, step: 0.5TB/s}}}\n");
  ASSERT_EQ(s.hardware.size(), 24u);
  // C[64 x 13824] = A[64 x 8192] B[8192 x 13824] in bf16: a 64-token GEMM against a large
  // weight (decode-like, or a small micro-batch's slice). A100 file: 108 SMs, 312 TFLOP/s
  // bf16, gemm efficiency 0.87 -> 2.513 TFLOP/s per SM; memory efficiency 0.85; tile
  // overhead 0.7 us; launch 3 us; L2 40 MiB.
  //  - The 64 x 128 tile: 1 x 108 tiles = one full wave on 108 SMs; each tile
  //    2 * 64 * 128 * 8192 = 134.2 MFLOP -> 53.40 us + 0.7 us = 54.10 us (L2 feed
  //    7.2 TB/s / 108 x 2*64*128/(192*2) = 2.84 TFLOP/s per SM does not limit); epilogue:
  //    108 tiles x 64*128*2 B = 1.769 MB at 0.85 x bandwidth.
  //  - HBM bytes: A 1.049 MB + B 226.49 MB (227.5 MB > L2: read once, the wave covers one
  //    row of tiles, 1 x 64 + 108 x 128 rows/cols x 8192 x 2 B = 227.5 MB) + C 1.769 MB =
  //    229.31 MB.
  //  time(bw) = max(54.10 us + 1.769 MB / (0.85 bw), 229.31 MB / (0.85 bw)) + 3 us
  // (smaller tiles or split-K take longer at the roof and move as much or more at the
  // floor). The two meet where 227.54 MB / (0.85 bw) = 54.10 us: bw* = 4.95 TB/s.
  const double flop_per_tile = 2.0 * 64 * 128 * 8192;
  const double tile_s = flop_per_tile / (312e12 / 108 * 0.87) + 0.7e-6;
  const double c_bytes = 108.0 * 64 * 128 * 2;
  const double hbm_bytes = 64.0 * 8192 * 2 + 8192.0 * 13824 * 2 + c_bytes;
  auto expected = [&](double bw) {
    return std::max(tile_s + c_bytes / (0.85 * bw), hbm_bytes / (0.85 * bw)) + 3e-6;
  };
  const double knee_Bps = (hbm_bytes - c_bytes) / (0.85 * tile_s);
  EXPECT_NEAR(knee_Bps, 4.95e12, 0.01e12);
  std::vector<double> t;
  for (const HardwareSpec& hw : s.hardware) {
    if (hw.name == "a100-sxm4-80gb") continue;  // the base, 2.039 TB/s
    const double bw = hw.hbm_bandwidth_Bps;
    const double got = GemmModel(hw, DType::BF16).time(64, 13824, 8192, 1).time_s;
    EXPECT_NEAR(got, expected(bw), 1e-3 * expected(bw)) << hw.name;
    t.push_back(got);
  }
  // Below the knee every step of 0.5 TB/s pays (time ~ 1/bw); past it the time stays
  // within 1% of the compute roof however much bandwidth is added.
  const double roof = tile_s + 3e-6;
  for (size_t i = 1; i < t.size(); ++i) {
    const double bw = 1e12 + 0.5e12 * static_cast<double>(i);
    if (bw <= 4.5e12) {
      EXPECT_LT(t[i], 0.92 * t[i - 1]) << bw;
    } else if (bw >= 5.5e12) {
      EXPECT_LT(t[i], 1.01 * roof) << bw;
      EXPECT_GT(t[i], roof) << bw;
    }
  }
  // Speedup from 2 to 8 TB/s: (229.31 MB / 1.7 TB/s + 3 us) / (54.10 + 0.26 + 3 us) = 2.40x,
  // not the 4x of the bandwidth.
  EXPECT_NEAR(t[2] / t[14], (hbm_bytes / (0.85 * 2e12) + 3e-6) / expected(8e12), 1e-3);
  EXPECT_NEAR(t[2] / t[14], 2.40, 0.01);
}

TEST(VariantStudy, CaseBMakesAFullRecomputeLayoutFitWithLess) {
  const SweepSpec s = load("case-b.yaml",
                           "model: llama3-70b\nhardware: [a100-sxm4-80gb, a100-b-hbm-160gb]\n"
                           "network: dgx-a100-superpod\ngpus: 256\n"
                           "training: {framework: nemo-24.07, global_batch_size: 512, "
                           "seq_length: 8192}\n");
  PointEvaluator pe(s);
  // Llama 3 70B, tp 2 with SP, pp 1, dp 128, ZeRO-3, mbs 1, s = 8192 (docs/model.md sec 3,
  // Korthikanti et al. 2022 Table 2 generalised): h = 8192, a = 64 heads, g = 8 KV heads,
  // d = 128, f = 28672 (SwiGLU), L = 80, no dropout, fused attention, t = sigma = 2.
  //  selective/none, per layer: R/sigma + S/t with R = 8sbh = 536.9 MB and
  //   S = 2sbd(a+2g) 167.8 MB + 2sbad 134.2 MB + 6sbf 1409.3 MB + 4sba 2.1 MB = 1713.4 MB
  //   -> 268.4 + 856.7 = 1125.1 MB; x 80 layers = 90.01 GB = 83.8 GiB > 80 GiB on its own.
  //  full: the layer input only, 2sbh/sigma = 67.1 MB per layer: 5.37 GB for 80 layers,
  //   plus the one layer being replayed, whose activations live until its backward ends
  //   (1125.1 MB, docs/model.md sec 14).
  //  both: the last stage's extras 2sbh/sigma + 2sbh + 6sbV/t = 0.067 + 0.134 + 3.152 GB.
  //  full: the replayed layer comes after the loss's and the LM head's backward, whose
  //   buffers NeMo (Megatron-Core) frees by then (loss_bytes_held_per_logit 0): the peak is
  //   the larger moment, max(extras 3.35 GB, 1125.1 MB) = the extras (docs/model.md sec 3).
  const double sbh = 8192.0 * 8192;
  const double per_layer =
      8 * sbh / 2 + (2 * 8192.0 * 128 * 80 + 2 * sbh + 6 * 8192.0 * 28672 + 4 * 8192.0 * 64) / 2;
  const double extras = 2 * sbh / 2 + 2 * sbh + 6 * 8192.0 * 128256 / 2;
  Point p;
  p.par.tp = 2;
  p.par.pp = 1;
  p.par.dp = 128;
  p.par.sp = true;
  p.par.mbs = 1;
  p.par.zero_stage = 3;
  Workload w;
  EvalResult r[2][3];  // [hardware][recompute none, selective, full]
  for (int h = 0; h < 2; ++h)
    for (int rc = 0; rc < 3; ++rc) {
      p.hardware = h;
      p.par.recompute = static_cast<Recompute>(rc);
      pe.evaluate(p, w, r[h][rc]);
    }
  for (int h = 0; h < 2; ++h) {
    // Footprints do not depend on the capacity.
    EXPECT_DOUBLE_EQ(r[0][1].peak_memory_bytes, r[1][1].peak_memory_bytes);
    EXPECT_NEAR(r[h][1].activations_bytes, 80 * per_layer + extras, 0.005 * (80 * per_layer));
    EXPECT_NEAR(r[h][2].activations_bytes, 80 * 2 * sbh / 2 + std::max(per_layer, extras),
                0.005 * (80 * 2 * sbh / 2));
  }
  // 80 GiB: only full recomputation fits (the activations alone exceed the capacity).
  EXPECT_GT(80 * per_layer, 80.0 * (1 << 30));
  EXPECT_EQ(r[0][0].status, Status::OutOfMemory);
  EXPECT_EQ(r[0][1].status, Status::OutOfMemory);
  EXPECT_EQ(r[0][2].status, Status::Ok);
  // The smallest change that fits: full recomputation of some of the layers
  // (recompute_num_layers under recompute: full), not of all 80.
  EXPECT_EQ(r[0][1].fit_hint, static_cast<uint8_t>(FitHint::RecomputeNumLayers));
  EXPECT_GT(r[0][1].fit_hint_value, 0);
  EXPECT_LT(r[0][1].fit_hint_value, 80);
  // 160 GiB: selective and none fit, and run faster than full recomputation on the 80 GB
  // GPU: full replays each layer's forward, 1/3 more compute (4 passes' worth for 3).
  EXPECT_EQ(r[1][0].status, Status::Ok);
  EXPECT_EQ(r[1][1].status, Status::Ok);
  EXPECT_LT(r[1][1].peak_memory_bytes, 160.0 * (1 << 30));
  EXPECT_GT(r[1][1].tokens_per_s_per_gpu, 1.15 * r[0][2].tokens_per_s_per_gpu);
}

}  // namespace
}  // namespace rapid

namespace rapid {
namespace {

TEST(VariantStudy, FasterNvlinkNeverSlowsTheStep) {
  // An H100 with 4x NVLink (1800 GB/s per direction): a TP collective overlapped with a
  // GEMM would want 2 B of HBM per byte sent x 1800 GB/s x 0.8 = 2.88 TB/s, more than the
  // 3.35 TB/s x 0.85 = 2.85 TB/s HBM delivers. Shared max-min fairly with an HBM-bound
  // kernel it gets half: 1.42 TB/s (interference.cpp). Before that cap the kernel kept the
  // 10% floor of HBM and the step took twice as long as on the plain H100.
  const SweepSpec s = load("nvlink.yaml",
                           "model: llama3-70b\nhardware: [h100-sxm5-80gb, {name: h100-4x-nvlink, "
                           "base: h100-sxm5-80gb, overrides: {nvlink_bandwidth: {scale: 4}}}]\n"
                           "network: dgx-h100-superpod\ngpus: 256\ntraining: {framework: "
                           "nemo-24.07, global_batch_size: 512, seq_length: 8192}\n");
  PointEvaluator pe(s);
  const InterferenceModel& im = pe.evaluator(1).interference();
  const double half = 0.5 * 3.35e12 * 0.85;
  EXPECT_NEAR(im.contention(InterferenceModel::TpGather).hbm_Bps, half, 1e-6 * half);
  // The plain H100: 2 x 450 GB/s x 0.8 = 720 GB/s, under the cap.
  EXPECT_NEAR(pe.evaluator(0).interference().contention(InterferenceModel::TpGather).hbm_Bps, 720e9,
              1e3);
  Point p;
  p.par.tp = 8;
  p.par.dp = 32;
  p.par.sp = true;
  p.par.zero_stage = 1;
  p.par.recompute = Recompute::None;
  Workload w;
  EvalResult base, fast;
  pe.evaluate(p, w, base);
  p.hardware = 1;
  pe.evaluate(p, w, fast);
  ASSERT_EQ(base.status, Status::Ok);
  ASSERT_EQ(fast.status, Status::Ok);
  EXPECT_LE(fast.step_time_s, base.step_time_s);
  EXPECT_LE(fast.layer_comm_time_s(), base.layer_comm_time_s());
}

}  // namespace
}  // namespace rapid
