// The flat record every evaluator returns for one point; one HDF5 row (io/result_schema.hpp
// lists the columns). Times in seconds, memory in bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace rapid {

/// A point's outcome. Infeasible points are rows with a status, never exceptions.
/// NoRoute: a hard link failure leaves some pair of GPUs of the layout without a path
/// (docs/faults.md).
/// Overheat: even fully throttled, some GPU's steady temperature exceeds its shutdown
/// temperature (docs/nonideal.md sec 2): the point cannot run under its scenario.
/// Error: the evaluator could not handle a legal point (error_code says why); the sweep
/// goes on.
enum class Status : uint8_t {
  Ok = 0,
  OutOfMemory = 1,
  Infeasible = 2,
  NoRoute = 3,
  Overheat = 4,
  Error = 5,
  /// Serving (mode: inference): requests arrive faster than the replica can serve them;
  /// the queue grows without bound and the latencies have no steady state.
  Overloaded = 6
};
/// Names of Status values, indexed by value (also the HDF5 enum member names).
inline constexpr const char* kStatusNames[] = {"ok",       "oom",   "infeasible", "no_route",
                                               "overheat", "error", "overloaded"};

/// Why an `error` row has no result: the host ran out of memory (std::bad_alloc), an
/// internal limit or invariant of an evaluator (InternalError), anything else.
/// Why an error row failed: std::bad_alloc, an InternalError, anything else, a LimitError
/// (an evaluator's own bound, e.g. the DES event budget).
enum class ErrorCode : uint8_t { None = 0, HostMemory = 1, Internal = 2, Other = 3, Limit = 4 };
inline constexpr const char* kErrorCodeNames[] = {"none", "host_memory", "internal", "other",
                                                  "limit"};
inline const char* status_name(Status s) {
  return kStatusNames[static_cast<int>(s)];
}

/// Warnings raised on a point (PRODUCT.md section 7), OR-ed in EvalResult::flags.
enum Flag : uint32_t {
  kFlagSmallMicrobatch = 1u << 0,   ///< fewer than 8 samples per replica per step (gbs/dp < 8)
  kFlagLatencyBoundComm = 1u << 1,  ///< TP/DP collectives below 1 MiB: start-up dominated
  /// The closed form is known to be unreliable on such a layout (docs/des.md sec 10):
  /// use --precision high (the DES).
  kFlagClosedFormRisk = 1u << 2,
  kFlagPipelineBubble = 1u << 3,  ///< bubble > 20% of the step: more micro-batches help
  kFlagNearCapacity = 1u << 4,    ///< peak memory above 95% of HBM: no headroom left
  /// Serving, chunked prefill off: a prompt longer than max_num_batched_tokens runs alone in
  /// its iteration, past the stack's token budget (over_budget_prompt: alone).
  kFlagPromptOverBudget = 1u << 5,
};

/// The single knob change that makes an out-of-memory layout fit (the HDF5 enum member
/// names, indexed by value; eval/fit_hint.hpp).
enum class FitHint : uint8_t {
  None,
  ZeroStage,
  SequenceParallel,
  SelectiveRecompute,
  RecomputeNumLayers,
  FullRecompute,
  CpuOffload,
  MicroBatch
};
inline constexpr const char* kFitHintNames[] = {"none",
                                                "zero_stage",
                                                "sequence_parallel",
                                                "selective_recompute",
                                                "recompute_num_layers",
                                                "full_recompute",
                                                "cpu_offload_layers",
                                                "mbs"};

/// Which evaluator produced a row (the HDF5 enum member names, indexed by value).
inline constexpr const char* kFidelityNames[] = {"analytical", "des"};

/// On a DES row whose step or breakdown differs from the closed form's by more than 2% of
/// the step, the breakdown column where the two differ most: where the closed form's
/// simplification shows (docs/des.md "DES and analytical"). `none` within 2% and on
/// analytical rows. HDF5 enum member names, indexed by value.
enum class GapCause : uint8_t {
  None,
  Compute,
  Interference,
  LayerComm,
  PpComm,
  DpExposed,
  HostBound,
  Offload,
  Optimizer,
  Bubble
};
inline constexpr const char* kGapCauseNames[] = {
    "none",       "compute",    "interference", "layer_comm", "pp_comm",
    "dp_exposed", "host_bound", "offload",      "optimizer",  "bubble"};
/// The bound within which the fidelities count as agreeing: 2% of the DES step.
inline constexpr double kFidelityAgreement = 0.02;

struct EvalResult {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  Status status = Status::Ok;
  uint32_t flags = 0;
  int64_t num_microbatches = 0;

  // Time (NaN when the point does not fit).
  double step_time_s = kNaN;
  /// The analytical model's step time of the point: step_time_s on analytical rows, the
  /// closed form's answer on rows the DES produced (NaN where it did not evaluate).
  double step_time_analytical_s = kNaN;
  double tokens_per_s = kNaN;
  double tokens_per_s_per_gpu = kNaN;
  double mfu = kNaN;             ///< model FLOPs / (step time * GPUs * peak) (PaLM, Chowdhery 2022)
  double hfu = kNaN;             ///< (model + recomputed FLOPs) / (step time * GPUs * peak)
  double compute_time_s = kNaN;  ///< compute on the bottleneck stage, kernels at full speed
  // compute_time_s by operator class (OpKind; core/op_class.hpp): they sum to it.
  double gemm_time_s = kNaN;          ///< GEMMs (projections, MLP, router, LM head, unfused QK/PV)
  double attention_time_s = kNaN;     ///< fused attention kernels (FlashAttention)
  double memory_bound_time_s = kNaN;  ///< streaming kernels (norms, activations, softmax, ...)
  /// Compute lost on that stage to communication kernels beside it (their SMs and HBM
  /// traffic; cost/interference.hpp).
  double interference_time_s = kNaN;
  double exposed_comm_time_s = kNaN;  ///< layer (TP + CP + EP) + pp + dp exposed
  double tp_comm_time_s = kNaN;       ///< TP collectives on the critical path (dense + expert TP)
  double cp_comm_time_s = kNaN;       ///< CP collectives (ring attention's K/V exchange)
  double ep_comm_time_s = kNaN;       ///< EP all-to-alls (MoE token dispatch and combine)
  double pp_comm_time_s = kNaN;       ///< pipeline p2p on the critical path
  double dp_comm_time_s = kNaN;       ///< DP/ZeRO traffic, total
  double dp_exposed_time_s = kNaN;    ///< DP/ZeRO traffic not hidden by compute
  double bubble_time_s = kNaN;        ///< pipeline fill/drain idle time
  double host_bound_time_s = kNaN;    ///< GPU idle waiting for the host to issue ops
  double offload_time_s = kNaN;       ///< activation offload copies the passes do not hide
  double optimizer_time_s = kNaN;
  double comm_compute_ratio = kNaN;  ///< all communication time / compute time

  // Discrete-event simulation (docs/des.md); analytical rows keep the defaults.
  uint8_t fidelity = 0;                ///< index into kFidelityNames
  int32_t simulated_replicas = 0;      ///< DP replicas simulated (1: one stood for all)
  int32_t hot_spot_links = 0;          ///< links busy more than 90% of the step
  double max_link_utilization = kNaN;  ///< busy fraction of the busiest link
  /// DES rows: step_time_s / step_time_analytical_s - 1; NaN on analytical rows.
  double fidelity_gap = kNaN;
  uint8_t fidelity_gap_cause = 0;  ///< GapCause: where the two differ beyond 2% of the step

  // Non-ideal behaviour (docs/nonideal.md); NaN when the job's scenario leaves it off.
  double energy_per_step_J = kNaN;       ///< all GPUs of the job, one step
  double avg_gpu_power_W = kNaN;         ///< per GPU, averaged over the step and the GPUs
  double peak_gpu_power_W = kNaN;        ///< the highest board power any GPU draws in the step
  double tokens_per_J = kNaN;            ///< tokens / (energy per step)
  double cluster_power_swing_MW = kNaN;  ///< max - min of all GPUs' summed power within a step
  double gpu_temperature_C =
      kNaN;  ///< hottest GPU's die, time average at the periodic steady state
  double hbm_temperature_C = kNaN;  ///< that GPU's HBM, time average
  double throttle_fraction = kNaN;  ///< that GPU's time under any thermal slowdown (die or HBM)
  double thermal_slowdown = kNaN;   ///< step time / step time without throttling - 1
  double dvfs_fraction = kNaN;      ///< that GPU's time at the lowered DVFS clock (steady state)
  double dvfs_warmup_engagements = kNaN;  ///< DVFS samples lowering its clock heating from idle
  double time_to_throttle_s = kNaN;  ///< from idle (a job's start) to its first thermal slowdown
  double hbm_utilization = kNaN;     ///< HBM bytes moved / (HBM peak x step time), bounding GPU
  int32_t bounding_gpu = -1;         ///< GPU whose slowness bounds the step (-1: none stands out)
  double job_mtbf_s = kNaN;          ///< mean time between job interruptions (all components)
  double checkpoint_bytes = kNaN;    ///< one checkpoint of the job (weights + optimizer states)
  double checkpoint_write_s = kNaN;  ///< time to write it
  double checkpoint_interval_s = kNaN;  ///< Young/Daly optimum
  double goodput = kNaN;                ///< useful fraction of the job's wall time
  double goodput_tokens_per_s = kNaN;   ///< tokens_per_s x goodput

  // Serving (mode: inference; docs/inference.md sec 5); NaN on training rows. Per the
  // deployment (all replicas) unless named per replica; latencies are means over requests.
  double concurrency = kNaN;         ///< requests in flight offered (closed loop)
  double arrival_rate_per_s = kNaN;  ///< requests per second offered (open loop)
  double running_batch = kNaN;       ///< mean sequences per iteration, per replica
  double max_concurrency = kNaN;     ///< requests of the longest length that fit, all replicas
  double kv_cache_bytes = kNaN;      ///< KV cache of the running batch at its longest, per GPU
  double kv_cache_capacity_tokens = kNaN;  ///< tokens the KV cache memory holds, per replica
  double ttft_s = kNaN;                    ///< time to first token (queueing + prefill)
  double ttft_p50_s = kNaN;                ///< its median (DES only: the closed form has no
                                           ///< tails)
  double ttft_p90_s = kNaN;                ///< its 90th percentile (DES only)
  double ttft_p99_s = kNaN;                ///< its 99th percentile (DES only)
  double itl_s = kNaN;                     ///< inter-token latency (TPOT), mean over tokens
  double itl_start_s = kNaN;               ///< over the first 10% of each request's output tokens
  double itl_mid_s = kNaN;                 ///< over the middle 10%
  double itl_end_s = kNaN;                 ///< over the last 10%
  double itl_p50_s = kNaN;                 ///< median of the gaps (DES only)
  double itl_p90_s = kNaN;                 ///< 90th percentile of the gaps (DES only)
  double itl_p99_s = kNaN;                 ///< 99th percentile of the gaps (DES only)
  double e2e_latency_s = kNaN;             ///< arrival to last token
  double e2e_p50_s = kNaN;                 ///< its median (DES only)
  double e2e_p90_s = kNaN;                 ///< its 90th percentile (DES only)
  double e2e_p99_s = kNaN;                 ///< its 99th percentile (DES only)
  double queue_time_s = kNaN;              ///< arrival to the first prefill iteration
  double output_tokens_per_s = kNaN;       ///< generated tokens per second, all replicas
  double total_tokens_per_s = kNaN;        ///< prompt + generated tokens per second
  double requests_per_s = kNaN;            ///< completed requests per second
  double prefill_time_s = kNaN;            ///< one prompt's prefill alone (TTFT at no load)
  double decode_step_time_s = kNaN;        ///< one decode iteration at the mean running batch

  // Prediction intervals at the interval file's coverage (docs/validation.md "Prediction
  // intervals"; core/prediction_interval.hpp): where the measurement would lie, from the
  // model's out-of-sample residuals on the published tables. NaN where the row has no value.
  double step_time_lo_s = kNaN, step_time_hi_s = kNaN;
  double tokens_per_s_lo = kNaN, tokens_per_s_hi = kNaN;
  double mfu_lo = kNaN, mfu_hi = kNaN;
  double ttft_lo_s = kNaN, ttft_hi_s = kNaN;
  double itl_lo_s = kNaN, itl_hi_s = kNaN;
  double e2e_latency_lo_s = kNaN, e2e_latency_hi_s = kNaN;
  uint8_t extrapolated = 0;  ///< 1: no published table ran this GPU type with this stack family

  // Memory of the GPU with the largest peak (kept for OOM points).
  double peak_memory_bytes = 0;
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double reserve_bytes = 0;
  double memory_capacity_bytes = 0;
  double oom_excess_bytes = 0;  ///< peak - capacity on out-of-memory rows
  uint8_t fit_hint = 0;         ///< FitHint of an out-of-memory row
  uint8_t error_code = 0;       ///< ErrorCode of an error row
  int32_t fit_hint_value = 0;   ///< the value that knob takes

  /// The layers' collectives on the critical path (TP + CP + EP; core/op_class.hpp).
  double layer_comm_time_s() const { return tp_comm_time_s + cp_comm_time_s + ep_comm_time_s; }
};

/// The totals both evaluators derive from the bottleneck stage's breakdown: the bubble is
/// what of the step its work does not fill (docs/model.md section 8), exposed
/// communication (TP/CP/EP + PP + exposed DP) and all communication over compute.
inline void derive_totals(EvalResult& r) {
  const double layer = r.layer_comm_time_s();
  r.bubble_time_s =
      std::max(0.0, r.step_time_s - (r.compute_time_s + r.interference_time_s + layer +
                                     r.pp_comm_time_s + r.dp_exposed_time_s + r.host_bound_time_s +
                                     r.optimizer_time_s + r.offload_time_s));
  r.exposed_comm_time_s = layer + r.pp_comm_time_s + r.dp_exposed_time_s;
  r.comm_compute_ratio = (layer + r.pp_comm_time_s + r.dp_comm_time_s) / r.compute_time_s;
}

}  // namespace rapid
