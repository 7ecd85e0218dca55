// Time of a fused FlashAttention-2 kernel on one GPU from its tiles (DESIGN.md "Attention:
// FlashAttention tiling (tile size vs SRAM/L2, L2 hit rate, effective bandwidth)").
//
// Forward (Dao 2023, Algorithm 1, "parallelism over the sequence length"): one thread block
// per (query head, Br-row query tile); it keeps its Q tile on chip and streams the Bc-row
// K/V tiles of its K/V head (causal: only tiles at or below the diagonal), rescaling its
// output accumulator once per K/V tile (online softmax, Dao et al. 2022).
// Backward (Dao 2023, Algorithm 2): one thread block per (query head, K/V tile); it keeps
// K_j, V_j on chip, streams Q_i, dO_i, and adds its dQ_i share with fp32 atomics in L2;
// a pre-processing kernel (D = rowsum(dO o O)) and a dQ conversion kernel run around it.
//
//   blocks/SM = min(SMEM / block SMEM, register file / block registers, 16)
//   compute   = busiest SM's tile pairs x FLOPs per pair / (SM tensor rate x efficiency)
//   memory    = max(HBM bytes / (HBM bw x eff), busiest SM's share of L2 bytes / L2 bw)
//               where re-reads of K/V (forward) or Q/dO (backward) hit L2 when the working
//               set of the heads in flight fits in L2 (partial fit: hit rate = L2 / set)
//   time      = max(compute, memory) + auxiliary kernels + launches
// The automatic tile is the candidate (Br, Bc) with the smallest time. docs/attention.md
// derives every term; sources: Dao et al. 2022 (FlashAttention), Dao 2023 (FlashAttention-2),
// NVIDIA A100 (2020) and H100 (2022) architecture whitepapers, flash-attention v2 sources
// (csrc/flash_attn/src/kernel_traits.h: shared-memory layout of each kernel).
#pragma once

#include <cstdint>
#include <span>

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
};

/// Tile sizes of the kernel: Br query rows x Bc key rows. {0, 0} = choose automatically.
struct TileChoice {
  int block_q = 0;   ///< Br, rows of Q per tile
  int block_kv = 0;  ///< Bc, rows of K/V per tile
  bool automatic() const { return block_q <= 0 || block_kv <= 0; }
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
  double compute_s = 0;                ///< main kernel, tensor-core bound
  double memory_s = 0;                 ///< main kernel, HBM or L2 bound
  double aux_bytes = 0;                ///< HBM traffic of the auxiliary kernels (backward)
  double aux_s = 0;                    ///< time of the auxiliary kernels (backward)
  double launch_s = 0;                 ///< launch overhead, all kernels of the pass
  double time_s = 0;                   ///< max(compute_s, memory_s) + aux_s + launch_s
};

/// FlashAttention-2 time model for one GPU and one element type. Thread-safe (const),
/// allocation-free; keeps a copy of the few hardware numbers it needs.
class AttentionModel {
 public:
  /// `dtype` sets the element size and the tensor peak (BF16's when the dtype has none).
  AttentionModel(const HardwareSpec& hw, DType dtype);

  /// Forward pass; tile {0,0} picks the candidate with the smallest time. An explicit tile
  /// that does not fit returns fits == false (see AttentionTiming). Shape counts must be
  /// >= 1 and gqa_group must divide batch_heads (else a RAPID_ASSERT failure: a bug).
  AttentionTiming forward(const AttentionShape& shape, TileChoice tile = {}) const;
  /// Backward pass (main kernel + pre-processing + dQ conversion [+ GQA dK/dV sum]).
  AttentionTiming backward(const AttentionShape& shape, TileChoice tile = {}) const;

  /// Seconds for an OpKind::Attention op with the automatic tile: backward when the op's
  /// name ends in "_bwd", else forward. For ComputeCost; no allocation.
  double time(const Op& op) const;

  /// The tiles the automatic choice tries: Br in {32, 64, 128, 256} x Bc in {32, 64, 128}.
  static std::span<const TileChoice> candidates();

 private:
  AttentionTiming evaluate(bool backward, const AttentionShape& s, int br, int bc) const;
  AttentionTiming best(bool backward, const AttentionShape& s) const;

  double sms_;       // streaming multiprocessors
  double sm_rate_;   // FLOP/s of one SM: tensor peak / SMs x attention efficiency
  double rescale_;   // tensor-core / FP32 rate ratio for the per-tile rescale term
  double smem_;      // bytes of shared memory per SM
  double l2_size_;   // bytes
  double l2_Bps_;    // aggregate L2 -> SM bandwidth
  double hbm_Bps_;   // achievable HBM bandwidth (peak x memory efficiency)
  double elem_;      // bytes per element
  double launch_s_;  // per kernel
};

}  // namespace rapid
