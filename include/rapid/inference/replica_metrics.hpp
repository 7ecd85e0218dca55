// What one serving replica delivers under one load (docs/inference.md sec 4), from the
// closed form (serving_analytical.hpp) or the simulation (serving_des.hpp); the deployment's
// row combines its replicas (serving_evaluator.hpp).
#pragma once

#include <cstdint>
#include <limits>

#include "rapid/inference/step_model.hpp"

namespace rapid {

struct ReplicaMetrics {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  bool overloaded = false;  ///< arrivals outpace what the replica can serve
  /// The closed form is known to part from the simulation by more than 10% on TTFT or ITL
  /// here (docs/inference.md sec 4): clients waiting for a slot, or pp groups of 32 or more.
  bool closed_form_risk = false;
  // Percentiles (nearest rank over the measured requests and gaps): the simulation only.
  double ttft_s = kNaN, ttft_p50_s = kNaN, ttft_p90_s = kNaN, ttft_p99_s = kNaN;
  double itl_s = kNaN, itl_start_s = kNaN, itl_mid_s = kNaN, itl_end_s = kNaN;
  double itl_p50_s = kNaN, itl_p90_s = kNaN, itl_p99_s = kNaN;
  double e2e_latency_s = kNaN, e2e_p50_s = kNaN, e2e_p90_s = kNaN, e2e_p99_s = kNaN;
  double queue_time_s = kNaN;
  double output_tokens_per_s = 0, total_tokens_per_s = 0, requests_per_s = 0;
  double running_batch = 0;   ///< mean sequences per iteration
  double peak_kv_tokens = 0;  ///< most KV cache tokens held at once
  double decode_step_time_s = kNaN;
  // The mean iteration's time by class (slowest stage), for the row's breakdown columns.
  double gemm_s = 0, attention_s = 0, memory_bound_s = 0, tp_comm_s = 0, ep_comm_s = 0,
         pp_comm_s = 0, host_s = 0, step_s = 0;

  /// The classes of the mean iteration from `t`, a sum of iterations, scaled by `w`.
  void set_classes(const StepTime& t, double w = 1.0) {
    gemm_s = w * t.gemm_s;
    attention_s = w * t.attention_s;
    memory_bound_s = w * t.memory_bound_s;
    tp_comm_s = w * t.tp_comm_s;
    ep_comm_s = w * t.ep_comm_s;
    pp_comm_s = w * t.pp_comm_s;
    host_s = w * t.host_s;
  }
};

}  // namespace rapid
