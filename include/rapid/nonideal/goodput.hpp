// Failures at job scale (docs/goodput.md sec 6): job MTBF from per-component rates, the
// checkpoint's size and write time, the Young/Daly checkpoint interval and the expected
// goodput (useful fraction of wall time) of one point.
#pragma once

#include <cstdint>

#include "rapid/core/eval_result.hpp"
#include "rapid/spec/failure_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/training_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// Bytes per parameter of the model state a checkpoint holds besides the optimizer's:
/// the bf16 (or fp16) weights Megatron saves in the model state dict.
inline constexpr double kCheckpointWeightBytes = 2;

/// Mean time between job interruptions: any component's failure stops a synchronous job
/// (Llama 3 sec 3.3.4), so with independent exponential failures the job's rate is the sum
/// 1/M = sum over components of count x rate: `gpus` GPUs (and their HBM), one NIC per GPU,
/// ceil(gpus / gpus_per_node) nodes. Infinity when every rate is 0.
double job_mtbf_s(const FailureSpec& f, int64_t gpus, int64_t gpus_per_node);

/// Young 1974 ("A first order approximation to the optimum checkpoint interval", CACM 17):
/// tau = sqrt(2 delta M) for checkpoint cost `write_s` = delta and MTBF `mtbf_s` = M.
double young_interval_s(double write_s, double mtbf_s);

/// Daly 2006 ("A higher order estimate of the optimum checkpoint interval for restart
/// dumps", FGCS 22(3)): tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / (2M)) +
/// (1/9) (delta / (2M))] - delta for delta < 2M, else M.
double daly_interval_s(double write_s, double mtbf_s);

/// Daly 2006's expected wall time of solve time T_s, checkpointing every `interval_s` = tau
/// at cost delta, restarting in R: T_w = M e^{R/M} (e^{(tau + delta)/M} - 1) T_s /
/// tau. Returns T_s / T_w = tau / (M e^{R/M} (e^{(tau + delta)/M} - 1)), in (0, 1]; 1 when M
/// is infinite, e^{-R/M} in the limit tau -> 0 of a free checkpoint (delta = 0).
double daly_goodput(double interval_s, double write_s, double restart_s, double mtbf_s);

/// One checkpoint of the job: total parameters x (weight bytes + training.optimizer_bytes),
/// i.e. 2 + 12 = 14 B per parameter under mixed-precision Adam (bf16 weights; fp32 master
/// weights, m and v). The model's total parameters count each weight once (all experts).
double checkpoint_bytes(const ModelSpec& model, const TrainingSpec& training);

/// Nodes that write a checkpoint in parallel: every node of the job when the optimizer
/// states are sharded over DP (ZeRO >= 1: each DP rank holds and writes its shard; the
/// replicated weights spread over them by Megatron-Core's fully parallel save), else the
/// nodes of one DP replica (DP rank 0 of each TP/PP shard writes; CP ranks hold copies):
/// pp x ceil(tp / gpus_per_node) nodes, at most the job's nodes (Megatron rank order
/// tp, cp, dp, pp puts the stages of one replica on different nodes when a stage's dp x tp x
/// cp ranks fill a node, and a smaller job on fewer nodes than that).
int64_t checkpoint_writer_nodes(const ParallelConfig& par, int64_t gpus_per_node);

/// Fills job_mtbf_s, checkpoint_bytes, checkpoint_write_s, checkpoint_interval_s (Daly),
/// goodput and goodput_tokens_per_s (= tokens_per_s x goodput) of an ok row `r` (its
/// tokens_per_s set) of workload `w` on nodes of `gpus_per_node` GPUs. Leaves other rows
/// and a spec with failures off untouched (NaN).
void fill_goodput(const FailureSpec& f, const ModelSpec& model, const TrainingSpec& training,
                  const Workload& w, int64_t gpus_per_node, EvalResult& r);

}  // namespace rapid
