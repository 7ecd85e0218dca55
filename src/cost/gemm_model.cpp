#include "rapid/cost/gemm_model.hpp"
#include "rapid/common/eval_context.hpp"
#include "rapid/common/fnv1a.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace rapid {

namespace {

struct Tile {
  int m, n;
};
// CUTLASS/cuBLAS tile shapes for 16-bit and 8-bit tensor-core GEMMs on Ampere and Hopper.
constexpr std::array<Tile, 6> kTiles{
    {{128, 256}, {256, 128}, {128, 128}, {64, 128}, {128, 64}, {64, 64}}};
constexpr std::array<int, 4> kSplitK{1, 2, 4, 8};

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

double gemm_efficiency_of(const HardwareSpec& hw, DType dtype) {
  if (dtype == DType::FP4 && hw.gemm_fp4_efficiency > 0) return hw.gemm_fp4_efficiency;
  if ((dtype == DType::FP8 || dtype == DType::FP4) && hw.gemm_fp8_efficiency > 0)
    return hw.gemm_fp8_efficiency;
  return hw.gemm_efficiency;
}

GemmModel::GemmModel(const HardwareSpec& hw, DType dtype, int64_t reserved_sms,
                     double hbm_taken_Bps) {
  Params& P = params_;
  P.sms = static_cast<double>(std::max<int64_t>(1, hw.num_sms - reserved_sms));
  P.sm_rate = (hw.tensor_peak_FLOPs[static_cast<int>(dtype)] > 0
                   ? hw.tensor_peak_FLOPs[static_cast<int>(dtype)]
                   : hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)]) /
              static_cast<double>(hw.num_sms) * gemm_efficiency_of(hw, dtype);
  // The L2 feeds the SMs the kernel runs on; their share of it does not change.
  P.l2_feed_Bps = hw.l2_bandwidth_Bps * hw.l2_multicast * P.sms / static_cast<double>(hw.num_sms);
  P.l2_bytes = hw.l2_size_bytes;
  P.hbm_Bps = std::max(0.1 * hw.hbm_bandwidth_Bps * hw.memory_efficiency,
                       hw.hbm_bandwidth_Bps * hw.memory_efficiency - hbm_taken_Bps);
  P.elem = dtype_size_bytes(dtype);
  P.prologue_s = hw.gemm_tile_overhead_s;
  P.launch_s = hw.kernel_launch_s;
  // FNV-1a over the parameters' bytes: the time() memo's key.
  params_hash_ = fnv1a_bytes(kFnvOffsetBasis, &P, sizeof(Params));
}

GemmTiming GemmModel::time_with(int64_t m, int64_t n, int64_t k, int64_t batch, int tile_m,
                                int tile_n, int split_k) const {
  GemmTiming t;
  t.tile_m = tile_m;
  t.tile_n = tile_n;
  t.split_k = split_k;
  const int64_t tiles_m = ceil_div(m, tile_m), tiles_n = ceil_div(n, tile_n);
  const int64_t tiles_per_matrix = tiles_m * tiles_n;
  t.tiles = batch * tiles_per_matrix * split_k;
  const auto sms = static_cast<int64_t>(params_.sms);
  t.waves = ceil_div(t.tiles, sms);
  const double active = static_cast<double>(std::min(t.tiles, sms));

  const double a = tile_m, b = tile_n;
  const double k_split = static_cast<double>(ceil_div(k, split_k));
  const double feed_rate = params_.l2_feed_Bps / active * 2.0 * a * b / ((a + b) * params_.elem);
  const double rate = std::min(params_.sm_rate, feed_rate);
  const double tile_s = 2.0 * a * b * k_split / rate + params_.prologue_s;
  const int64_t last_wave = t.tiles - (t.waves - 1) * sms;
  const double epilogue_s = static_cast<double>(last_wave) * a * b * params_.elem / params_.hbm_Bps;
  t.compute_s = static_cast<double>(t.waves) * tile_s + epilogue_s;

  // HBM traffic: A and B once if they stay in L2, else once per wave of the tiles they
  // feed (a wave covers about sqrt(W) x sqrt(W) tiles of C); C written once; split-K
  // partial sums written and read back in fp32.
  const double md = static_cast<double>(m), nd = static_cast<double>(n);
  const double kd = static_cast<double>(k), bd = static_cast<double>(batch);
  const double ab_bytes = (md * kd + kd * nd) * params_.elem;
  double ab_traffic = bd * ab_bytes;
  if (ab_bytes > params_.l2_bytes) {
    const double per_wave = std::min(active, static_cast<double>(tiles_per_matrix));
    const double side = std::sqrt(per_wave);
    const double rows = std::min(static_cast<double>(tiles_m), side);
    const double cols = std::min(static_cast<double>(tiles_n), per_wave / rows);
    const double waves_per_matrix = std::ceil(static_cast<double>(tiles_per_matrix) / per_wave);
    ab_traffic =
        bd * std::max(ab_bytes, waves_per_matrix * (rows * a + cols * b) * kd * params_.elem);
  }
  const double c_traffic = bd * md * nd * params_.elem;
  const double split_traffic = split_k > 1 ? 2.0 * (split_k - 1) * bd * md * nd * 4.0 : 0.0;
  t.hbm_bytes = ab_traffic + c_traffic + split_traffic;
  t.memory_s = t.hbm_bytes / params_.hbm_Bps;
  t.time_s = std::max(t.compute_s, t.memory_s) + params_.launch_s * (split_k > 1 ? 2.0 : 1.0);
  return t;
}

struct GemmModel::Timed {
  Params params;
  int64_t shape[4] = {-1, -1, -1, -1};
  GemmTiming timing;
};

GemmTiming GemmModel::time(int64_t m, int64_t n, int64_t k, int64_t batch) const {
  // The shapes this thread timed lately, on models with these parameters: a sweep times
  // the same few GEMMs (per tp, cp, mbs and sp) on every layout whose op templates it
  // builds, and 24 tile and split-K candidates each (direct-mapped, 16384 entries, 2.6 MiB
  // per thread, allocated on first use: on the 100-variant 10^8-point job 1.92 M points/s
  // per core against 1.77 M with 1024 entries).
  constexpr size_t kEntries = 16384;
  struct MemoSite;  // this call's memo, in the thread's evaluation context
  std::vector<Timed>& timed = EvalContext::current().buffer<MemoSite, std::vector<Timed>>();
  if (timed.empty()) timed.resize(kEntries);
  const int64_t shape[4] = {m, n, k, batch};
  uint64_t h = params_hash_;
  for (int64_t v : shape) h = fnv1a(h, static_cast<uint64_t>(v));
  Timed& e = timed[(h ^ (h >> 29)) % kEntries];
  if (std::memcmp(e.shape, shape, sizeof shape) == 0 &&
      std::memcmp(&e.params, &params_, sizeof(Params)) == 0)
    return e.timing;
  e.params = params_;
  std::memcpy(e.shape, shape, sizeof shape);
  e.timing = search(m, n, k, batch);
  return e.timing;
}

GemmTiming GemmModel::search(int64_t m, int64_t n, int64_t k, int64_t batch) const {
  GemmTiming best;
  best.time_s = -1;
  for (const Tile& tile : kTiles)
    for (int split : kSplitK) {
      if (split > 1 && k < 1024 * split) continue;  // split-K only for long K
      GemmTiming t = time_with(m, n, k, batch, tile.m, tile.n, split);
      if (best.time_s < 0 || t.time_s < best.time_s) best = t;
    }
  return best;
}

}  // namespace rapid
