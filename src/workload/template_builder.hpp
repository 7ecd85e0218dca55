// Appends forward ops to an OpTemplate together with their backward counterparts, so that
// each forward op's gradient is written once, next to it. Internal to src/workload.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "rapid/workload/layer_graph.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid::detail {

class TemplateBuilder {
 public:
  /// Clears `t` (keeping capacity). `elem_bytes` is the activation dtype size.
  /// `forward_only`: no backward ops (a serving iteration).
  TemplateBuilder(OpTemplate& t, double elem_bytes, bool forward_only = false);

  /// C[m,n] = A[m,k] B[k,n] (x batch). Backward: dA = dC B^T (m,k contracted over n) and
  /// dB = A^T dC (k,n contracted over m): 2x the forward FLOPs (Narayanan et al. 2021, sec 5).
  void gemm(const char* fwd, const char* bwd_data, const char* bwd_weight, int64_t m, int64_t n,
            int64_t k, int64_t batch = 1, GemmFp8 fp8 = {});

  /// Memory-bound op moving `fwd_bytes` forward and `bwd_bytes` in its backward; a null
  /// name leaves that direction out. `kernels` ops of equal share issue it (an unfused
  /// chain of elementwise kernels).
  void memory(const char* fwd, double fwd_bytes, const char* bwd, double bwd_bytes,
              int kernels = 1);

  /// Fused attention (FlashAttention-2, Dao 2023): forward 4*batch*m*n*k FLOPs (QK^T and PV),
  /// halved when causal; backward 2.5x forward (5 matmuls instead of 2, recomputing S).
  /// `io_bytes`: Q, K, V read and O written once (backward moves twice that).
  /// `gqa_group` query heads share one K/V head. `v_head_dim` > 0: values of another head
  /// dim than queries and keys (MLA): forward 2*batch*m*n*(d_qk + d_v) (QK^T, PV), backward
  /// 2*batch*m*n*(3 d_qk + 2 d_v) (S = QK^T again, dQ, dK over d_qk; dP, dV over d_v), the
  /// op's k the larger of the two (see the definition).
  void flash_attention(int64_t batch, int64_t seq_q, int64_t seq_kv, int64_t head_dim,
                       int64_t gqa_group, bool causal, double io_bytes, bool fp8 = false,
                       int64_t v_head_dim = 0);

  /// An op with no backward counterpart (serving's decode attention).
  void forward(const Op& op) { t_.forward.push_back(op); }

  /// A collective in forward and (maybe another kind) in backward on `group`, buffer size
  /// `bytes` forward and `bwd_bytes` backward (nccl-tests convention; < 0: same as
  /// forward). CollectiveKind::None skips that direction. `overlap`: the forward op is
  /// pipelined with the next (+1) or previous (-1) op; the backward op, which runs in
  /// reverse order, with the opposite neighbour.
  void collective(const char* fwd, CollectiveKind fwd_kind, const char* bwd,
                  CollectiveKind bwd_kind, CommGroup group, double bytes, int overlap = 0,
                  double bwd_bytes = -1);

  /// Marks the start/end of the attention core (what selective recompute replays).
  void begin_core() { core_begin_ = t_.forward.size(); }
  void end_core() { core_end_ = t_.forward.size(); }

  /// Per-op recompute (Recompute::Op) replays `columns` of the last forward GEMM's n (the
  /// matmuls it does not save: torchtitan saves every second one of a block).
  void replay_columns(int64_t columns) { replayed_.push_back({t_.forward.size() - 1, columns}); }

  /// Reverses the backward list into execution order and fills `recompute`
  /// (none: empty; selective: the attention core; full: the whole forward; op: the
  /// memory-bound ops, the SP all-gathers and the GEMM columns marked by replay_columns).
  void finish(Recompute policy);

 private:
  OpTemplate& t_;
  double elem_bytes_;
  bool backward_;
  size_t core_begin_ = 0, core_end_ = 0;
  std::vector<std::pair<size_t, int64_t>> replayed_;  ///< forward GEMM index, columns replayed
};

}  // namespace rapid::detail
