#include "rapid/eval/point_evaluator.hpp"

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/eval/fit_hint.hpp"
#include "rapid/memory/memory_model.hpp"

namespace rapid {

PointEvaluator::PointEvaluator(const SweepSpec& spec, Fidelity fidelity, DesOptions des)
    : spec_(spec), fidelity_(fidelity) {
  for (const HardwareSpec& hw : spec.hardware) {
    evaluators_.push_back(
        std::make_unique<AnalyticalEvaluator>(spec.model, spec.training, hw, spec.network));
    if (fidelity != Fidelity::Analytical)
      des_.push_back(
          std::make_unique<DesEvaluator>(spec.model, spec.training, hw, spec.network, des));
  }
}

void PointEvaluator::evaluate(const Point& p, Workload& w, EvalResult& r, Fidelity f) const {
  const HardwareSpec& hw = spec_.hardware[static_cast<size_t>(p.hardware)];
  build_workload_layout(spec_.model, spec_.training, spec_.network, p.par, w);
  r = EvalResult{};
  r.num_microbatches = w.num_microbatches;

  const MemoryBreakdown mem = estimate_memory(spec_.model, spec_.training, w);
  r.peak_memory_bytes = mem.peak_bytes;
  r.weights_bytes = mem.weights_bytes;
  r.grads_bytes = mem.grads_bytes;
  r.optimizer_bytes = mem.optimizer_bytes;
  r.activations_bytes = mem.activations_bytes;
  r.reserve_bytes = mem.reserve_bytes;
  r.memory_capacity_bytes = hw.hbm_capacity_bytes;

  // Fewer than 8 samples per step on each DP replica (so on each of its GPUs) leaves GPUs
  // under-used (PRODUCT.md section 7: at least 8 samples per GPU).
  if (spec_.training.global_batch_size / p.par.dp < 8) r.flags |= kFlagSmallMicrobatch;
  // TP messages below 1 MiB are start-up dominated (5-10 us per collective).
  const double tp_message = static_cast<double>(p.par.mbs) * spec_.training.seq_length / p.par.cp *
                            spec_.model.hidden_size * 2.0;
  if (p.par.tp > 1 && tp_message < (1 << 20)) r.flags |= kFlagLatencyBoundComm;

  // A fit within 5% of capacity has no room for fragmentation spikes (PRODUCT.md section 7).
  if (mem.peak_bytes > 0.95 * hw.hbm_capacity_bytes && mem.peak_bytes <= hw.hbm_capacity_bytes)
    r.flags |= kFlagNearCapacity;
  if (mem.peak_bytes > hw.hbm_capacity_bytes) {
    r.status = Status::OutOfMemory;
    r.oom_excess_bytes = mem.peak_bytes - hw.hbm_capacity_bytes;
    const FitHintResult hint = find_fit_hint(spec_, w, hw.hbm_capacity_bytes);
    r.fit_hint = static_cast<uint8_t>(hint.hint);
    r.fit_hint_value = hint.value;
    return;
  }
  if (f == Fidelity::Des) {
    build_workload_ops(spec_.model, spec_.training, w);
    des_[static_cast<size_t>(p.hardware)]->evaluate(w, r);
  } else {
    // Layouts that differ only in their ZeRO stage share their op templates' times: the
    // ops are built (and timed) once for them.
    const AnalyticalEvaluator& ev = *evaluators_[static_cast<size_t>(p.hardware)];
    const AnalyticalEvaluator::TemplateTimes* t = ev.cached_template_times(w.par);
    if (!t) {
      build_workload_ops(spec_.model, spec_.training, w);
      t = &ev.template_times(w);
    }
    ev.evaluate(w, *t, r);
  }
  if (r.status != Status::Ok) return;
  if (r.bubble_time_s > 0.2 * r.step_time_s) r.flags |= kFlagPipelineBubble;
  if (r.mfu >= 0.9 * hw.gemm_efficiency) r.flags |= kFlagHighUtilization;
}

}  // namespace rapid
