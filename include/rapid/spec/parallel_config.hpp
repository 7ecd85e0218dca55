// The execution input: one parallel layout of a training step (Megatron-LM terms).
#pragma once

#include <cstdint>
#include <string>

#include "rapid/common/fnv1a.hpp"

namespace rapid {

/// Activation recomputation (Korthikanti et al. 2022): none, selective (attention core
/// only), full (whole layer, only its input kept); op: torchtitan's per-op selective
/// checkpointing (torchtitan/distributed/activation_checkpoint.py, selective_ac_option
/// "op": every matmul output saved but every second one of a block, the attention output
/// saved, every other op replayed from the block's input).
enum class Recompute : uint8_t { None, Selective, Full, Op };
/// Names of Recompute values, indexed by value (also the HDF5 enum member names).
inline constexpr const char* kRecomputeNames[] = {"none", "selective", "full", "op"};
inline const char* recompute_name(Recompute r) {
  return kRecomputeNames[static_cast<int>(r)];
}

/// How full recomputation picks its layers (Megatron-LM --recompute-method): uniform
/// checkpoints the input of every group of recompute_layers layers and recomputes them all;
/// block recomputes the first recompute_layers layers of each model chunk and keeps every
/// activation of the others; every recomputes every recompute_layers-th layer of a chunk
/// (the n-th, 2n-th, ...) and keeps every activation of the others (torchtitan's selective
/// layer AC, `selective_ac_option: "n"`: torchtitan/distributed/activation_checkpoint.py
/// checkpoints a block when its running count is a multiple of n).
enum class RecomputeMethod : uint8_t { Uniform, Block, Every };
inline constexpr const char* kRecomputeMethodNames[] = {"uniform", "block", "every"};

/// dp = gpus / (tp * pp * cp) when that product divides `gpus`, else 0, also when the
/// product passes int64 (each degree may be up to 2^24: tp * pp * cp up to 2^72).
int64_t data_parallel_degree(int64_t gpus, int64_t tp, int64_t pp, int64_t cp);

struct ParallelConfig {
  int32_t dp = 1;         ///< data-parallel replicas
  int32_t tp = 1;         ///< Megatron tensor parallel
  int32_t pp = 1;         ///< pipeline stages
  int32_t cp = 1;         ///< context parallel
  int32_t ep = 1;         ///< expert parallel (MoE layers; etp * ep divides tp * cp * dp)
  int32_t etp = 1;        ///< expert tensor parallel (MoE layers' experts split etp ways)
  int32_t vpp = 1;        ///< virtual pipeline stages per GPU (interleaved 1F1B)
  int32_t mbs = 1;        ///< micro-batch size (sequences)
  bool sp = false;        ///< Megatron sequence parallel (needs tp > 1)
  int8_t zero_stage = 0;  ///< ZeRO stage 0-3 (1 = distributed optimizer)
  Recompute recompute = Recompute::None;
  /// Full recompute only (otherwise uniform / 1): uniform: layers per checkpointed group
  /// (1: every layer, Korthikanti's "full"); block: layers recomputed per model chunk;
  /// every: the period n (every n-th layer recomputed).
  RecomputeMethod recompute_method = RecomputeMethod::Uniform;
  int32_t recompute_layers = 1;
  /// Layers whose activations go to host memory during forward and come back for
  /// backward (Megatron-Core cpu_offloading_num_layers; 0: none).
  int32_t offload_layers = 0;

  /// Full recompute of a subset or in groups (not every layer on its own).
  bool partial_recompute() const {
    return recompute == Recompute::Full &&
           (recompute_method != RecomputeMethod::Uniform || recompute_layers != 1);
  }

  int64_t num_gpus() const { return int64_t{dp} * tp * pp * cp; }
  /// Micro-batches per step m = gbs / (dp * mbs).
  int64_t num_microbatches(int64_t gbs) const { return gbs / (int64_t{dp} * mbs); }
  /// "dp4 tp8 pp8 cp1 ep1 etp1 vpp1 mbs1 sp1 zero1 recompute=selective" (with the method and
  /// layers of a partial full recompute, and offloaded layers when any).
  std::string describe() const;
  /// The recompute policy alone: `none`, `selective`, `full`, `full(block 3)`.
  std::string describe_recompute() const;

  friend bool operator==(const ParallelConfig&, const ParallelConfig&) = default;
};

/// FNV-1a word steps over every knob of `c` (common/fnv1a.hpp), finalized: the key of the
/// layout memos; a hit is confirmed by comparing the layouts.
inline uint64_t layout_hash(const ParallelConfig& c, uint64_t seed = kFnvOffsetBasis) {
  // Two 32-bit fields per word step (every field fits 32 bits): six steps.
  auto pair = [](int64_t lo, int64_t hi) {
    return static_cast<uint64_t>(static_cast<uint32_t>(lo)) |
           static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 32;
  };
  const int64_t flags = int64_t{c.sp} | int64_t{c.zero_stage} << 8 |
                        static_cast<int64_t>(c.recompute) << 16 |
                        static_cast<int64_t>(c.recompute_method) << 24;
  uint64_t h = seed;
  h = fnv1a(h, pair(c.dp, c.tp));
  h = fnv1a(h, pair(c.pp, c.cp));
  h = fnv1a(h, pair(c.ep, c.etp));
  h = fnv1a(h, pair(c.vpp, c.mbs));
  h = fnv1a(h, pair(flags, c.recompute_layers));
  h = fnv1a(h, static_cast<uint64_t>(static_cast<uint32_t>(c.offload_layers)));
  // A word step carries a field's high bits only upwards: the finalizer of MurmurHash3's
  // fmix64 (Appleby) spreads every bit over the word, low bits included (set indices).
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

}  // namespace rapid
