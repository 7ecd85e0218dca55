// Time of a fused attention kernel on one GPU from its tiles (docs/architecture.md "Attention":
// FlashAttention tiling: tile size vs SRAM/L2, L2 hit rate, effective bandwidth), for
// FlashAttention-2, FlashAttention-3 and cuDNN fused attention (docs/attention.md sec 10).
//
// Forward (Dao 2023, Algorithm 1, "parallelism over the sequence length"): one thread block
// per (query head, Br-row query tile); it keeps its Q tile on chip and streams the Bc-row
// K/V tiles of its K/V head (causal: only tiles at or below the diagonal), rescaling its
// output accumulator once per K/V tile (online softmax, Dao et al. 2022).
// Backward (Dao 2023, Algorithm 2): one thread block per (query head, K/V tile); it keeps
// K_j, V_j on chip, streams Q_i, dO_i, and adds its dQ_i share with fp32 atomics in L2;
// a pre-processing kernel (D = rowsum(dO o O)) and a dQ conversion kernel run around it.
//
//   blocks/SM = min(SMEM / block SMEM, register file / block registers, 16; 1 for the
//               persistent Hopper kernels: FA3, cuDNN)
//   pair      = MMA time (FLOPs per pair / (SM tensor rate x the kernel's efficiency)) +
//               the kernel's exposed share of the softmax time (Br Bc exponentials on the
//               special-function units and their FP32 ops; what ping-pong scheduling and
//               other warps do not hide: Shah et al. 2024 sec 3.1, docs/attention.md sec 10)
//   compute   = busiest SM's tile pairs x pair; fill = one pair per wave, not overlapped
//   memory    = max(HBM bytes / (HBM bw x eff), busiest SM's share of L2 bytes / L2 bw)
//               where re-reads of K/V (forward) or Q/dO (backward) hit L2 when the working
//               set of the heads in flight fits in L2 (partial fit: hit rate = L2 / set)
//   time      = max(compute, memory) + fill + auxiliary kernels + launches
// The automatic tile is the kernel's own (kernel_tile: its launch templates); search() takes
// the candidate (Br, Bc) with the smallest time. docs/attention.md
// derives every term; sources: Dao et al. 2022 (FlashAttention), Dao 2023 (FlashAttention-2),
// NVIDIA A100 (2020) and H100 (2022) architecture whitepapers, flash-attention v2 sources
// (csrc/flash_attn/src/kernel_traits.h: shared-memory layout of each kernel).
#pragma once

#include <cstdint>
#include <span>

#include "rapid/spec/attention_impl.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/workload/op.hpp"

namespace rapid {

/// One attention call on one GPU. All counts >= 1.
struct AttentionShape {
  int64_t batch_heads = 1;  ///< micro-batch x query heads on this GPU
  int64_t seq_q = 1;        ///< query tokens per sequence
  int64_t seq_kv = 1;       ///< key/value tokens per sequence
  int64_t head_dim = 128;   ///< d, elements
  int64_t gqa_group = 1;    ///< query heads per K/V head (GQA); divides batch_heads
  bool causal = false;      ///< causal mask aligned to the bottom-right corner (FA2 >= 2.1)

  /// The shape of an OpKind::Attention op (batch, m, n, k, gqa_group, causal; op.hpp).
  static AttentionShape from_op(const Op& op);
  /// The work benchmarks count (FlashAttention's benchmark scripts): 4 B S_q S_kv H d
  /// forward, halved under a causal mask, x 2.5 backward.
  double useful_flops(bool backward) const {
    return 4.0 * static_cast<double>(batch_heads) * static_cast<double>(seq_q) *
           static_cast<double>(seq_kv) * static_cast<double>(head_dim) * (causal ? 0.5 : 1.0) *
           (backward ? 2.5 : 1.0);
  }
};

/// Tile sizes of the kernel: Br query rows x Bc key rows. {0, 0}: the implementation's own
/// tile for the head dim (its launch templates); search(): the fastest candidate (a kernel
/// tuned per shape, PRODUCT.md scenario 4).
struct TileChoice {
  int block_q = 0;   ///< Br, rows of Q per tile
  int block_kv = 0;  ///< Bc, rows of K/V per tile
  bool automatic() const { return block_q <= 0 || block_kv <= 0; }
  bool searched() const { return block_q < 0; }
  static TileChoice search() { return {-1, -1}; }
};

/// Everything the model derives for one pass and one tile. Bytes and seconds; a tile that
/// does not fit on an SM has fits == false, blocks_per_sm == 0 and infinite times.
struct AttentionTiming {
  int block_q = 0;            ///< Br
  int block_kv = 0;           ///< Bc
  bool fits = false;          ///< block SMEM and registers fit on one SM
  double smem_bytes = 0;      ///< shared memory of one block
  double register_bytes = 0;  ///< registers of one block (fp32 accumulators / 0.75)
  int blocks_per_sm = 0;      ///< resident blocks per SM (occupancy)
  int64_t blocks = 0;         ///< thread blocks of the main kernel
  int64_t waves = 0;          ///< ceil(blocks / (num_sms x blocks_per_sm))
  double sm_utilization = 0;  ///< mean SM load / busiest SM load (wave and causal imbalance)
  double tile_pairs = 0;      ///< (query tile, K/V tile) pairs computed, all heads
  double flops = 0;           ///< FLOPs executed, masked parts of diagonal tiles included
  double reloads = 0;         ///< mean re-reads per element of the streamed operand after
                              ///< its first read (forward: K/V; backward: Q, dO and K/V)
  double l2_hit_rate = 0;     ///< fraction of those re-reads served by L2
  double read_bytes = 0;      ///< bytes the SMs read (first reads and re-reads)
  double hbm_bytes = 0;       ///< main kernel's HBM traffic (reads and writes)
  double l2_bytes = 0;        ///< main kernel's SM <-> L2 traffic (reads, writes, atomics)
  double effective_bandwidth_Bps = 0;  ///< read_bytes / time_s
  double mma_pair_s = 0;               ///< one tile pair's tensor-core time on one SM
  double softmax_pair_s = 0;           ///< one tile pair's exponentials and FP32 ops on one SM
  double compute_s = 0;                ///< main kernel: tile pairs on the busiest SM
  double fill_s = 0;                   ///< pipeline fill: one tile pair per wave, in sequence
  double memory_s = 0;                 ///< main kernel, HBM or L2 bound
  double aux_bytes = 0;                ///< HBM traffic of the auxiliary kernels (backward)
  double aux_s = 0;                    ///< time of the auxiliary kernels (backward)
  double launch_s = 0;                 ///< launch overhead, all kernels of the pass
  double time_s = 0;                   ///< max(compute_s, memory_s) + fill_s + aux_s + launch_s
};

/// The tile an implementation's launch templates use for a head dim, direction and mask on
/// a GPU of compute capability `cc` (FA2: csrc/flash_attn/src/flash_{fwd,bwd}_launch_
/// template.h; FA3: hopper/tile_size.h and flash_bwd_launch_template.h; cuDNN's kernels are
/// closed: FA3's tiles stand in for them on Hopper, FA2's elsewhere).
TileChoice kernel_tile(AttentionImpl impl, int64_t head_dim, bool causal, bool backward, bool fp8,
                       double cc);

/// Fused attention time model for one GPU, one element type and one implementation.
/// Thread-safe (const), allocation-free; keeps a copy of the few hardware numbers it needs.
class AttentionModel {
 public:
  /// `dtype` sets the element size and the tensor peak (BF16's when the dtype has none);
  /// `impl` the kernel (its efficiency from hw.attention_efficiency, FA2's when the GPU
  /// lacks it); `reserved_sms` SMs held by a concurrent communication kernel.
  AttentionModel(const HardwareSpec& hw, DType dtype, AttentionImpl impl = AttentionImpl::FA2,
                 int64_t reserved_sms = 0);

  /// Forward pass with `tile` ({0,0}: the implementation's own tile, search(): the fastest
  /// candidate). An explicit tile that does not fit returns fits == false (see
  /// AttentionTiming). Shape counts must be >= 1 and gqa_group must divide batch_heads
  /// (else a RAPID_ASSERT failure: a bug).
  AttentionTiming forward(const AttentionShape& shape, TileChoice tile = {}) const;
  /// Backward pass (main kernel + pre-processing + dQ conversion [+ GQA dK/dV sum]).
  AttentionTiming backward(const AttentionShape& shape, TileChoice tile = {}) const;

  /// Seconds for an OpKind::Attention op with the implementation's tile: backward when the
  /// op's name ends in "_bwd", else forward. For ComputeCost; no allocation.
  double time(const Op& op) const;

  /// The tiles search() tries: Br in {32, 64, 128, 256} x Bc in {32, 64, 128}.
  static std::span<const TileChoice> candidates();

 private:
  AttentionTiming evaluate(bool backward, const AttentionShape& s, int br, int bc) const;
  AttentionTiming best(bool backward, const AttentionShape& s) const;

  AttentionImpl impl_;
  bool persistent_;        // one block per SM (warp-specialized Hopper kernels)
  bool fp8_;               // 8-bit operands (FA3 FP8 tiles)
  double cc_;              // compute capability
  double sms_;             // streaming multiprocessors left to the kernel
  double sm_rate_fwd_;     // FLOP/s of one SM: tensor peak / SMs x forward efficiency
  double sm_rate_bwd_;     // the same with the backward efficiency
  double softmax_elem_s_;  // one SM's time for one score element's exp and FP32 ops
  double softmax_exposed_fwd_, softmax_exposed_bwd_;  // its share not hidden by MMAs
  double rescale_;   // tensor-core / FP32 rate ratio for the per-tile rescale term
  double smem_;      // bytes of shared memory per SM
  double l2_size_;   // bytes
  double l2_Bps_;    // aggregate L2 -> SM bandwidth
  double hbm_Bps_;   // achievable HBM bandwidth (peak x memory efficiency)
  double elem_;      // bytes per element
  double launch_s_;  // per kernel
};

}  // namespace rapid
