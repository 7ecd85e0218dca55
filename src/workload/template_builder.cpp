#include "template_builder.hpp"

#include <algorithm>

namespace rapid::detail {

TemplateBuilder::TemplateBuilder(OpTemplate& t, double elem_bytes, bool forward_only)
    : t_(t), elem_bytes_(elem_bytes), backward_(!forward_only) {
  t_.forward.clear();
  t_.backward.clear();
  t_.recompute.clear();
}

namespace {
// Fills a GEMM op in place (the list's own slot: no copy of a fresh temporary).
void set_gemm(Op& op, const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, double e,
              bool fp8) {
  op.name = name;
  op.kind = OpKind::Gemm;
  op.fp8 = fp8;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = batch;
  op.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
             static_cast<double>(batch);
  op.bytes = e * static_cast<double>(batch) *
             (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n);
}
}  // namespace

void TemplateBuilder::gemm(const char* fwd, const char* bwd_data, const char* bwd_weight, int64_t m,
                           int64_t n, int64_t k, int64_t batch, GemmFp8 fp8) {
  set_gemm(t_.forward.emplace_back(), fwd, m, n, k, batch, elem_bytes_, fp8.fprop);
  if (!backward_) return;
  // Pushed in reverse: finish() reverses the list, so dgrad runs before wgrad.
  set_gemm(t_.backward.emplace_back(), bwd_weight, k, n, m, batch, elem_bytes_, fp8.wgrad);
  set_gemm(t_.backward.emplace_back(), bwd_data, m, k, n, batch, elem_bytes_, fp8.dgrad);
}

void TemplateBuilder::memory(const char* fwd, double fwd_bytes, const char* bwd, double bwd_bytes,
                             int kernels) {
  const auto add = [kernels](std::vector<Op>& list, const char* name, double bytes) {
    Op& op = list.emplace_back();
    op.name = name;
    op.kind = OpKind::MemoryBound;
    op.bytes = bytes / kernels;
  };
  for (int i = 0; i < kernels; ++i) {
    if (fwd) add(t_.forward, fwd, fwd_bytes);
    if (bwd && backward_) add(t_.backward, bwd, bwd_bytes);
  }
}

void TemplateBuilder::flash_attention(int64_t batch, int64_t seq_q, int64_t seq_kv,
                                      int64_t head_dim, int64_t gqa_group, bool causal,
                                      double io_bytes, bool fp8, int64_t v_head_dim) {
  const int64_t dv = v_head_dim > 0 ? v_head_dim : head_dim;
  Op op;
  op.name = "flash_attention";
  op.kind = OpKind::Attention;
  op.causal = causal;
  op.fp8 = fp8;
  op.gqa_group = static_cast<uint16_t>(gqa_group);
  op.batch = batch;
  op.m = seq_q;
  op.n = seq_kv;
  // k is the head dim the attention model times the kernel with (one d for Q, K and V;
  // src/cost/attention_model.cpp). With a smaller value head dim (MLA: 192 and 128) it is
  // the larger one: the kernel that runs is the d = 192 instantiation (FA3's hdim 192 /
  // hdimv 128 kernel, cuDNN's d_qk 192 / d_v 128), whose tiles, shared memory and registers
  // are sized by it, and the model then charges its per-tile MMA time at d = 192 for the
  // PV product too: 20% over the exact forward work (4 x 192 against 2 x (192 + 128) per
  // score), 15% backward (10 x 192 against 2 x (3 x 192 + 2 x 128)), on the side of caution.
  // The flops field is exact, so MFU and the FLOP counts are.
  op.k = std::max(head_dim, dv);
  const double pairs = static_cast<double>(batch) * static_cast<double>(seq_q) *
                       static_cast<double>(seq_kv) * (causal ? 0.5 : 1.0);
  const double qk = static_cast<double>(head_dim), v = static_cast<double>(dv);
  op.flops = 2.0 * pairs * (qk + v);
  op.bytes = io_bytes;
  t_.forward.push_back(op);
  if (!backward_) return;
  op.name = "flash_attention_bwd";
  op.flops = 2.0 * pairs * (3.0 * qk + 2.0 * v);  // 2.5x forward when qk == v
  op.bytes = 2.0 * io_bytes;
  t_.backward.push_back(op);
}

void TemplateBuilder::collective(const char* fwd, CollectiveKind fwd_kind, const char* bwd,
                                 CollectiveKind bwd_kind, CommGroup group, double bytes,
                                 int overlap, double bwd_bytes) {
  Op op;
  op.kind = OpKind::Collective;
  op.group = group;
  op.stream = group == CommGroup::DP ? Stream::DPComm : Stream::TPComm;
  op.bytes = bytes;
  if (fwd_kind != CollectiveKind::None) {
    op.name = fwd;
    op.collective = fwd_kind;
    op.overlap = static_cast<int8_t>(overlap);
    t_.forward.push_back(op);
  }
  if (bwd_kind != CollectiveKind::None && backward_) {
    op.name = bwd;
    op.collective = bwd_kind;
    op.overlap = static_cast<int8_t>(-overlap);
    op.bytes = bwd_bytes >= 0 ? bwd_bytes : bytes;
    t_.backward.push_back(op);
  }
}

void TemplateBuilder::finish(Recompute policy) {
  std::reverse(t_.backward.begin(), t_.backward.end());
  switch (policy) {
    case Recompute::None:
      break;
    case Recompute::Selective:
      t_.recompute.assign(t_.forward.begin() + static_cast<std::ptrdiff_t>(core_begin_),
                          t_.forward.begin() + static_cast<std::ptrdiff_t>(core_end_));
      break;
    case Recompute::Full:
      t_.recompute.assign(t_.forward.begin(), t_.forward.end());
      break;
    case Recompute::Op:
      // What per-op SAC does not save, replayed from the block's input in forward order:
      // every elementwise op, the SP all-gathers (only reduce-scatter outputs are saved)
      // and the unsaved matmuls' columns; attention and the saved matmuls are not replayed.
      for (size_t i = 0; i < t_.forward.size(); ++i) {
        const Op& op = t_.forward[i];
        if (op.kind == OpKind::MemoryBound ||
            (op.kind == OpKind::Collective && op.group == CommGroup::TP &&
             op.collective == CollectiveKind::AllGather)) {
          t_.recompute.push_back(op);
          continue;
        }
        for (const auto& [at, columns] : replayed_)
          if (at == i)
            set_gemm(t_.recompute.emplace_back(), op.name, op.m, columns, op.k, op.batch,
                     elem_bytes_, op.fp8);
      }
      break;
  }
}

}  // namespace rapid::detail
