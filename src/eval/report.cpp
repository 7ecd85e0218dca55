#include "rapid/eval/report.hpp"

#include <fmt/format.h>

#include <cmath>

#include "rapid/core/op_class.hpp"
#include "rapid/core/prediction_interval.hpp"

namespace rapid {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

std::string describe_fit_hint(FitHint h, int32_t value) {
  switch (h) {
    case FitHint::None:
      return "no single knob change (try more pipeline or tensor parallelism)";
    case FitHint::ZeroStage:
      return fmt::format("zero_stage {}", value);
    case FitHint::SequenceParallel:
      return "sp true";
    case FitHint::SelectiveRecompute:
      return "recompute selective";
    case FitHint::RecomputeNumLayers:
      return fmt::format("recompute full, recompute_method block, recompute_num_layers {}", value);
    case FitHint::FullRecompute:
      return "recompute full";
    case FitHint::CpuOffload:
      return fmt::format("cpu_offload_layers {}", value);
    case FitHint::MicroBatch:
      return fmt::format("mbs {}", value);
  }
  return "";
}

std::string describe_result(const SweepSpec& spec, const Point& p, const EvalResult& r,
                            const TpCollectiveCost* tp) {
  const HardwareSpec& hw = spec.hardware[static_cast<size_t>(p.hardware)];
  std::string out;
  out += fmt::format("model       {} on {} x {} ({})\n", spec.model.name, p.par.num_gpus(), hw.name,
                     spec.network.name);
  out +=
      fmt::format("layout      {}  (m = {} micro-batches)\n", p.par.describe(), r.num_microbatches);
  if (!spec.scenarios.empty() && spec.scenarios[static_cast<size_t>(p.scenario)].any())
    out += fmt::format("scenario    {}: {}\n", spec.scenarios[static_cast<size_t>(p.scenario)].name,
                       describe_scenario(spec.scenarios[static_cast<size_t>(p.scenario)]));
  if (const unsigned off = uncredited_overlaps(hw, spec.training))
    out += fmt::format(
        "stack       {} on {}: {} not credited (the runs its end-to-end factors were fitted "
        "on had no such overlap; docs/model.md sec 9)\n",
        spec.training.framework.name, hw.name, overlap_names(off));
  if (p.par.zero_stage >= 3 && stack_training(hw, spec.training).zero3_prefetch_credited)
    out += fmt::format(
        "stack       {}: ZeRO-3 per-unit prefetch credited (the stack's structure, not an "
        "opt-in overlap; docs/model.md sec 9)\n",
        spec.training.framework.name);
  out += fmt::format("status      {}\n", status_name(r.status));
  out += fmt::format(
      "memory      peak {:.2f} GiB of {:.2f} GiB: weights {:.2f}, grads {:.2f}, optimizer {:.2f}, "
      "activations {:.2f}, reserve {:.2f}\n",
      r.peak_memory_bytes / kGiB, r.memory_capacity_bytes / kGiB, r.weights_bytes / kGiB,
      r.grads_bytes / kGiB, r.optimizer_bytes / kGiB, r.activations_bytes / kGiB,
      r.reserve_bytes / kGiB);
  if (r.status == Status::OutOfMemory) {
    // Under a GiB in MiB: a layout 2 MiB over must not read "0.00 GiB over".
    const double over = r.oom_excess_bytes;
    out += over >= kGiB
               ? fmt::format("            does not fit: {:.2f} GiB over capacity\n", over / kGiB)
               : fmt::format("            does not fit: {:.1f} MiB over capacity\n",
                             over / (1024.0 * 1024.0));
    out += fmt::format("fits with   {}\n",
                       describe_fit_hint(static_cast<FitHint>(r.fit_hint), r.fit_hint_value));
  }
  const IntervalBand* band = static_cast<size_t>(p.hardware) < spec.intervals.size()
                                 ? &spec.intervals[static_cast<size_t>(p.hardware)]
                                 : nullptr;
  const double coverage = band ? band->coverage : EvalResult::kNaN;
  if (r.status == Status::Ok) {
    out += fmt::format("step time   {:.4f} s{}\n", r.step_time_s,
                       interval_text(r.step_time_lo_s, r.step_time_hi_s, coverage, " s"));
    out += fmt::format(
        "breakdown   compute {:.4f} s, interference {:.4f} s, TP/CP/EP comm {:.4f} s, PP p2p "
        "{:.4f} s, bubble {:.4f} s, DP exposed {:.4f} s (of {:.4f} s), host-bound {:.4f} s, "
        "offload {:.4f} s, optimizer {:.4f} s (of the bottleneck stage; they sum to the step)\n",
        r.compute_time_s, r.interference_time_s, r.layer_comm_time_s(), r.pp_comm_time_s,
        r.bubble_time_s, r.dp_exposed_time_s, r.dp_comm_time_s, r.host_bound_time_s,
        r.offload_time_s, r.optimizer_time_s);
    out += "by class    compute:";
    for (size_t k = 0; k < kNumOpClasses; ++k)
      out += fmt::format(" {} {:.4f} s", kOpClassNames[k], r.*kOpClassColumns[k]);
    out += "; comm:";
    for (size_t k = 0; k < kNumCommClasses; ++k)
      out += fmt::format(" {} {:.4f} s", kCommClassNames[k], r.*kCommClassColumns[k]);
    out += "\n";
    out += fmt::format("throughput  {:.0f} tokens/s{}, {:.1f} tokens/s/GPU\n", r.tokens_per_s,
                       interval_text(r.tokens_per_s_lo, r.tokens_per_s_hi, coverage, ""),
                       r.tokens_per_s_per_gpu);
    out += fmt::format("utilization MFU {:.1f}%{}, HFU {:.1f}%, comm/compute {:.3f}\n", 100 * r.mfu,
                       interval_text(r.mfu_lo, r.mfu_hi, coverage, "%", 100), 100 * r.hfu,
                       r.comm_compute_ratio);
    if (band) out += describe_interval(*band, r.fidelity == 1);
    if (!std::isnan(r.energy_per_step_J)) {
      out += fmt::format(
          "power       {:.0f} W average, {:.0f} W peak per GPU; {} per step, {:.2f} tokens/J; "
          "cluster swing {}; HBM {:.1f}% busy\n",
          r.avg_gpu_power_W, r.peak_gpu_power_W,
          r.energy_per_step_J >= 1e5 ? fmt::format("{:.3f} MJ", r.energy_per_step_J / 1e6)
                                     : fmt::format("{:.2f} kJ", r.energy_per_step_J / 1e3),
          r.tokens_per_J,
          r.cluster_power_swing_MW >= 0.1
              ? fmt::format("{:.2f} MW", r.cluster_power_swing_MW)
              : fmt::format("{:.1f} kW", r.cluster_power_swing_MW * 1e3),
          100 * r.hbm_utilization);
    }
    if (!std::isnan(r.gpu_temperature_C)) out += describe_thermal_line(r);
    if (r.bounding_gpu >= 0)
      out += fmt::format("bounded by  GPU {} (a straggler of the scenario)\n", r.bounding_gpu);
    if (!std::isnan(r.goodput))
      out += fmt::format(
          "failures    job MTBF {:.2f} h; checkpoint {:.2f} TB written in {:.1f} s every {:.0f} s "
          "(Young/Daly); goodput {:.1f}%: {:.0f} useful tokens/s\n",
          r.job_mtbf_s / 3600, r.checkpoint_bytes / 1e12, r.checkpoint_write_s,
          r.checkpoint_interval_s, 100 * r.goodput, r.goodput_tokens_per_s);
  }
  if (r.flags & kFlagSmallMicrobatch)
    out += "warning     fewer than 8 samples per DP replica per step: over-parallelized\n";
  if (r.flags & kFlagLatencyBoundComm)
    out +=
        tp ? fmt::format(
                 "warning     TP collectives below 1 MiB: latency-bound (each {} of {:.2f} MB "
                 "over TP takes {:.1f} us in this run's collective model, {:.1f} us of it "
                 "start-up and per-step latency)\n",
                 collective_name(tp->kind), tp->bytes / 1e6, tp->time_s * 1e6, tp->latency_s * 1e6)
           : "warning     TP collectives below 1 MiB: latency-bound\n";
  if (r.flags & kFlagPipelineBubble)
    out += "warning     pipeline bubble above 20% of the step: more micro-batches would help\n";
  if (r.flags & kFlagNearCapacity)
    out += "warning     peak memory above 95% of capacity: little headroom for fragmentation\n";
  if (r.flags & kFlagClosedFormRisk)
    out += spec.mode == JobMode::Inference
               ? "warning     the closed form parts from the simulation by more than 10% on "
                 "TTFT or ITL on points like this one (clients waiting for a slot, or pipeline "
                 "groups of 32 or more): check it with --fidelity des\n"
               : "warning     the closed form parts from the simulation by more than 2% on many "
                 "layouts like this one (per-micro-batch ZeRO traffic or pipeline transfers "
                 "sharing links): check it with --precision high\n";
  return out;
}

}  // namespace rapid

#include "rapid/analytical/analytical_evaluator.hpp"

namespace rapid {

std::optional<TpCollectiveCost> tp_collective_cost(const Workload& w,
                                                   const AnalyticalEvaluator& eval) {
  for (const Op& op : w.layer.forward) {
    if (op.kind != OpKind::Collective || op.group != CommGroup::TP) continue;
    const CollectivePlan plan =
        eval.collective_cost().plan(op.collective, op.bytes, w.group(op.group));
    return TpCollectiveCost{op.collective, op.bytes, plan.time_s(), plan.latency_s};
  }
  return std::nullopt;
}

std::string describe_ops(const Workload& w, const AnalyticalEvaluator& eval) {
  std::string out;
  auto section = [&](const char* title, const std::vector<Op>& ops) {
    if (ops.empty()) return;
    double total = 0;
    out += fmt::format("{}\n", title);
    for (const Op& op : ops) {
      const bool comm = op.kind == OpKind::Collective || op.kind == OpKind::P2P;
      const double t = comm
                           ? eval.collective_cost().time(op.collective, op.bytes, w.group(op.group))
                           : eval.compute_cost().time(op);
      total += t;
      std::string shape = comm ? fmt::format("{} over {}", collective_name(op.collective),
                                             comm_group_name(op.group))
                          : op.kind == OpKind::MemoryBound
                              ? std::string("memory-bound")
                              : fmt::format("{}x{}x{} x{}", op.m, op.n, op.k, op.batch);
      out += fmt::format("  {:<28} {:<26} {:>10.2f} GFLOP {:>10.2f} MB {:>10.1f} us\n", op.name,
                         shape, op.flops / 1e9, op.bytes / 1e6, t * 1e6);
    }
    out += fmt::format("  {:<28} {:<26} {:>49.1f} us\n", "total", "", total * 1e6);
  };
  section("layer forward", w.layer.forward);
  section("layer backward", w.layer.backward);
  section("layer recompute", w.layer.recompute);
  section("embedding forward", w.embedding.forward);
  section("embedding backward", w.embedding.backward);
  section("lm head forward", w.lm_head.forward);
  section("lm head backward", w.lm_head.backward);
  return out;
}

std::string describe_thermal_line(const EvalResult& r) {
  const std::string first = std::isfinite(r.time_to_throttle_s)
                                ? fmt::format("at {:.1f} s", r.time_to_throttle_s)
                                : std::string("never");
  return fmt::format(
      "thermal     hottest GPU die {:.1f} C, HBM {:.1f} C at the steady state, throttled {:.0f}% "
      "of the time, DVFS {:.0f}%; step {:+.1f}% against the unthrottled step (same stack); "
      "heating from idle: first throttled {}, DVFS lowered the clock {:.0f} times before\n",
      r.gpu_temperature_C, r.hbm_temperature_C, 100 * r.throttle_fraction, 100 * r.dvfs_fraction,
      100 * r.thermal_slowdown, first, r.dvfs_warmup_engagements);
}

}  // namespace rapid
