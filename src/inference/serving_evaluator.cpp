#include "rapid/inference/serving_evaluator.hpp"

#include <cmath>

#include "rapid/inference/serving_analytical.hpp"
#include "rapid/inference/serving_des.hpp"

namespace rapid {

namespace {

/// Adds `m` of `count` replicas into the row's sums (latencies weighted by requests/s). A
/// percentile is averaged the same way: the replicas' classes (at most two, one client
/// apart under a closed loop; all alike under an open one) have close distributions, and
/// the mixture's percentile lies between theirs (docs/inference.md sec 5).
struct Combined {
  ReplicaMetrics sum;
  double weight = 0;
  void add(const ReplicaMetrics& m, double count) {
    const double w = m.requests_per_s * count;
    sum.overloaded |= m.overloaded;
    sum.closed_form_risk |= m.closed_form_risk;
    for (auto [into, from] : {std::pair{&sum.ttft_s, m.ttft_s},
                              {&sum.ttft_p50_s, m.ttft_p50_s},
                              {&sum.ttft_p90_s, m.ttft_p90_s},
                              {&sum.ttft_p99_s, m.ttft_p99_s},
                              {&sum.itl_s, m.itl_s},
                              {&sum.itl_start_s, m.itl_start_s},
                              {&sum.itl_mid_s, m.itl_mid_s},
                              {&sum.itl_end_s, m.itl_end_s},
                              {&sum.itl_p50_s, m.itl_p50_s},
                              {&sum.itl_p90_s, m.itl_p90_s},
                              {&sum.itl_p99_s, m.itl_p99_s},
                              {&sum.e2e_latency_s, m.e2e_latency_s},
                              {&sum.e2e_p50_s, m.e2e_p50_s},
                              {&sum.e2e_p90_s, m.e2e_p90_s},
                              {&sum.e2e_p99_s, m.e2e_p99_s},
                              {&sum.queue_time_s, m.queue_time_s},
                              {&sum.decode_step_time_s, m.decode_step_time_s},
                              {&sum.gemm_s, m.gemm_s},
                              {&sum.attention_s, m.attention_s},
                              {&sum.memory_bound_s, m.memory_bound_s},
                              {&sum.tp_comm_s, m.tp_comm_s},
                              {&sum.ep_comm_s, m.ep_comm_s},
                              {&sum.pp_comm_s, m.pp_comm_s},
                              {&sum.host_s, m.host_s},
                              {&sum.step_s, m.step_s},
                              {&sum.running_batch, m.running_batch}})
      *into = (weight == 0 ? 0.0 : *into) + w * from;
    sum.output_tokens_per_s += count * m.output_tokens_per_s;
    sum.total_tokens_per_s += count * m.total_tokens_per_s;
    sum.requests_per_s += count * m.requests_per_s;
    sum.peak_kv_tokens = std::max(sum.peak_kv_tokens, m.peak_kv_tokens);
    weight += w;
  }
  double mean(double total) const { return weight > 0 ? total / weight : EvalResult::kNaN; }
};

}  // namespace

void set_serving_load(const SweepSpec& spec, const Point& p, EvalResult& r) {
  const double load = spec.serving.loads[static_cast<size_t>(p.load)];
  (spec.serving.load_kind == LoadKind::Concurrency ? r.concurrency : r.arrival_rate_per_s) = load;
}

void evaluate_serving(const SweepSpec& spec, const Point& p, EvalResult& r, bool des) {
  const HardwareSpec& hw = spec.hardware[static_cast<size_t>(p.hardware)];
  const NetworkSpec& net = spec.network_of(static_cast<size_t>(p.hardware));
  const ServingSpec& s = spec.serving;
  r = EvalResult{};
  r.fidelity = des ? 1 : 0;
  set_serving_load(spec, p, r);
  const double load = s.loads[static_cast<size_t>(p.load)];

  const ServingMemory mem = serving_memory(spec.model, hw, s, p.par);
  r.weights_bytes = mem.weights_bytes;
  r.activations_bytes = mem.activations_bytes;
  r.reserve_bytes = mem.workspace_bytes;
  r.memory_capacity_bytes = hw.hbm_capacity_bytes;
  r.kv_cache_capacity_tokens = mem.kv_capacity_tokens();
  r.max_concurrency = static_cast<double>(mem.max_batch) * p.par.dp;
  const double block_bytes = mem.kv_bytes_per_token * mem.block_tokens;
  // Chunked prefill off and requests longer than the token budget: a stack that refuses
  // them serves none of this job on any layout (docs/inference.md "Serving stacks").
  if (s.refused_over_budget()) {
    r.status = Status::Infeasible;
    return;
  }
  if (!mem.fits()) {  // not even one request of the longest length beside the weights
    r.status = Status::OutOfMemory;
    r.peak_memory_bytes = mem.weights_bytes + mem.activations_bytes + mem.workspace_bytes +
                          mem.blocks_per_request * block_bytes;
    r.kv_cache_bytes = mem.blocks_per_request * block_bytes;
    r.oom_excess_bytes = r.peak_memory_bytes - mem.capacity_bytes;
    return;
  }
  const StepModel step(spec.model, hw, net, s, p.par);
  const int64_t dp = p.par.dp, pp = p.par.pp;
  // Replicas coupled by expert parallelism (ep > tp) step together: each sees the others'
  // tokens in its MoE layers; counted through the step batch of its own replica here.
  Combined c;
  auto run = [&](double per_replica, double count) {
    if (count <= 0 || per_replica <= 0) return;
    const ReplicaMetrics m =
        des ? serving_simulate(step, s, mem, pp, per_replica,
                               static_cast<uint64_t>(std::llround(per_replica * 1000)))
            : serving_closed_form(step, s, mem, pp, per_replica);
    c.add(m, count);
  };
  if (s.load_kind == LoadKind::Concurrency) {
    const int64_t C = std::llround(load), base = C / dp, extra = C % dp;
    run(static_cast<double>(base + 1), static_cast<double>(extra));
    run(static_cast<double>(base), static_cast<double>(dp - extra));
  } else {
    run(load / dp, static_cast<double>(dp));
  }
  const ReplicaMetrics& m = c.sum;
  r.status = m.overloaded ? Status::Overloaded : Status::Ok;
  r.ttft_s = c.mean(m.ttft_s);
  r.ttft_p50_s = c.mean(m.ttft_p50_s);
  r.ttft_p90_s = c.mean(m.ttft_p90_s);
  r.ttft_p99_s = c.mean(m.ttft_p99_s);
  r.itl_s = c.mean(m.itl_s);
  r.itl_start_s = c.mean(m.itl_start_s);
  r.itl_mid_s = c.mean(m.itl_mid_s);
  r.itl_end_s = c.mean(m.itl_end_s);
  r.itl_p50_s = c.mean(m.itl_p50_s);
  r.itl_p90_s = c.mean(m.itl_p90_s);
  r.itl_p99_s = c.mean(m.itl_p99_s);
  r.e2e_latency_s = c.mean(m.e2e_latency_s);
  r.e2e_p50_s = c.mean(m.e2e_p50_s);
  r.e2e_p90_s = c.mean(m.e2e_p90_s);
  r.e2e_p99_s = c.mean(m.e2e_p99_s);
  r.queue_time_s = c.mean(m.queue_time_s);
  r.decode_step_time_s = c.mean(m.decode_step_time_s);
  r.running_batch = c.mean(m.running_batch);
  r.output_tokens_per_s = m.output_tokens_per_s;
  r.total_tokens_per_s = m.total_tokens_per_s;
  r.requests_per_s = m.requests_per_s;
  const double gpus = static_cast<double>(p.par.num_gpus());
  r.tokens_per_s = m.output_tokens_per_s;
  r.tokens_per_s_per_gpu = m.output_tokens_per_s / gpus;
  // Decode FLOPs are about 2 x active parameters per token (Kaplan et al. 2020, sec 2.1).
  const double peak = hw.tensor_peak_FLOPs[static_cast<int>(s.dtype)];
  r.mfu = peak > 0 ? 2.0 * spec.model.active_params() * m.total_tokens_per_s / (gpus * peak)
                   : EvalResult::kNaN;
  r.step_time_s = c.mean(m.step_s);
  r.step_time_analytical_s = des ? EvalResult::kNaN : r.step_time_s;
  r.gemm_time_s = c.mean(m.gemm_s);
  r.attention_time_s = c.mean(m.attention_s);
  r.memory_bound_time_s = c.mean(m.memory_bound_s);
  r.compute_time_s = r.gemm_time_s + r.attention_time_s + r.memory_bound_time_s;
  r.tp_comm_time_s = c.mean(m.tp_comm_s);
  r.ep_comm_time_s = c.mean(m.ep_comm_s);
  r.cp_comm_time_s = 0;
  r.pp_comm_time_s = c.mean(m.pp_comm_s);
  r.host_bound_time_s = c.mean(m.host_s);
  r.interference_time_s = r.dp_comm_time_s = r.dp_exposed_time_s = 0;
  r.optimizer_time_s = r.offload_time_s = 0;
  derive_totals(r);
  // KV cache at its fullest: the most tokens held at once on one replica, per GPU.
  r.kv_cache_bytes = m.peak_kv_tokens * mem.kv_bytes_per_token;
  r.peak_memory_bytes =
      mem.weights_bytes + mem.activations_bytes + mem.workspace_bytes + r.kv_cache_bytes;
  r.prefill_time_s = [&] {
    StepBatch b;
    b.prefill_tokens = std::max<int64_t>(1, std::llround(s.input_tokens.mean));
    b.prefill_seqs = b.logits_seqs = 1;
    b.prefill_attention_pairs = 0.5 * b.prefill_tokens * b.prefill_tokens;
    return step.time(b).total_s;
  }();
  if (p.par.tp > 1) r.flags |= kFlagLatencyBoundComm;  // decode all-reduces are KB-sized
  if (!des && m.closed_form_risk) r.flags |= kFlagClosedFormRisk;
  if (s.over_budget()) r.flags |= kFlagPromptOverBudget;  // ran alone (refused: returned)
  if (r.peak_memory_bytes > 0.95 * hw.hbm_capacity_bytes) r.flags |= kFlagNearCapacity;
}

}  // namespace rapid
