// End-to-end predictions of training runs made with other frameworks on H100:
// Megatron-Core r0.8.0 weak scaling and the Hugging Face nanotron "Ultra-Scale" sweep.
#pragma once

#include "validation_tables.hpp"

namespace rapid {

/// megatron_core_r080_h100.csv: model TFLOP/s per GPU (Megatron-Core's own FLOPs formula,
/// which equals model_flops_per_token). Assumed settings (the table gives none): bf16, GPT
/// architecture (4h GELU MLP, untied embeddings), FlashAttention, mbs 1, sequence
/// parallel, no recompute, distributed optimizer (ZeRO-1), DP/TP overlap on (as the
/// README states), 1F1B without interleaving, DGX H100 SuperPOD network.
ValidationTable validate_megatron_core_h100(const ReferenceContext& ctx);

/// How nanotron runs on the HF cluster: what the sweep's runs imply about the framework
/// (see validate_hf_ultrascale). Defaults are the values fit_hf_ultrascale() finds on the
/// sweep's trusted Success rows; the cluster's network is configs/networks/
/// hf-ultrascale-cluster.yaml (its scale-out efficiency and step latency fitted the same way).
struct NanotronModel {
  double framework_efficiency = 0.60;      ///< kernels relative to Megatron-Core's
  double host_overhead_per_op_s = 140e-6;  ///< Python issue time per op
  double fragmentation = 0.05;             ///< reserved over allocated activations
};

/// The nanotron sweep (hf_ultrascale_h100_train.csv).
struct UltrascaleResult {
  ValidationTable throughput;             ///< tokens/s/GPU, Success rows trusted for pp
  ValidationTable throughput_pp1;         ///< the rows of `throughput` without pipelining
  ValidationTable throughput_pp_suspect;  ///< Success rows with pp > 1 and after_pp_fix False
  ValidationTable memory;                 ///< peak allocated GiB, Success rows
  int oom_rows = 0, oom_correct = 0;      ///< rows, rows whose OOM status we predict right
  int oom_false_fit = 0, oom_false_oom = 0;
  double oom_accuracy() const { return oom_rows ? 100.0 * oom_correct / oom_rows : 0.0; }
};

/// Predicts every run: tokens/s/GPU and peak memory of Success rows, OOM vs fit for all
/// rows. Framework model of nanotron: SwiGLU/RMSNorm Llama architecture as in the row
/// (missing fields of OOM rows taken from the Success rows of the same model size),
/// FlashAttention, no recompute, tp_mode REDUCE_SCATTER = sequence parallel,
/// tp_async_comm = TP overlap, ZeRO-1 optimizer sharding as given, fp32 gradient
/// accumulation (bf16 .grad plus an fp32 buffer), DP all-reduce in 25 MB buckets
/// overlapped with backward, 1F1B pipeline; H100 SXM 80 GB, 8 per node, network assumed
/// DGX H100-like (the data gives no fabric).
UltrascaleResult validate_hf_ultrascale(const ReferenceContext& ctx,
                                        const NanotronModel& model = {});

/// Fits NanotronModel::framework_efficiency and the cluster's network_efficiency to the
/// Success rows without pipelining (sum of squared log errors of tokens/s/GPU), then
/// fragmentation to the reserved memory, by bounded Nelder-Mead. The host overhead stays
/// at its value read off the launch-bound runs. Returns the fitted model; `network`
/// receives the fitted network; `mape_before/after` the pp = 1 throughput MAPE.
NanotronModel fit_hf_ultrascale(const ReferenceContext& ctx, NetworkSpec& network,
                                double& mape_before, double& mape_after);

}  // namespace rapid
