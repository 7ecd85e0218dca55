// Megatron-LM: `torchrun ... pretrain_gpt.py --flag value ...`.
// Every flag name is quoted from NVIDIA/Megatron-LM megatron/training/arguments.py @
// 000c4ac24f61159c138b0975def722c65245983c ([ARGS]; the argument group is named at each
// flag); the launcher and CUDA_DEVICE_MAX_CONNECTIONS from examples/gpt3/
// train_gpt3_175b_distributed.sh @ 157006d6d9bf4f55c0d4d7dacbd2b65e7bd84dc9 ([EX175]).
// docs/launch.md has the table.
#include <fmt/format.h>

#include "launch/launch_common.hpp"
#include "rapid/launch/launch_args.hpp"

namespace rapid {

namespace {

using launch_detail::add;
using launch_detail::num;

/// The model's shapes ([ARGS] _add_network_size_args, _add_data_args, _add_mla_args,
/// _add_moe_args).
void model_flags(const LaunchInputs& in, LaunchArgs& c) {
  const ModelSpec& m = in.model;
  add(c, "--num-layers", num(m.num_layers));    // network size: "Number of transformer layers."
  add(c, "--hidden-size", num(m.hidden_size));  // network size: "Transformer hidden size."
  add(c, "--ffn-hidden-size", num(m.ffn_hidden_size));          // network size
  add(c, "--num-attention-heads", num(m.num_attention_heads));  // network size
  if (m.mla.enabled()) {
    add(c, "--multi-latent-attention");  // network size: "Use multi-latent attention for model."
    if (m.mla.q_lora_rank > 0) add(c, "--q-lora-rank", num(m.mla.q_lora_rank));  // mla
    add(c, "--kv-lora-rank", num(m.mla.kv_lora_rank));                           // mla
    add(c, "--qk-head-dim", num(m.mla.qk_nope_head_dim));                        // mla
    add(c, "--qk-pos-emb-head-dim", num(m.mla.qk_rope_head_dim));                // mla
    add(c, "--v-head-dim", num(m.mla.v_head_dim));                               // mla
  } else {
    if (m.num_kv_heads != m.num_attention_heads) {
      add(c, "--group-query-attention");                  // network size: store_true
      add(c, "--num-query-groups", num(m.num_kv_heads));  // network size (int)
    }
    if (m.head_dim * m.num_attention_heads != m.hidden_size)
      add(c, "--kv-channels", num(m.head_dim));  // network size: default hidden / heads
  }
  add(c, "--seq-length", num(in.seq_length));               // data: "Maximum sequence length"
  add(c, "--max-position-embeddings", num(in.seq_length));  // network size; [EX175] = seq
  // network size: choices learned_absolute, rope, mrope, relative, none.
  add(c, "--position-embedding-type",
      m.position_embedding == PositionEmbedding::Rope ? "rope" : "learned_absolute");
  // network size: choices LayerNorm, RMSNorm.
  add(c, "--normalization", m.norm == NormKind::RmsNorm ? "RMSNorm" : "LayerNorm");
  if (m.activation == Activation::SwiGlu) add(c, "--swiglu");  // network size: store_true
  if (m.activation == Activation::GeGlu)
    c.warnings.push_back(
        "GeGLU activation: no Megatron-LM flag among those cited ([ARGS] has "
        "--swiglu, --squared-relu, --quick-geglu); the default GELU MLP is written");
  if (!m.tied_embeddings) add(c, "--untie-embeddings-and-output-weights");  // network size
  if (!m.moe.enabled()) return;
  const MoeSpec& e = m.moe;
  add(c, "--num-experts", num(e.num_experts));  // moe: "Number of Experts in MoE"
  if (e.expert_ffn_hidden_size > 0)
    add(c, "--moe-ffn-hidden-size", num(e.expert_ffn_hidden_size));  // moe
  add(c, "--moe-router-topk", num(e.top_k));                         // moe
  if (e.num_shared_experts > 0)  // moe: "num_shared_experts * ffn_size_of_each_shared_expert"
    add(c, "--moe-shared-expert-intermediate-size",
        num(e.num_shared_experts * e.shared_expert_ffn_hidden_size));
  // moe: an integer N (one MoE layer every N) or a Python list pattern, 1 = MoE layer.
  if (e.first_dense_layers == 0 && e.layer_freq > 1) {
    add(c, "--moe-layer-freq", num(e.layer_freq));
  } else if (e.first_dense_layers > 0 && e.layer_freq == 1) {  // DeepSeek: dense ones first
    add(c, "--moe-layer-freq",
        fmt::format("'([0]*{}+[1]*{})'", e.first_dense_layers,
                    m.num_layers - e.first_dense_layers));
  } else if (e.first_dense_layers > 0) {
    std::string pattern = "[";
    for (int64_t i = 0; i < m.num_layers; ++i)
      pattern += fmt::format("{}{}", i ? "," : "", e.is_moe_layer(i) ? 1 : 0);
    add(c, "--moe-layer-freq", "'" + pattern + "]'");
  }
}

/// Activation recompute ([ARGS] _add_training_args: --recompute-granularity {full,
/// selective}, --recompute-method {uniform,block}, --recompute-num-layers).
void recompute_flags(const ParallelConfig& p, LaunchArgs& c) {
  if (p.recompute == Recompute::None) return;
  if (p.recompute == Recompute::Selective) {
    add(c, "--recompute-granularity", "selective");  // default module core_attn
    return;
  }
  std::string method = p.recompute_method == RecomputeMethod::Block ? "block" : "uniform";
  int64_t layers = p.recompute_layers;
  if (p.recompute == Recompute::Op) {
    c.warnings.push_back(
        "recompute=op (torchtitan's per-op checkpointing) has no Megatron-LM equivalent: written "
        "as full recompute of every layer (more recompute, no more memory)");
    method = "uniform", layers = 1;
  } else if (p.recompute_method == RecomputeMethod::Every) {
    c.warnings.push_back(fmt::format(
        "recompute method every {} (every n-th layer) has no Megatron-LM --recompute-method "
        "(uniform or block): written as full recompute of every layer",
        p.recompute_layers));
    method = "uniform", layers = 1;
  }
  add(c, "--recompute-granularity", "full");
  add(c, "--recompute-method", method);
  add(c, "--recompute-num-layers", num(layers));
}

}  // namespace

LaunchArgs megatron_launch(const LaunchInputs& in) {
  const ParallelConfig& p = in.par;
  LaunchArgs c;
  c.stack = LaunchStack::Megatron;
  c.sources = {
      "NVIDIA/Megatron-LM megatron/training/arguments.py @ 000c4ac24f61 (every flag name)",
      "NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh @ 157006d6d9bf (torchrun "
      "line, CUDA_DEVICE_MAX_CONNECTIONS=1)"};
  const LaunchNodes nodes = launch_detail::nodes_of(in, c);
  const bool fsdp = p.zero_stage >= 2;
  // validate_args asserts CUDA_DEVICE_MAX_CONNECTIONS == "1" with TP or CP > 1 before
  // Blackwell without FSDP; FSDP asserts it is not "1" (left unset here).
  const bool one_connection = (p.tp > 1 || p.cp > 1) && !fsdp;
  c.program =
      fmt::format("{}{} pretrain_gpt.py", one_connection ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "",
                  launch_detail::torchrun(nodes));
  model_flags(in, c);
  // Layout ([ARGS] _add_distributed_args unless named): dp is implicit, world / (tp pp cp).
  add(c, "--tensor-model-parallel-size", num(p.tp));
  add(c, "--pipeline-model-parallel-size", num(p.pp));
  const int64_t chunk = launch_detail::layers_per_chunk(in);
  if (p.vpp > 1) {
    if (chunk > 0) {
      add(c, "--num-layers-per-virtual-pipeline-stage", num(chunk));
    } else {
      add(c, "--num-virtual-stages-per-pipeline-rank", num(p.vpp));
    }
  }
  if (chunk == 0)
    c.warnings.push_back(fmt::format(
        "uneven pipeline split ({} layers on {} x {} stages): Megatron-LM takes it from "
        "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers, not written",
        in.model.num_layers, p.pp, p.vpp));
  add(c, "--context-parallel-size", num(p.cp));
  if (in.model.moe.enabled()) {
    add(c, "--expert-model-parallel-size", num(p.ep));    // moe
    add(c, "--expert-tensor-parallel-size", num(p.etp));  // moe (default: the TP size)
  }
  if (p.sp) add(c, "--sequence-parallel");                   // training: store_true
  add(c, "--micro-batch-size", num(p.mbs));                  // training
  add(c, "--global-batch-size", num(in.global_batch_size));  // training
  recompute_flags(p, c);
  if (p.zero_stage == 1) add(c, "--use-distributed-optimizer");  // "Use distributed optimizer."
  if (fsdp) {
    // Megatron-FSDP: "Sharding strategy of data parallelism", choices no_shard, optim,
    // optim_grads, optim_grads_params; it requires --ckpt-format fsdp_dtensor.
    add(c, "--use-megatron-fsdp");
    add(c, "--data-parallel-sharding-strategy",
        p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    add(c, "--ckpt-format", "fsdp_dtensor");
    c.notes.push_back(fmt::format(
        "zero {} as Megatron-FSDP {}: the strategy names read as ZeRO stages, [ARGS]'s help does "
        "not say so; FSDP wants CUDA_DEVICE_MAX_CONNECTIONS other than 1",
        p.zero_stage, p.zero_stage == 2 ? "optim_grads" : "optim_grads_params"));
  }
  if (p.offload_layers > 0)  // training: "The number of Transformer layers to offload to CPU."
    add(c, "--cpu-offloading-num-layers", num(p.offload_layers));
  if (nodes.nodes > 1) c.notes.push_back(launch_detail::multinode_note(nodes));
  c.notes.push_back(
      "add your tokenizer, data, optimizer, precision and checkpoint flags, and the model's "
      "other settings (biases, RoPE base); pretrain_gpt.py is at the repository's root");
  return c;
}

}  // namespace rapid
