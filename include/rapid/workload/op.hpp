// One operator of the workload graph, per GPU. The same record feeds the analytical
// evaluator, the discrete-event simulator and the Chakra writer (docs/architecture.md "The
// workload").
#pragma once

#include <cstdint>

namespace rapid {

/// DecodeAttention: serving's decode tokens attending to their KV caches (flops and bytes
/// set; batch = sequences, k = score dim); training never has it.
enum class OpKind : uint8_t { Gemm, Attention, MemoryBound, Collective, P2P, DecodeAttention };

/// The process group an op talks to (Megatron names).
/// ETP/EP/EDP are the expert layers' tensor, expert and data parallel groups (Megatron-Core
/// MoE "parallel folding": etp * ep * edp = tp * cp * dp).
/// DPCP: the dense weights' gradient group (data x context parallel ranks hold the same
/// weights; Megatron reduces and shards over it).
enum class CommGroup : uint8_t { None, TP, CP, EP, DP, PP, ETP, EDP, DPCP };
inline constexpr int kNumCommGroups = 9;
const char* comm_group_name(CommGroup g);

/// nccl-tests collective names; SendRecv is a point-to-point transfer.
enum class CollectiveKind : uint8_t {
  None,
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  SendRecv
};
const char* collective_name(CollectiveKind c);

/// The stream an op is issued on (one compute stream, communication streams per group).
enum class Stream : uint8_t { Compute, TPComm, DPComm, PPComm };

struct Op {
  const char* name = "";  ///< static string: "qkv_proj", "flash_attention_bwd", ...
  OpKind kind = OpKind::MemoryBound;
  CommGroup group = CommGroup::None;
  CollectiveKind collective = CollectiveKind::None;
  Stream stream = Stream::Compute;
  bool causal = false;     ///< attention: causal mask (fused kernels skip the masked half)
  bool fp8 = false;        ///< GEMM/attention in FP8 (Transformer Engine; training.dtype fp8)
  uint16_t gqa_group = 1;  ///< attention: query heads sharing one K/V head (GQA)
  /// Communication pipelined with a neighbouring compute op of the same pass: +1 the next
  /// op, -1 the previous one, 0 none (only what outlasts that op stays exposed).
  int8_t overlap = 0;
  // GEMM: C[m,n] += A[m,k] * B[k,n], `batch` independent products in one launch.
  // Attention: batch = micro-batch * heads on this GPU, m = query length, n = key length,
  // k = head dim.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;  ///< floating-point operations on this GPU
  double bytes = 0;  ///< memory-bound ops: HBM bytes moved; GEMM/attention: minimal HBM
                     ///< traffic (inputs read once, output written once); collectives and
                     ///< p2p: the buffer size S in nccl-tests terms (all-gather: output size,
                     ///< reduce-scatter: input size, all-reduce: the buffer)
};

}  // namespace rapid
