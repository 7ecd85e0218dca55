// Fused attention tile model (FlashAttention-2, FlashAttention-3, cuDNN). Every formula is
// derived in docs/attention.md; the comments name the section. Sources: Dao et al. 2022
// "FlashAttention" (tiling, online softmax); Dao 2023 "FlashAttention-2" (Algorithms 1 and 2,
// sec. 3.2 parallelism over the sequence, sec. 3.3 work partitioning between warps);
// flash-attention v2 sources (csrc/flash_attn/src/kernel_traits.h, flash_*_launch_template.h: SMEM
// of each kernel, the pre-processing and dQ conversion kernels of the backward); NVIDIA A100 (2020)
// and H100 (2022) architecture whitepapers (register file, warps per SM).
#include "rapid/cost/attention_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "attention_tiles.hpp"
#include "rapid/common/error.hpp"

namespace rapid {
namespace {

constexpr std::array<TileChoice, 12> kCandidates = {{{32, 32},
                                                     {32, 64},
                                                     {32, 128},
                                                     {64, 32},
                                                     {64, 64},
                                                     {64, 128},
                                                     {128, 32},
                                                     {128, 64},
                                                     {128, 128},
                                                     {256, 32},
                                                     {256, 64},
                                                     {256, 128}}};

// Register file of one SM: 65,536 32-bit registers on A100 (sm_80) and H100 (sm_90)
// (whitepapers, "SM architecture" tables).
constexpr double kRegisterFileBytes = 65536.0 * 4.0;
// The fp32 accumulators of a block take at most 3/4 of its registers; the rest holds
// operand fragments, softmax statistics and addresses. FA2's largest shipped kernel (the
// d = 128 backward, Br x Bc = 64 x 128, 8 warps: dK, dV, S, dP = 48 Ki fp32 = 192 KiB) sits
// exactly at this bound with one block per SM. docs/attention.md "Occupancy".
constexpr double kAccumulatorShare = 0.75;
// An SM holds at most 64 resident warps (2,048 threads; A100 and H100 whitepapers) and FA2
// blocks have at least 4 warps.
constexpr int kMaxBlocksPerSm = 16;
// The attention efficiency is calibrated on long sequences where the kernels run 128-wide
// K/V tiles; the per-tile rescale term is normalized to 1 there (docs "Compute").
constexpr double kReferenceBlockKv = 128.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
// FP32 instructions per attention score element besides its exponential (FA2/FA3
// softmax.h: scale and max subtraction in one FFMA, the running max, the row sum, and the
// conversion of P to 16 bits, one instruction per two elements): 3.5, rounded to 4. The
// exponential runs on the special-function units (Shah et al. 2024, sec 3: 3.9 TFLOP/s
// of exp on H100 SXM5 against 989 TFLOP/s of matmul).
constexpr double kSoftmaxFp32Ops = 4.0;
// Tile pairs a block's pipeline needs before its loads, MMA and softmax overlap: the first
// K/V tile is loaded and its scores exponentiated with nothing to hide behind (Shah et al.
// 2024, sec 3.1-3.2: producer warps and the intra-warpgroup pipeline overlap from the second
// iteration on). Counted once per wave of resident blocks.
constexpr double kFillPairs = 1.0;

double clamp_heads(double heads, double total) {
  return std::clamp(heads, 1.0, total);
}

}  // namespace

AttentionShape AttentionShape::from_op(const Op& op) {
  AttentionShape s;
  s.batch_heads = op.batch;
  s.seq_q = op.m;
  s.seq_kv = op.n;
  s.head_dim = op.k;
  s.gqa_group = std::max<int64_t>(1, op.gqa_group);
  s.causal = op.causal;
  return s;
}

std::span<const TileChoice> AttentionModel::candidates() {
  return kCandidates;
}

namespace {
// Hopper (sm_90): FA3 and cuDNN's warp-specialized kernels exist for it.
bool is_hopper(double cc) {
  return cc >= 9.0 && cc < 10.0;
}
}  // namespace

TileChoice kernel_tile(AttentionImpl impl, int64_t d, bool causal, bool bwd, bool fp8, double cc) {
  const bool hopper = is_hopper(cc);
  if (impl == AttentionImpl::FA3 || (impl == AttentionImpl::CuDNN && hopper)) {
    // hopper/tile_size.h (tile_size_fwd_sm90) and flash_bwd_launch_template.h (sm90).
    if (bwd) {
      if (d <= 64) return {128, 128};
      if (d <= 128) return {causal ? 64 : 80, 128};
      return {64, 80};
    }
    if (fp8) {
      if (d <= 64) return {192, 160};
      if (d <= 128) return {128, 224};
      return {128, 128};
    }
    if (d <= 64) return {192, causal ? 128 : 192};
    if (d <= 128) return {128, causal ? 128 : 176};
    return {128, 80};
  }
  // FA2 (and cuDNN off Hopper): flash_fwd_launch_template.h / flash_bwd_launch_template.h.
  if (bwd) {
    if (d <= 64) return {128, 128};
    if (d <= 128) return {64, 128};
    return {64, 64};
  }
  if (d <= 64) return {128, 128};
  if (d <= 128) return {128, 64};
  return {hopper ? 64 : 128, 64};  // "2 CTAs per SM" on H100; 8 warps on A100
}

AttentionModel::AttentionModel(const HardwareSpec& hw, DType dtype, AttentionImpl impl,
                               int64_t reserved_sms)
    : impl_(impl == AttentionImpl::Unfused ? AttentionImpl::FA2 : impl) {
  const double own = hw.tensor_peak_FLOPs[static_cast<int>(dtype)];
  const double peak = own > 0 ? own : hw.tensor_peak_FLOPs[static_cast<int>(DType::BF16)];
  cc_ = hw.compute_capability;
  fp8_ = dtype == DType::FP8;
  // FA3's warp-specialized kernels, and cuDNN's Hopper kernels, are persistent: one block
  // (a producer and two consumer warpgroups) per SM (Shah et al. 2024, sec 3.1).
  persistent_ = impl_ == AttentionImpl::FA3 || (impl_ == AttentionImpl::CuDNN && is_hopper(cc_));
  // FP8 MMAs reach a smaller share of their peak than bf16 ones: the ratio of the measured
  // best FP8 and bf16 matmuls (hardware file, [MAMF]), not the bf16 efficiency doubled.
  const double fp8_mma = fp8_ && own > 0 && hw.gemm_fp8_efficiency > 0
                             ? hw.gemm_fp8_efficiency / hw.gemm_efficiency
                             : 1.0;
  const double per_sm_peak = peak / static_cast<double>(hw.num_sms) * fp8_mma;
  sms_ = static_cast<double>(std::max<int64_t>(1, hw.num_sms - reserved_sms));
  const HardwareSpec::KernelEfficiency e = hw.attention_kernel_efficiency(impl_);
  sm_rate_fwd_ = per_sm_peak * (e.forward > 0 ? e.forward : 0.5);
  sm_rate_bwd_ = per_sm_peak * (e.backward > 0 ? e.backward : 0.5);
  softmax_exposed_fwd_ = e.softmax_forward;
  softmax_exposed_bwd_ = e.softmax_backward;
  // One score element: one exponential on the special-function units, kSoftmaxFp32Ops on
  // the FP32 lanes (the vector peak counts an FMA as 2 FLOPs).
  const double sfu_per_sm = hw.sfu_per_sm_per_clock * hw.sm_clock_Hz;
  const double fp32_per_sm = hw.vector_peak_FLOPs / 2.0 / static_cast<double>(hw.num_sms);
  softmax_elem_s_ = (sfu_per_sm > 0 ? 1.0 / sfu_per_sm : 0.0) +
                    (fp32_per_sm > 0 ? kSoftmaxFp32Ops / fp32_per_sm : 0.0);
  // FP32 multiplies per second: the vector peak counts an FMA as 2 FLOPs.
  rescale_ = hw.vector_peak_FLOPs > 0 ? peak / (hw.vector_peak_FLOPs / 2.0) : 0.0;
  smem_ = hw.smem_per_sm_bytes;
  l2_size_ = hw.l2_size_bytes;
  l2_Bps_ = hw.l2_bandwidth_Bps;
  hbm_Bps_ = hw.hbm_bandwidth_Bps * hw.memory_efficiency;
  elem_ = dtype_bytes(dtype);
  launch_s_ = hw.kernel_launch_s;
}

AttentionTiming AttentionModel::evaluate(bool bwd, const AttentionShape& s, int br_i,
                                         int bc_i) const {
  RAPID_ASSERT(s.batch_heads >= 1 && s.seq_q >= 1 && s.seq_kv >= 1 && s.head_dim >= 1 &&
                   s.gqa_group >= 1 && br_i >= 1 && bc_i >= 1,
               "attention shape and tile sizes must be >= 1");
  AttentionTiming t;
  t.block_q = br_i;
  t.block_kv = bc_i;
  const double br = br_i, bc = bc_i, d = static_cast<double>(s.head_dim), e = elem_;

  // Occupancy (docs "Occupancy"): FA2 kernel_traits.h SMEM layouts; fp32 accumulators.
  //   forward:  SMEM = (Br + 2 Bc) d e              (Q, K, V tiles)
  //             acc  = 4 (Br d + Br Bc)             (O and S/P)
  //   backward: SMEM = (3 Br d + 2 Bc d + 2 Br Bc) e (Q double-buffered, dO, K, V, P, dS)
  //             acc  = 4 (2 Bc d + 2 Br Bc)         (dK, dV and S, dP)
  t.smem_bytes = bwd ? (3 * br * d + 2 * bc * d + 2 * br * bc) * e : (br + 2 * bc) * d * e;
  const double acc = 4.0 * (bwd ? 2 * bc * d + 2 * br * bc : br * d + br * bc);
  t.register_bytes = acc / kAccumulatorShare;
  const double by_smem = std::floor(smem_ / t.smem_bytes);
  const double by_regs = std::floor(kRegisterFileBytes / t.register_bytes);
  // FA3 and cuDNN's Hopper kernels are persistent: one block (two consumer warpgroups and
  // a producer) per SM.
  const double cap = persistent_ ? 1.0 : double{kMaxBlocksPerSm};
  t.blocks_per_sm = static_cast<int>(std::min({by_smem, by_regs, cap}));
  t.fits = t.blocks_per_sm >= 1;
  const double occupancy = std::max(1, t.blocks_per_sm);  // a non-fitting tile: as if spilled

  // Grid and tile pairs (docs "Tiling"). Forward blocks own a query tile, backward blocks a
  // K/V tile; both compute the same (query tile, K/V tile) pairs.
  const detail::TilePairs p = detail::count_tile_pairs(s, br_i, bc_i);
  const double hq = static_cast<double>(s.batch_heads), g = static_cast<double>(s.gqa_group);
  const double hkv = hq / g, sq = static_cast<double>(s.seq_q);
  const double skv = static_cast<double>(s.seq_kv);
  const double pairs = hq * static_cast<double>(p.per_head);
  const double blocks = hq * static_cast<double>(bwd ? p.kv_tiles : p.q_tiles);
  const double slots = sms_ * occupancy;
  t.tile_pairs = pairs;
  t.blocks = static_cast<int64_t>(blocks);
  t.waves = static_cast<int64_t>(std::ceil(blocks / slots));

  // Busiest SM (docs "Waves"): blocks go to SMs in turn, so one SM gets ceil(blocks / SMs)
  // of them; under a causal mask one block may alone outlast that (the longest row/column).
  const double longest = static_cast<double>(bwd ? p.max_per_kv_tile : p.max_per_q_tile);
  const double busiest = std::max(longest, pairs / blocks * std::ceil(blocks / sms_));
  const double imbalance = busiest / (pairs / sms_);
  t.sm_utilization = 1.0 / imbalance;

  // Compute (docs "Compute"): 4 Br Bc d FLOPs per pair forward (S = Q K^T, O += P V),
  // 10 Br Bc d backward (S recomputed, dP, dV, dK, dQ). Forward also rescales its Br x d
  // output accumulator once per K/V tile: Br d FP32 multiplies per 4 Br Bc d tensor FLOPs.
  // Each pair exponentiates Br x Bc scores (backward: P recomputed from the logsumexp) with
  // their FP32 ops, after or beside its MMAs (docs "Softmax").
  const double flops_pair = (bwd ? 10.0 : 4.0) * br * bc * d;
  double rate = bwd ? sm_rate_bwd_ : sm_rate_fwd_;
  if (!bwd) rate *= (1.0 + rescale_ / (4.0 * kReferenceBlockKv)) / (1.0 + rescale_ / (4.0 * bc));
  t.mma_pair_s = flops_pair / rate;
  t.softmax_pair_s = br * bc * softmax_elem_s_;
  // What the kernel's scheduling leaves exposed of it (warps of other blocks, or the other
  // warpgroup under ping-pong, hide the rest behind their MMAs): a share fitted per kernel
  // on its published head-dim sweep, where the MMA work per score element grows with the
  // head dim and the softmax work does not (docs/attention.md "Softmax").
  const double pair_s =
      t.mma_pair_s + (bwd ? softmax_exposed_bwd_ : softmax_exposed_fwd_) * t.softmax_pair_s;
  t.flops = pairs * flops_pair;
  t.compute_s = busiest * pair_s;
  t.fill_s = kFillPairs * static_cast<double>(t.waves) * pair_s;

  // Memory (docs "Memory"): first reads come from HBM; re-reads (`again`) hit L2 when the
  // working set of the heads in flight fits (partial fit: hit rate = L2 / working set).
  // `hbm_fixed` is the rest of the HBM traffic, `l2_fixed` the rest of the SM <-> L2 traffic.
  const double concurrent = std::min(blocks, slots);
  double first = 0, again = 0, hbm_fixed = 0, l2_fixed = 0, atomics_again = 0, working_set = 0;
  if (!bwd) {
    const double kv_first = hkv * 2 * skv * d * e;
    const double q = hq * sq * d * e, o = hq * sq * (d * e + 4);  // O and logsumexp (fp32)
    first = kv_first;
    again = pairs * 2 * bc * d * e - kv_first;
    t.read_bytes = first + again + q;
    hbm_fixed = l2_fixed = q + o;
    const double kv_heads = static_cast<double>(p.q_tiles) * g;  // blocks sharing a K/V head
    working_set = clamp_heads(concurrent / kv_heads, hkv) * 2 * skv * d * e;
  } else {
    const double row = 2 * d * e + 8;  // a row of Q and dO, plus LSE and D (fp32)
    const double q_first = hq * sq * row, kv_first = hkv * 2 * skv * d * e;
    const double q_reads = pairs * br * row;
    const double kv_reads = hq * static_cast<double>(p.kv_tiles) * 2 * bc * d * e;
    const double dq_acc = hq * sq * d * 4, dq_atomics = pairs * br * d * 4;
    const double dkv = hq * skv * 2 * d * e;  // per query head (GQA: summed afterwards)
    first = q_first + kv_first;
    // (max: with seq_q > seq_kv, causal rows that see no key are never read)
    again = std::max(0.0, q_reads - q_first) + (kv_reads - kv_first);
    t.read_bytes = q_reads + kv_reads;
    atomics_again = std::max(0.0, dq_atomics - dq_acc);  // a miss: fetch and write back
    hbm_fixed = 2 * dq_acc + dkv;  // dQ accumulator fetched once, written back once
    l2_fixed = dq_atomics + dkv;
    const double q_heads = clamp_heads(concurrent / static_cast<double>(p.kv_tiles), hq);
    working_set = q_heads * sq * (row + 4 * d) + std::max(1.0, q_heads / g) * 2 * skv * d * e;
  }
  t.reloads = again / first;
  t.l2_hit_rate = working_set <= l2_size_ ? 1.0 : l2_size_ / working_set;
  const double miss = 1.0 - t.l2_hit_rate;
  t.hbm_bytes = first + hbm_fixed + miss * (again + 2 * atomics_again);
  t.l2_bytes = first + again + l2_fixed;
  t.memory_s = std::max(t.hbm_bytes / hbm_Bps_, imbalance * t.l2_bytes / l2_Bps_);

  // Auxiliary kernels of the backward (docs "Backward"): D = rowsum(dO o O) and zeroing the
  // fp32 dQ accumulator; dQ accumulator -> dQ; with GQA, the per-query-head dK, dV summed
  // into the K/V heads.
  int kernels = 1;
  if (bwd) {
    t.aux_bytes = hq * sq * (2 * d * e + 4 + 4 * d) + hq * sq * (4 * d + d * e);
    kernels = 3;
    if (s.gqa_group > 1) {
      t.aux_bytes += 2 * hq * skv * d * e + 2 * hkv * skv * d * e;
      kernels = 4;
    }
    t.aux_s = t.aux_bytes / hbm_Bps_;
  }
  t.launch_s = kernels * launch_s_;
  t.time_s = std::max(t.compute_s, t.memory_s) + t.fill_s + t.aux_s + t.launch_s;
  t.effective_bandwidth_Bps = t.read_bytes / t.time_s;
  return t;
}

namespace {
// Is `t` a better choice than `b`? Smaller time; on a tie (a memory-bound case), less
// compute (no tile padding wasted); then the later, larger tile (fewer blocks).
bool better(const AttentionTiming& t, const AttentionTiming& b) {
  constexpr double kTie = 1e-12;
  if (t.time_s < b.time_s * (1 - kTie)) return true;
  if (t.time_s > b.time_s * (1 + kTie)) return false;
  return t.compute_s <= b.compute_s * (1 + kTie);
}
}  // namespace

AttentionTiming AttentionModel::best(bool bwd, const AttentionShape& s) const {
  AttentionTiming best_fit, best_any;
  best_fit.time_s = best_any.time_s = best_fit.compute_s = best_any.compute_s = kInf;
  for (const TileChoice& c : kCandidates) {
    const AttentionTiming t = evaluate(bwd, s, c.block_q, c.block_kv);
    if (t.fits && better(t, best_fit)) best_fit = t;
    if (better(t, best_any)) best_any = t;
  }
  return best_fit.fits ? best_fit : best_any;  // no tile fits: the best as if spilled
}

AttentionTiming AttentionModel::forward(const AttentionShape& shape, TileChoice tile) const {
  if (tile.searched()) return best(false, shape);
  if (tile.automatic()) tile = kernel_tile(impl_, shape.head_dim, shape.causal, false, fp8_, cc_);
  return evaluate(false, shape, tile.block_q, tile.block_kv);
}

AttentionTiming AttentionModel::backward(const AttentionShape& shape, TileChoice tile) const {
  if (tile.searched()) return best(true, shape);
  if (tile.automatic()) tile = kernel_tile(impl_, shape.head_dim, shape.causal, true, fp8_, cc_);
  return evaluate(true, shape, tile.block_q, tile.block_kv);
}

double AttentionModel::time(const Op& op) const {
  const AttentionShape s = AttentionShape::from_op(op);
  const bool bwd = std::string_view(op.name).ends_with("_bwd");
  return (bwd ? backward(s) : forward(s)).time_s;
}

}  // namespace rapid
