// `rapid op KIND ...`: the time of one operator on one GPU, with the model's intermediate
// quantities. Kinds: `attention` (FlashAttention-2 tiles, docs/attention.md).
//   rapid op attention --hardware FILE --seq N --heads H [--kv-heads G] [--head-dim D]
//                      [--batch B] [--seq-kv N] [--causal true|false] [--backward]
//                      [--tile BRxBC] [--dtype bf16]
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace rapid {

/// Command-line values of `rapid op attention` (0 = "same as --seq/--heads").
struct AttentionOpOptions {
  std::string hardware;  ///< hardware YAML file (configs/hardware/*.yaml)
  int64_t seq = 0;       ///< query tokens per sequence
  int64_t seq_kv = 0;    ///< key/value tokens (0: = seq)
  int64_t heads = 0;     ///< query heads on this GPU
  int64_t kv_heads = 0;  ///< K/V heads on this GPU (0: = heads); divides heads
  int64_t head_dim = 128;
  int64_t batch = 1;      ///< sequences (micro-batch)
  bool causal = false;    ///< causal mask
  bool backward = false;  ///< the backward pass instead of the forward
  std::string tile;       ///< "BRxBC" to force a tile; empty: automatic
  std::string dtype = "bf16";
  std::string impl = "fa2";  ///< fa2, fa3 or cudnn (one the hardware file lists)
};

/// Registers `op` and its subcommands on `app` (one call from main); run() executes the
/// parsed one. Holds the option storage CLI11 writes into, so it must outlive parsing.
class OpCommand {
 public:
  explicit OpCommand(CLI::App& app);
  OpCommand(const OpCommand&) = delete;
  OpCommand& operator=(const OpCommand&) = delete;

  /// Whether `rapid op ...` was given.
  bool parsed() const;
  /// Prints the result to stdout and returns the exit code (0). Bad values (file, dtype
  /// without a tensor peak, heads not divisible, unknown or non-fitting tile) throw
  /// InputError, which main turns into exit code 2.
  int run() const;

 private:
  CLI::App* op_ = nullptr;
  CLI::App* attention_ = nullptr;
  AttentionOpOptions attention_options_;
};

/// `rapid op attention`: every candidate tile with its blocks, waves, L2 hit rate,
/// effective bandwidth, compute, memory and total time; the chosen one marked with '*'.
int run_attention_op(const AttentionOpOptions& o);

}  // namespace rapid
