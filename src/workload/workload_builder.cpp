// Builds the per-GPU op templates of a Megatron-LM GPT/Llama layer and the stage program.
// Sources: Shoeybi et al. 2019 (Megatron-LM tensor parallelism, f/g operators);
// Korthikanti et al. 2022 (sequence parallelism: all-gather / reduce-scatter replacing the
// all-reduces, Fig. 5); Narayanan et al. 2021 (pipeline schedules, p2p of activations);
// Dao 2023 (FlashAttention-2 FLOPs). docs/model.md lists every op with its shape.
#include <algorithm>

#include "rapid/workload/workload.hpp"
#include "template_builder.hpp"

namespace rapid {

const char* comm_group_name(CommGroup g) {
  static const char* names[] = {"none", "tp", "cp", "ep", "dp", "pp"};
  return names[static_cast<int>(g)];
}

const char* collective_name(CollectiveKind c) {
  static const char* names[] = {"none",           "all_reduce", "all_gather",
                                "reduce_scatter", "all_to_all", "send_recv"};
  return names[static_cast<int>(c)];
}

GroupShape group_shape(int64_t size, int64_t stride, int64_t gpus_per_node) {
  GroupShape g;
  g.size = size;
  g.per_node = stride >= gpus_per_node ? 1 : std::min(size, gpus_per_node / stride);
  g.per_node = std::max<int64_t>(g.per_node, 1);
  g.nodes = (size + g.per_node - 1) / g.per_node;
  return g;
}

namespace {

using detail::TemplateBuilder;
constexpr auto kNone = CollectiveKind::None;
constexpr auto kAllReduce = CollectiveKind::AllReduce;
constexpr auto kAllGather = CollectiveKind::AllGather;
constexpr auto kReduceScatter = CollectiveKind::ReduceScatter;

// Per-GPU dimensions of one micro-batch, shared by all templates.
struct Dims {
  double e;       // bytes per activation element
  int64_t b;      // micro-batch size
  int64_t s;      // query tokens per sequence on this GPU (seq / cp)
  int64_t s_kv;   // key/value length attended to (whole sequence)
  int64_t T;      // tokens per micro-batch on this GPU: b * s
  double T_norm;  // tokens seen by norms/dropout: T / tp with SP, else T
  int64_t h, d, heads, kv_heads, ffn, vocab;  // heads/kv_heads/ffn/vocab already / tp
  int tp;
  bool sp, dropout, swiglu, flash;
};

// Megatron's f operator before a column-parallel GEMM (and its SP all-gather).
void column_parallel_input(TemplateBuilder& tb, const Dims& D, const char* name) {
  if (D.tp == 1) return;
  double bytes = static_cast<double>(D.T) * D.h * D.e;
  if (D.sp)
    tb.collective(name, kAllGather, "sp_reduce_scatter_bwd", kReduceScatter, CommGroup::TP, bytes);
  else
    tb.collective("", kNone, "tp_all_reduce_bwd", kAllReduce, CommGroup::TP, bytes);
}

// Megatron's g operator after a row-parallel GEMM (SP: reduce-scatter).
void row_parallel_output(TemplateBuilder& tb, const Dims& D, const char* name) {
  if (D.tp == 1) return;
  double bytes = static_cast<double>(D.T) * D.h * D.e;
  if (D.sp)
    tb.collective(name, kReduceScatter, "sp_all_gather_bwd", kAllGather, CommGroup::TP, bytes);
  else
    tb.collective(name, kAllReduce, "", kNone, CommGroup::TP, bytes);
}

// LayerNorm/RMSNorm: reads x, writes y; backward reads x and dy, writes dx.
void norm(TemplateBuilder& tb, const Dims& D, const char* fwd, const char* bwd) {
  double x = D.T_norm * D.h * D.e;
  tb.memory(fwd, 2 * x, bwd, 3 * x);
}

// Fused bias-dropout-add: reads x and residual, writes out (+1-byte mask).
void residual(TemplateBuilder& tb, const Dims& D, const char* fwd, const char* bwd) {
  double n = D.T_norm * D.h;
  double mask = D.dropout ? 1.0 : 0.0;
  tb.memory(fwd, n * (3 * D.e + mask), bwd, n * (2 * D.e + mask));
}

void build_layer(const Dims& D, Recompute rc, OpTemplate& t) {
  TemplateBuilder tb(t, D.e);
  norm(tb, D, "input_norm", "input_norm_bwd");
  column_parallel_input(tb, D, "sp_all_gather_attn");
  tb.gemm("qkv_proj", "qkv_proj_dgrad", "qkv_proj_wgrad", D.T, (D.heads + 2 * D.kv_heads) * D.d,
          D.h);
  tb.begin_core();
  if (D.flash) {
    double io = static_cast<double>(D.T) * D.d * (2 * D.heads + 2 * D.kv_heads) * D.e;
    tb.flash_attention(D.b * D.heads, D.s, D.s_kv, D.d, D.heads / D.kv_heads, /*causal=*/true, io);
  } else {
    // Unfused: scores = Q K^T, masked softmax, dropout, context = P V (full s x s work).
    const int64_t bh = D.b * D.heads;
    const double x = static_cast<double>(bh) * D.s * D.s_kv;
    tb.gemm("attn_scores", "attn_scores_dgrad_q", "attn_scores_dgrad_k", D.s, D.s_kv, D.d, bh);
    tb.memory("attn_softmax", 2 * x * D.e, "attn_softmax_bwd", 3 * x * D.e);
    if (D.dropout)
      tb.memory("attn_dropout", x * (2 * D.e + 1), "attn_dropout_bwd", x * (2 * D.e + 1));
    tb.gemm("attn_context", "attn_context_dgrad_p", "attn_context_dgrad_v", D.s, D.d, D.s_kv, bh);
  }
  tb.end_core();
  tb.gemm("out_proj", "out_proj_dgrad", "out_proj_wgrad", D.T, D.h, D.heads * D.d);
  row_parallel_output(tb, D, "sp_reduce_scatter_attn");
  residual(tb, D, "attn_residual", "attn_residual_bwd");
  norm(tb, D, "post_attn_norm", "post_attn_norm_bwd");
  column_parallel_input(tb, D, "sp_all_gather_mlp");
  tb.gemm("mlp_up", "mlp_up_dgrad", "mlp_up_wgrad", D.T, (D.swiglu ? 2 : 1) * D.ffn, D.h);
  const double act = static_cast<double>(D.T) * D.ffn * D.e;
  // GELU reads/writes T*f; SwiGLU reads gate and up, writes their product (bwd: reads
  // gate, up, dy; writes dgate, dup).
  if (D.swiglu)
    tb.memory("mlp_swiglu", 3 * act, "mlp_swiglu_bwd", 5 * act);
  else
    tb.memory("mlp_gelu", 2 * act, "mlp_gelu_bwd", 3 * act);
  tb.gemm("mlp_down", "mlp_down_dgrad", "mlp_down_wgrad", D.T, D.h, D.ffn);
  row_parallel_output(tb, D, "sp_reduce_scatter_mlp");
  residual(tb, D, "mlp_residual", "mlp_residual_bwd");
  tb.finish(rc);
}

// First stage: vocab-parallel embedding lookup, partial sums reduced over TP.
void build_embedding(const Dims& D, OpTemplate& t) {
  TemplateBuilder tb(t, D.e);
  double x = static_cast<double>(D.T) * D.h * D.e;
  tb.memory("embedding_lookup", 2 * x, "embedding_grad", x + 2.0 * D.T * D.h * 4.0);
  if (D.tp > 1) {
    if (D.sp)
      tb.collective("embedding_reduce_scatter", kReduceScatter, "embedding_all_gather_bwd",
                    kAllGather, CommGroup::TP, x);
    else
      tb.collective("embedding_all_reduce", kAllReduce, "", kNone, CommGroup::TP, x);
  }
  tb.finish(Recompute::None);
}

// Last stage: final norm, LM head GEMM over the vocab shard, vocab-parallel cross-entropy
// (fp32 softmax kept for backward; max/sum/target all-reduces of T fp32 values over TP).
void build_lm_head(const Dims& D, OpTemplate& t) {
  TemplateBuilder tb(t, D.e);
  norm(tb, D, "final_norm", "final_norm_bwd");
  column_parallel_input(tb, D, "sp_all_gather_head");
  tb.gemm("lm_head", "lm_head_dgrad", "lm_head_wgrad", D.T, D.vocab, D.h);
  const double logits = static_cast<double>(D.T) * D.vocab;
  tb.memory("cross_entropy", logits * (D.e + 8.0), "cross_entropy_bwd", logits * (4.0 + D.e));
  if (D.tp > 1)
    tb.collective("cross_entropy_all_reduce", kAllReduce, "", kNone, CommGroup::TP,
                  3.0 * static_cast<double>(D.T) * 4.0);
  tb.finish(Recompute::None);
}

// Model chunks (a stage's layers / vpp) whose forward activations are alive on stage i at
// the peak of the schedule (Megatron-LM schedules.py warm-up counts): 1F1B keeps
// min(pp - i, m) micro-batches; interleaved keeps (pp - i - 1) * 2 + (vpp - 1) * pp + 1
// chunks, which on stage 0 is L * (1 + (pp-1)/(pp*vpp)) layers' worth (Korthikanti et al.
// 2022, sec 4.2.3).
int64_t chunks_in_flight(int64_t stage, int64_t pp, int64_t vpp, int64_t m) {
  if (vpp == 1) return std::min(pp - stage, m);
  return std::min((pp - stage - 1) * 2 + (vpp - 1) * pp + 1, m * vpp);
}

}  // namespace

void build_workload(const ModelSpec& model, const TrainingSpec& training,
                    const NetworkSpec& network, const ParallelConfig& par, Workload& w) {
  w.par = par;
  w.global_batch_size = training.global_batch_size;
  w.seq_length = training.seq_length;
  w.num_microbatches = par.num_microbatches(training.global_batch_size);
  w.schedule = par.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;

  Dims D{};
  D.e = dtype_bytes(training.dtype) >= 2 ? dtype_bytes(training.dtype) : 2.0;
  D.tp = par.tp;
  D.b = par.mbs;
  D.s = training.seq_length / par.cp;
  D.s_kv = training.seq_length;
  D.T = D.b * D.s;
  D.sp = par.sp;
  D.T_norm = par.sp ? static_cast<double>(D.T) / par.tp : static_cast<double>(D.T);
  D.h = model.hidden_size;
  D.d = model.head_dim;
  D.heads = model.num_attention_heads / par.tp;
  D.kv_heads = model.num_kv_heads / par.tp;
  D.ffn = model.ffn_hidden_size / par.tp;
  D.vocab = (model.vocab_size + par.tp - 1) / par.tp;
  D.dropout = model.dropout;
  D.swiglu = model.activation == Activation::SwiGlu;
  D.flash = training.flash_attention;

  build_layer(D, par.recompute, w.layer);
  build_embedding(D, w.embedding);
  build_lm_head(D, w.lm_head);

  w.p2p = Op{};
  w.p2p.name = "pp_send_recv";
  w.p2p.kind = OpKind::P2P;
  w.p2p.group = CommGroup::PP;
  w.p2p.collective = CollectiveKind::SendRecv;
  w.p2p.stream = Stream::PPComm;
  w.p2p.bytes = D.T_norm * D.h * D.e;  // SP: each TP rank sends its shard (scatter-gather)

  const int64_t G = network.gpus_per_node;
  const int64_t tp = par.tp, cp = par.cp, dp = par.dp, pp = par.pp;
  w.groups = {};
  w.groups[static_cast<int>(CommGroup::None)] = GroupShape{};
  w.groups[static_cast<int>(CommGroup::TP)] = group_shape(tp, 1, G);
  w.groups[static_cast<int>(CommGroup::CP)] = group_shape(cp, tp, G);
  w.groups[static_cast<int>(CommGroup::EP)] = group_shape(par.ep, tp, G);
  w.groups[static_cast<int>(CommGroup::DP)] = group_shape(dp, tp * cp, G);
  w.groups[static_cast<int>(CommGroup::PP)] = group_shape(pp, tp * cp * dp, G);

  // Parameters on one GPU: weight matrices split by TP, norms replicated.
  const int64_t norms = (model.norm == NormKind::LayerNorm ? 4 : 2) * model.hidden_size;
  w.layer_params = static_cast<double>(model.layer_params() - norms) / tp + norms;
  const double vocab_shard = static_cast<double>(D.vocab) * model.hidden_size;
  w.embedding_params = vocab_shard;
  // Tied embeddings on one stage share the matrix; across stages the last stage keeps a copy.
  w.lm_head_params = (model.tied_embeddings && pp == 1 ? 0.0 : vocab_shard) +
                     (model.norm == NormKind::LayerNorm ? 2 : 1) * model.hidden_size;

  w.stages.resize(static_cast<size_t>(pp));
  const int64_t L = model.num_layers, base = L / pp, extra = L % pp;
  for (int64_t i = 0; i < pp; ++i) {
    StageInfo& st = w.stages[static_cast<size_t>(i)];
    // Uneven split (extra = L mod pp < pp): one more layer on stages 1..extra, keeping the
    // first stage (which also holds the embedding) lighter.
    st.num_layers = base + ((i >= 1 && i <= extra) ? 1 : 0);
    st.has_embedding = i == 0;
    st.has_lm_head = i == pp - 1;
    st.params = w.layer_params * static_cast<double>(st.num_layers) +
                (st.has_embedding ? w.embedding_params : 0.0) +
                (st.has_lm_head ? w.lm_head_params : 0.0);
    st.chunks_in_flight = chunks_in_flight(i, pp, par.vpp, w.num_microbatches);
  }
}

double workload_step_flops(const Workload& w, bool with_recompute) {
  auto sum = [](const std::vector<Op>& ops) {
    double f = 0;
    for (const Op& op : ops) f += op.flops;
    return f;
  };
  auto pass = [&](const OpTemplate& t) {
    return sum(t.forward) + sum(t.backward) + (with_recompute ? sum(t.recompute) : 0.0);
  };
  const double per_mb_layer = pass(w.layer);
  double per_mb = 0;
  for (const StageInfo& st : w.stages) {
    per_mb += per_mb_layer * static_cast<double>(st.num_layers);
    if (st.has_embedding) per_mb += pass(w.embedding);
    if (st.has_lm_head) per_mb += pass(w.lm_head);
  }
  // Each stage's ops are per GPU; tp*cp GPUs share one stage of one micro-batch and dp
  // replicas run their own micro-batches.
  const double gpus_per_stage = static_cast<double>(w.par.tp) * w.par.cp;
  return per_mb * gpus_per_stage * static_cast<double>(w.num_microbatches) * w.par.dp;
}

}  // namespace rapid
