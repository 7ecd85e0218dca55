// Time of a (batched) GEMM on one GPU from its tiles (docs/architecture.md "GEMM":
// tensor-core peak per dtype, tiles over SMs (tile and wave quantization), HBM traffic
// reduced by L2 reuse).
//
// A cuBLAS/CUTLASS-style kernel splits C[m,n] into output tiles of a x b, optionally
// splits K by `split_k`, and runs the resulting thread blocks in waves of one block per SM:
//   waves     = ceil(tiles / num_sms)                      (wave quantization)
//   tiles     = batch * ceil(m/a) * ceil(n/b) * split_k     (tile quantization: partial
//                                                            edge tiles cost a full tile)
//   tile time = 2 a b (K/split_k) / rate + prologue
//   rate      = min(SM tensor peak * efficiency,
//                   L2 share of one active SM * 2ab / ((a+b) e) * multicast)
//               (operand feed: each K step loads (a+b) elements for 2ab FLOPs; Hopper's
//               TMA multicast shares a tile's operands between the SMs of a cluster)
//   compute   = waves * tile time + epilogue of the last wave (its C tiles written to HBM)
//   memory    = HBM bytes / achievable HBM bandwidth, where A and B are read once when they
//               fit in L2, else once per wave of the tiles they feed (L2 reuse within a
//               wave, Rasterization as a square patch of tiles)
//   time      = max(compute, memory) + launch (+ a reduction launch when split_k > 1)
// The kernel picks the tile shape and split-K with the smallest time (cuBLAS heuristics).
// Sources: NVIDIA "Matrix Multiplication Background User's Guide" (tile and wave
// quantization); CUTLASS 3 Hopper GEMM tile shapes; NVIDIA H100 whitepaper (thread block
// clusters, TMA multicast); Williams et al. 2009 (roofline). docs/model.md derives it.
#pragma once

#include <cstdint>

#include "rapid/spec/hardware_spec.hpp"

namespace rapid {

struct GemmTiming {
  double time_s = 0;
  double compute_s = 0;
  double memory_s = 0;
  int tile_m = 0, tile_n = 0, split_k = 1;
  int64_t tiles = 0;  ///< thread blocks, all batches and K splits
  int64_t waves = 0;
  double hbm_bytes = 0;
};

/// The fraction of `dtype`'s tensor peak a large GEMM reaches on `hw`: efficiency.gemm_fp4
/// for FP4 (else gemm_fp8's), efficiency.gemm_fp8 for FP8, when the file gives them, else
/// efficiency.gemm (the bf16 fraction).
double gemm_efficiency_of(const HardwareSpec& hw, DType dtype);

class GemmModel {
 public:
  /// `dtype` selects the tensor peak, the efficiency (gemm_efficiency_of) and the element
  /// size (half a byte for FP4). `reserved_sms` SMs and `hbm_taken_Bps` of HBM
  /// bandwidth are held by a concurrent communication kernel (docs/model.md "Interference").
  GemmModel(const HardwareSpec& hw, DType dtype, int64_t reserved_sms = 0,
            double hbm_taken_Bps = 0);

  /// C[m,n] = A[m,k] B[k,n], `batch` independent products in one launch. Dimensions >= 1.
  /// The best tile shape and split-K (remembered per thread for the shapes and parameters
  /// timed lately).
  GemmTiming time(int64_t m, int64_t n, int64_t k, int64_t batch = 1) const;

  /// The same for one fixed tile shape and split-K (for tests and `rapid op gemm`).
  GemmTiming time_with(int64_t m, int64_t n, int64_t k, int64_t batch, int tile_m, int tile_n,
                       int split_k) const;

  struct Timed;  ///< an entry of time()'s memo (per thread, eval_context.hpp)

 private:
  /// time() without its memo: every tile shape and split-K.
  GemmTiming search(int64_t m, int64_t n, int64_t k, int64_t batch) const;
  struct Params {
    double sms = 0;
    double sm_rate = 0;      // FLOP/s of one SM at the calibrated efficiency
    double l2_feed_Bps = 0;  // L2 -> SM operand bandwidth, all SMs, times the multicast factor
    double l2_bytes = 0;
    double hbm_Bps = 0;  // achievable
    double elem = 0;     // bytes per element
    double prologue_s = 0;
    double launch_s = 0;
  };
  Params params_;
  uint64_t params_hash_ = 0;
};

}  // namespace rapid
