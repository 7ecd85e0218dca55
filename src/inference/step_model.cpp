#include "rapid/inference/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "rapid/cost/decode_attention.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

namespace {

/// Element bytes of activations (bf16/fp16 engines keep activations in 16 bits).
constexpr double kActBytes = 2.0;

/// What one stage's ops add up to.
struct Accum {
  double gemm = 0, attention = 0, memory = 0, tp = 0, ep = 0;
  int64_t kernels = 0;
  double gpu() const { return gemm + attention + memory + tp + ep; }
};

}  // namespace

struct StepModel::Impl {
  ModelSpec model;
  HardwareSpec hw;
  ServingStack stack;
  ParallelConfig par;
  int64_t gpus_per_node = 8;
  DType kv_dtype = DType::BF16;
  bool fp8 = false;
  AttentionImpl kernel = AttentionImpl::FA2;
  ComputeCost compute;
  CollectiveCost collectives;
  GroupShape tp_group, ep_group, pp_group;
  int64_t etp = 1;                    // expert tensor parallel inside the EP group
  std::vector<int64_t> stage_layers;  // layers per pipeline stage
  std::vector<int64_t> stage_first;   // first layer of each stage

  Impl(const ModelSpec& m, const HardwareSpec& h, const NetworkSpec& net, const ServingSpec& s,
       const ParallelConfig& p, AttentionImpl k)
      : model(m),
        hw(h),
        stack(s.stack),
        par(p),
        gpus_per_node(net.gpus_per_node),
        kv_dtype(s.kv_dtype),
        fp8(s.dtype == DType::FP8),
        kernel(k),
        compute(h, s.dtype == DType::FP8 ? DType::BF16 : s.dtype, k),
        collectives(h, net) {
    tp_group = group_shape(p.tp, 1, net.gpus_per_node);
    ep_group = group_shape(p.ep, 1, net.gpus_per_node);
    // A replica's stages sit tp GPUs apart (a replica takes tp x pp consecutive GPUs).
    pp_group = group_shape(p.pp, p.tp, net.gpus_per_node);
    etp = p.ep <= p.tp ? p.tp / p.ep : 1;
    // Layers split as evenly as possible, the first stages taking the remainder (vLLM
    // get_pp_indices without a partition override).
    int64_t first = 0;
    for (int64_t st = 0; st < p.pp; ++st) {
      const int64_t n = chunk_layers(m.num_layers, p.pp, st);  // the workload's even split
      stage_first.push_back(first);
      stage_layers.push_back(n);
      first += n;
    }
  }

  Op gemm(int64_t m, int64_t n, int64_t k, int64_t batch = 1) const {
    Op op;
    op.kind = OpKind::Gemm;
    op.m = std::max<int64_t>(1, m);
    op.n = std::max<int64_t>(1, n);
    op.k = std::max<int64_t>(1, k);
    op.batch = std::max<int64_t>(1, batch);
    op.fp8 = fp8;
    return op;
  }
  void add_gemm(Accum& a, int64_t m, int64_t n, int64_t k, int64_t batch = 1) const {
    if (m <= 0) return;
    a.gemm += compute.time(gemm(m, n, k, batch));
    ++a.kernels;
  }
  void add_stream(Accum& a, double bytes) const {
    a.memory += compute.memory_time(bytes);
    ++a.kernels;
  }

  /// A TP all-reduce of `bytes`: the stack's one-shot NVLink kernel below its size limit
  /// inside a node (every GPU reads its peers' buffers: (tp - 1) x bytes in), else NCCL.
  double all_reduce(double bytes) const {
    if (par.tp <= 1 || bytes <= 0) return 0;
    if (stack.custom_all_reduce && bytes <= stack.custom_all_reduce_max_bytes &&
        par.tp <= gpus_per_node) {
      const double nv = hw.nvlink_bandwidth_Bps * hw.nvlink_efficiency;
      const double one_shot = (par.tp - 1) * bytes / nv;
      const double two_shot = 2.0 * (par.tp - 1) / par.tp * bytes / nv;  // reduce-scatter + gather
      return stack.custom_all_reduce_latency_s + std::min(one_shot, two_shot);
    }
    return collectives.time(CollectiveKind::AllReduce, bytes, tp_group);
  }
  void add_all_reduce(Accum& a, double bytes) const {
    if (par.tp <= 1) return;
    a.tp += all_reduce(bytes);
    ++a.kernels;
  }

  void attention_block(Accum& a, const StepBatch& b) const {
    const int64_t T = b.tokens();
    const int64_t h = model.hidden_size, heads = model.num_attention_heads / par.tp;
    const MlaSpec& mla = model.mla;
    const double kv_bytes = dtype_bytes(kv_dtype);
    add_stream(a, 4.0 * T * h * kActBytes);  // fused residual add + RMSNorm: 2 reads, 2 writes
    int64_t score_dim = model.head_dim, value_dim = model.head_dim;
    if (mla.enabled()) {
      // DeepSeek-V2 sec 2.1.2: q = W_UQ(norm(W_DQ h)), latent c_KV = W_DKV h (+ rope key).
      // The down projections are replicated on every TP rank (vLLM/Megatron MLA).
      const int64_t qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
      if (mla.q_lora_rank > 0) {
        add_gemm(a, T, mla.q_lora_rank, h);
        add_gemm(a, T, heads * qk, mla.q_lora_rank);
      } else {
        add_gemm(a, T, heads * qk, h);
      }
      add_gemm(a, T, mla.kv_lora_rank + mla.qk_rope_head_dim, h);
      add_stream(a, 2.0 * T * (mla.kv_lora_rank + mla.q_lora_rank) * kActBytes);  // the norms
      // Prefill expands the latent to per-head keys and values (W_UK, W_UV);
      // decode absorbs W_UK into the query and W_UV into the output (sec 2.1.2).
      // (Only the chunk's own latents are expanded here; earlier chunks' are not counted.)
      if (b.prefill_tokens > 0)
        add_gemm(a, b.prefill_tokens, heads * (mla.qk_nope_head_dim + mla.v_head_dim),
                 mla.kv_lora_rank);
      if (b.decode_seqs > 0) {
        add_gemm(a, b.decode_seqs, mla.kv_lora_rank, mla.qk_nope_head_dim, heads);
        add_gemm(a, b.decode_seqs, mla.v_head_dim, mla.kv_lora_rank, heads);
      }
      score_dim = mla.kv_lora_rank + mla.qk_rope_head_dim;
      value_dim = mla.kv_lora_rank;
    } else {
      const int64_t kv_heads = std::max<int64_t>(1, model.num_kv_heads / par.tp);
      add_gemm(a, T, (heads + 2 * kv_heads) * model.head_dim, h);
    }
    // Rotary embedding of q and k (read and written), and the new tokens' K/V written into
    // the cache. MLA rotates only the rope dims: each head's query part and the shared key.
    const double rope_elems =
        mla.enabled()
            ? static_cast<double>((heads + 1) * mla.qk_rope_head_dim)
            : static_cast<double>((heads + std::max<int64_t>(1, model.num_kv_heads / par.tp)) *
                                  model.head_dim);
    const double kv_elems = model.kv_cache_elements_per_token(par.tp);
    add_stream(a, T * (2.0 * rope_elems * kActBytes + kv_elems * kv_bytes));
    if (b.prefill_tokens > 0) {  // FlashAttention over each chunk and what precedes it
      const int64_t seqs = std::max<int64_t>(1, b.prefill_seqs);
      const int64_t q = std::max<int64_t>(1, b.prefill_tokens / seqs);
      const double pairs = b.prefill_attention_pairs / static_cast<double>(seqs);
      Op op;
      op.kind = OpKind::Attention;
      op.name = "flash_attention";
      op.m = q;
      const int64_t kv_per_gpu =
          mla.enabled() ? heads : std::max<int64_t>(1, model.num_kv_heads / par.tp);
      op.gqa_group = static_cast<uint16_t>(std::max<int64_t>(1, heads / kv_per_gpu));
      // A chunk with nothing before it is causal over itself (pairs = q^2 / 2); one after
      // earlier chunks sees every earlier token and half of its own on average.
      op.causal = pairs <= 0.5 * q * q * 1.0001;
      op.n = op.causal ? q : std::max<int64_t>(1, std::llround(pairs / q));
      // MLA: q.k over nope + rope dims, p.v over v dims: the mean keeps the FLOPs exact.
      op.k = mla.enabled() ? (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) / 2
                           : model.head_dim;
      op.batch = seqs * heads;
      op.batch -= op.batch % op.gqa_group;
      a.attention += compute.time(op);
      ++a.kernels;
    }
    if (b.decode_seqs > 0) {
      DecodeAttentionShape s;
      s.cached_tokens = b.decode_context_tokens;
      s.sequences = b.decode_seqs;
      s.query_heads = heads;
      s.kv_elements_per_token = kv_elems;
      s.score_dim = score_dim;
      s.value_dim = value_dim;
      a.attention +=
          decode_attention_time(hw, s, kv_bytes, hw.attention_kernel_efficiency(kernel).forward)
              .time_s;
      a.kernels += 2;
    }
    const int64_t out_dim = heads * (mla.enabled() ? mla.v_head_dim : model.head_dim);
    add_gemm(a, T, h, out_dim);
    add_all_reduce(a, T * h * kActBytes);
  }

  void dense_mlp(Accum& a, int64_t T, int64_t ffn, int64_t split) const {
    const bool gated = model.activation != Activation::Gelu;
    const int64_t f = std::max<int64_t>(1, ffn / split);
    add_gemm(a, T, (gated ? 2 : 1) * f, model.hidden_size);
    add_stream(a, (gated ? 3.0 : 2.0) * T * f * kActBytes);  // activation (x gate)
    add_gemm(a, T, model.hidden_size, f);
  }

  void mlp_block(Accum& a, const StepBatch& b, bool moe) const {
    const int64_t T = b.tokens(), h = model.hidden_size;
    add_stream(a, 4.0 * T * h * kActBytes);  // fused residual add + RMSNorm
    if (!moe) {
      dense_mlp(a, T, model.ffn_hidden_size, par.tp);
      add_all_reduce(a, T * h * kActBytes);
      return;
    }
    const MoeSpec& e = model.moe;
    add_gemm(a, T, e.num_experts, h);              // router
    add_stream(a, 2.0 * T * e.num_experts * 4.0);  // top-k over the fp32 scores
    // Tokens this GPU's experts receive: every token of the EP group picks top_k experts;
    // balanced routing gives each of the ep shards its share (capacity factor 1).
    // With ep > tp, ep / tp replicas share these MoE layers (data-parallel attention): their
    // batches are alike, so the others bring as many tokens as this one.
    const int64_t coupled = par.ep > par.tp ? (par.ep / par.tp - 1) * T : 0;
    const double group_tokens = static_cast<double>(T + coupled);
    const int64_t local_experts = std::max<int64_t>(1, e.num_experts / par.ep);
    const double routed = group_tokens * e.top_k / par.ep;
    // Experts that receive at least one token: E (1 - (1 - 1/E)^(tokens x top_k)) over the
    // whole model when routing is uniform; their weights are what a small batch reads.
    const double picks = group_tokens * e.top_k;
    const double hit = 1.0 - std::pow(1.0 - 1.0 / e.num_experts, picks);
    const int64_t active = std::max<int64_t>(
        1, std::min<int64_t>(local_experts, std::llround(std::ceil(local_experts * hit))));
    const int64_t per_expert = std::max<int64_t>(1, std::llround(std::ceil(routed / active)));
    const bool gated = model.activation != Activation::Gelu;
    const int64_t f = std::max<int64_t>(1, e.expert_ffn_hidden_size / etp);
    add_gemm(a, per_expert, (gated ? 2 : 1) * f, h, active);  // grouped GEMM
    add_stream(a, (gated ? 3.0 : 2.0) * routed * f * kActBytes);
    add_gemm(a, per_expert, h, f, active);
    if (e.num_shared_experts > 0)
      dense_mlp(a, T, e.num_shared_experts * e.shared_expert_ffn_hidden_size, par.tp);
    if (par.ep > 1) {  // dispatch and combine: each token's hidden state to its top_k experts
      const double bytes = static_cast<double>(T) * e.top_k * h * kActBytes;
      a.ep += 2.0 * collectives.time(CollectiveKind::AllToAll, bytes, ep_group);
      a.kernels += 2;
    }
    if (etp > 1 || par.ep == 1) add_all_reduce(a, T * h * kActBytes);
  }

  Accum stage(const StepBatch& b, int64_t st) const {
    Accum a;
    const int64_t T = b.tokens(), h = model.hidden_size;
    if (st == 0) {  // vocabulary-parallel embedding: a lookup, then an all-reduce
      add_stream(a, 2.0 * T * h * kActBytes);
      add_all_reduce(a, T * h * kActBytes);
    }
    const int64_t moe_layers =
        model.moe.moe_layers_in(stage_first[st], stage_first[st] + stage_layers[st]);
    const int64_t dense_layers = stage_layers[st] - moe_layers;
    // Layers of one kind cost the same: time one and multiply.
    for (int kind = 0; kind < 2; ++kind) {
      const int64_t n = kind == 0 ? dense_layers : moe_layers;
      if (n == 0) continue;
      Accum one;
      attention_block(one, b);
      mlp_block(one, b, kind == 1);
      a.gemm += n * one.gemm;
      a.attention += n * one.attention;
      a.memory += n * one.memory;
      a.tp += n * one.tp;
      a.ep += n * one.ep;
      a.kernels += n * one.kernels;
    }
    if (st == par.pp - 1 && b.logits_seqs > 0) {  // final norm, LM head, logits, sampling
      const double V = static_cast<double>(model.vocab_size);
      add_stream(a, 2.0 * b.logits_seqs * h * kActBytes);
      add_gemm(a, b.logits_seqs, model.vocab_size / par.tp, h);
      if (par.tp > 1) {
        a.tp +=
            collectives.time(CollectiveKind::AllGather, b.logits_seqs * V * kActBytes, tp_group);
        ++a.kernels;
      }
      add_stream(a, 3.0 * b.logits_seqs * V * 4.0);  // fp32 softmax and sampling over V
    }
    return a;
  }
};

StepModel::StepModel(const ModelSpec& model, const HardwareSpec& hw, const NetworkSpec& net,
                     const ServingSpec& serving, const ParallelConfig& par) {
  // The stack's first attention kernel the GPU has (as the training stacks pick theirs).
  const std::vector<AttentionImpl> available = hw.attention_kernels();
  AttentionImpl k = AttentionImpl::FA2;
  for (AttentionImpl want : serving.stack.attention)
    if (std::find(available.begin(), available.end(), want) != available.end()) {
      k = want;
      break;
    }
  impl_ = std::make_unique<Impl>(model, hw, net, serving, par, k);
}

StepModel::~StepModel() = default;
StepModel::StepModel(StepModel&&) noexcept = default;

AttentionImpl StepModel::attention_kernel() const {
  return impl_->kernel;
}

StepTime StepModel::time(const StepBatch& b) const {
  const Impl& m = *impl_;
  StepTime t;
  if (b.tokens() <= 0) return t;
  const bool graph =
      m.stack.cuda_graphs && b.prefill_tokens == 0 && b.decode_seqs <= m.stack.cuda_graph_max_batch;
  const double issue = graph ? m.stack.graph_launch_s : m.stack.eager_launch_s;
  // Hand-off to the next stage: the hidden states of the iteration's tokens.
  const double p2p =
      m.par.pp > 1 ? m.collectives.time(CollectiveKind::SendRecv,
                                        b.tokens() * m.model.hidden_size * kActBytes, m.pp_group)
                   : 0.0;
  // The host's per-iteration work: a fixed part and a part per running sequence.
  const double host =
      m.stack.host_overhead_per_step_s +
      m.stack.host_overhead_per_seq_s * static_cast<double>(b.decode_seqs + b.prefill_seqs);
  t.total_s = host;
  for (int64_t st = 0; st < m.par.pp; ++st) {
    const Accum a = m.stage(b, st);
    // The host issues kernels while the GPU runs earlier ones: the stage takes the longer
    // of the two (a queue that never runs dry when kernels outlast their launch).
    const double gpu = a.gpu();
    const double busy = std::max(gpu, a.kernels * issue);
    const double hand = st + 1 < m.par.pp ? p2p : 0.0;
    t.total_s += busy + hand;
    const double stage_s = busy + hand + (st == 0 ? host : 0.0);
    if (stage_s >= t.stage_s) {
      t.stage_s = stage_s;
      t.gemm_s = a.gemm;
      t.attention_s = a.attention;
      t.memory_bound_s = a.memory;
      t.tp_comm_s = a.tp;
      t.ep_comm_s = a.ep;
      t.pp_comm_s = hand;
      t.host_s = (busy - gpu) + (st == 0 ? host : 0.0);
      t.kernels = a.kernels;
    }
  }
  return t;
}

}  // namespace rapid
