#include "rapid/eval/point_evaluator.hpp"
#include "rapid/common/eval_context.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <new>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/analytical/fault_network.hpp"
#include "rapid/common/error.hpp"
#include "rapid/core/prediction_interval.hpp"
#include "rapid/eval/fidelity_gap.hpp"
#include "rapid/eval/fit_hint.hpp"
#include "rapid/inference/serving_evaluator.hpp"
#include "rapid/memory/memory_model.hpp"
#include "rapid/nonideal/goodput.hpp"

namespace rapid {

/// One hardware variant under one scenario: the training settings the scenario's
/// mitigations change, the network its link faults degrade (closed form), and the
/// evaluators over them.
struct PointEvaluator::System {
  const NonIdealSpec* scenario = nullptr;
  TrainingSpec training;
  NetworkSpec network;    ///< the analytical evaluator's (faults folded in)
  bool no_route = false;  ///< a failed link cuts the job apart (closed form)
  std::unique_ptr<AnalyticalEvaluator> analytical;
  std::unique_ptr<DesEvaluator> des;
  std::unique_ptr<NonIdealEvaluator> nonideal;
};

PointEvaluator::~PointEvaluator() = default;

namespace {

uint64_t next_point_evaluator_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

PointEvaluator::PointEvaluator(const SweepSpec& spec, Fidelity fidelity, DesOptions des)
    : spec_(spec), fidelity_(fidelity), id_(next_point_evaluator_id()) {
  if (const char* env = std::getenv("RAPID_SWEEP_TEST_POINT_ERROR")) fail_point_ = std::atoll(env);
  for (const IntervalBand& b : spec.intervals)
    interval_factors_.push_back({interval_factors(b, false), interval_factors(b, true)});
  const bool faults = std::any_of(spec.scenarios.begin(), spec.scenarios.end(),
                                  [](const NonIdealSpec& s) { return !s.link_faults.empty(); }) ||
                      !spec.network.faults.empty();
  // A hardware variant may change the network's rates (docs/variants.md): each variant's
  // evaluators run on its own network.
  per_scenario_ = faults ? spec.search.num_gpus.size() : 1;
  // Serving points have their own evaluators (inference/serving_evaluator.hpp).
  const size_t systems = spec.mode == JobMode::Inference ? 0 : spec.hardware.size();
  for (size_t h = 0; h < systems; ++h)
    for (size_t s = 0; s < std::max<size_t>(1, spec.scenarios.size()); ++s)
      for (size_t g = 0; g < per_scenario_; ++g) {
        auto sys = std::make_unique<System>();
        sys->scenario = spec.scenarios.empty() ? nullptr : &spec.scenarios[s];
        sys->training = spec.training;
        if (sys->scenario && sys->scenario->mitigation != Mitigation::None &&
            sys->scenario->mitigation != Mitigation::Dvfs) {
          // Mitigation (a), compute/communication interleaving: every collective the stack
          // can issue asynchronously is, with independent compute in its shadow
          // (docs/nonideal.md sec 3).
          sys->training.tp_comm_overlap = true;
          sys->training.overlap_grad_reduce = true;
          sys->training.overlap_param_gather = true;
        }
        // The overlaps credited on this GPU: those its end-to-end factors were fitted with.
        sys->training = stack_training(spec.hardware[h], sys->training);
        const NetworkSpec& net = spec.network_of(h);
        sys->network = net;
        std::vector<LinkFault> all = net.faults;
        if (sys->scenario)
          all.insert(all.end(), sys->scenario->link_faults.begin(),
                     sys->scenario->link_faults.end());
        if (!all.empty()) {
          const FaultedNetwork f = apply_link_faults(net, all, spec.search.num_gpus[g],
                                                     spec.hardware[h].nvlink_bandwidth_Bps);
          sys->network = f.network;
          sys->no_route = f.no_route;
        }
        sys->analytical = std::make_unique<AnalyticalEvaluator>(spec.model, sys->training,
                                                                spec.hardware[h], sys->network);
        if (fidelity != Fidelity::Analytical) {
          DesOptions o = des;
          if (sys->scenario) o.link_faults = sys->scenario->link_faults;
          sys->des =
              std::make_unique<DesEvaluator>(spec.model, sys->training, spec.hardware[h], net, o);
        }
        if (sys->scenario && sys->scenario->needs_power_model())
          sys->nonideal = std::make_unique<NonIdealEvaluator>(spec.model, net, *sys->scenario,
                                                              *sys->analytical);
        systems_.push_back(std::move(sys));
      }
}

const PointEvaluator::System& PointEvaluator::system(int32_t hardware, int32_t scenario,
                                                     size_t gpu_slot) const {
  const size_t scenarios = std::max<size_t>(1, spec_.scenarios.size());
  return *systems_[(static_cast<size_t>(hardware) * scenarios + static_cast<size_t>(scenario)) *
                       per_scenario_ +
                   gpu_slot];
}

const PointEvaluator::System& PointEvaluator::system(const Point& p) const {
  size_t g = 0;  // the point's GPU count among the job's (systems differ only with faults)
  if (per_scenario_ > 1) {
    const auto& counts = spec_.search.num_gpus;
    g = static_cast<size_t>(std::find(counts.begin(), counts.end(), p.par.num_gpus()) -
                            counts.begin());
    g = std::min(g, per_scenario_ - 1);  // `rapid predict --gpus` may name another count
  }
  return system(p.hardware, p.scenario, g);
}

const AnalyticalEvaluator& PointEvaluator::evaluator(int32_t hardware, int32_t scenario) const {
  return *system(hardware, scenario, 0).analytical;
}

const DesEvaluator& PointEvaluator::des_evaluator(int32_t hardware, int32_t scenario) const {
  return *system(hardware, scenario, 0).des;
}

void PointEvaluator::simulate(const Point& p, const Workload& w, EvalResult& r,
                              const DesOutputs& out) const {
  const System& sys = system(p);
  if (sys.nonideal)
    sys.nonideal->evaluate_des(*sys.des, w, r, out.report, out.timeline, out.thermal, out.record);
  else
    sys.des->simulate(w, r, out.report, out.timeline);
}

void PointEvaluator::evaluate_guarded(const Point& p, Workload& w, EvalResult& r,
                                      Fidelity f) const noexcept {
  ErrorCode code = ErrorCode::None;
  try {
    if (p.index == fail_point_)
      throw InternalError("injected point error (RAPID_SWEEP_TEST_POINT_ERROR)");
    evaluate(p, w, r, f);
    return;
  } catch (const std::bad_alloc&) {
    code = ErrorCode::HostMemory;
  } catch (const LimitError&) {
    code = ErrorCode::Limit;
  } catch (const InternalError&) {
    code = ErrorCode::Internal;
  } catch (...) {
    code = ErrorCode::Other;
  }
  r = EvalResult{};
  r.status = Status::Error;
  r.error_code = static_cast<uint8_t>(code);
  r.fidelity = f == Fidelity::Des ? 1 : 0;
  if (spec_.mode == JobMode::Inference) set_serving_load(spec_, p, r);
  add_interval(p, r, f);
}

void PointEvaluator::add_interval(const Point& p, EvalResult& r, Fidelity f) const {
  const auto h = static_cast<size_t>(p.hardware);
  if (h < interval_factors_.size())
    apply_interval(interval_factors_[h][f == Fidelity::Des], spec_.mode == JobMode::Inference, r);
}

void PointEvaluator::evaluate(const Point& p, Workload& w, EvalResult& r, Fidelity f,
                              const DesOutputs& out) const {
  evaluate_point(p, w, r, f, out);
  add_interval(p, r, f);
}

void PointEvaluator::evaluate_point(const Point& p, Workload& w, EvalResult& r, Fidelity f,
                                    const DesOutputs& des_out) const {
  if (spec_.mode == JobMode::Inference) {
    w.par = p.par;
    evaluate_serving(spec_, p, r, f == Fidelity::Des);
    return;
  }
  const HardwareSpec& hw = spec_.hardware[static_cast<size_t>(p.hardware)];
  const System& sys = system(p);
  // A layout's hardware variants are consecutive points (enumerator.hpp), and its
  // workload (layout and op templates) and memory depend on the scenario's training
  // settings, not on the variant: built once for them, kept with the scratch they are in.
  struct LayoutMemo {
    uint64_t owner = 0;  // the PointEvaluator
    const Workload* scratch = nullptr;
    int32_t scenario = -1;
    ParallelConfig par;
    bool ops = false;  // the scratch's op templates are the layout's
    MemoryBreakdown mem;
    // Fit hints of an out-of-memory layout by HBM capacity (its variants share a few).
    std::array<std::pair<double, FitHintResult>, 4> hints{};
    size_t hinted = 0;  // hints found (the last 4 kept)
  };
  LayoutMemo& memo = EvalContext::current().get<LayoutMemo>();
  // The scratch still holds the memo's layout (for this evaluator and scenario).
  const bool held = memo.owner == id_ && memo.scratch == &w && memo.scenario == p.scenario &&
                    w.par == memo.par && w.stages.size() == static_cast<size_t>(p.par.pp);
  if (!(held && memo.par == p.par)) {
    // A neighbour of the scratch's layout (another ZeRO stage or recompute option) keeps
    // its frame: only the knobs' part is set again.
    if (held && same_layout_frame(memo.par, p.par))
      set_layout_knobs(spec_.model, p.par, w);
    else
      build_workload_layout(spec_.model, sys.training, spec_.network, p.par, w);
    memo = {id_, &w, p.scenario, p.par, false, estimate_memory(spec_.model, sys.training, w),
            {},  0};
  }
  r = EvalResult{};
  r.num_microbatches = w.num_microbatches;

  const MemoryBreakdown& mem = memo.mem;
  r.peak_memory_bytes = mem.peak_bytes;
  r.weights_bytes = mem.weights_bytes;
  r.grads_bytes = mem.grads_bytes;
  r.optimizer_bytes = mem.optimizer_bytes;
  r.activations_bytes = mem.activations_bytes;
  r.reserve_bytes = mem.reserve_bytes;
  r.memory_capacity_bytes = hw.hbm_capacity_bytes;
  // MXFP8 and NVFP4 need Blackwell's block-scaled MMAs (sm_100): on an older GPU the stack
  // refuses them (TE's recipe support check), a legal point of a sweep that cannot run
  // there: infeasible, as a layout the fabric cannot host (docs/model.md sec 12).
  if (sys.training.fp8() && needs_block_scaled_mma(sys.training.framework.fp8.recipe) &&
      hw.compute_capability < 10.0) {
    r.status = Status::Infeasible;
    return;
  }

  // Fewer than 8 samples per step on each DP replica (so on each of its GPUs) leaves GPUs
  // under-used (PRODUCT.md section 7: at least 8 samples per GPU).
  if (spec_.training.global_batch_size / p.par.dp < 8) r.flags |= kFlagSmallMicrobatch;
  // TP messages below 1 MiB are start-up dominated: the collective's latency terms (the
  // network file's collective_latency and per-step latencies) outweigh its bandwidth term;
  // `rapid predict` prints the modelled cost of the layer's TP collective (report.hpp).
  const double tp_message = static_cast<double>(p.par.mbs) * spec_.training.seq_length / p.par.cp *
                            spec_.model.hidden_size * 2.0;
  if (p.par.tp > 1 && tp_message < (1 << 20)) r.flags |= kFlagLatencyBoundComm;

  // A fit within 5% of capacity has no room for fragmentation spikes (PRODUCT.md section 7).
  if (mem.peak_bytes > 0.95 * hw.hbm_capacity_bytes && mem.peak_bytes <= hw.hbm_capacity_bytes)
    r.flags |= kFlagNearCapacity;
  if (mem.peak_bytes > hw.hbm_capacity_bytes) {
    r.status = Status::OutOfMemory;
    r.oom_excess_bytes = mem.peak_bytes - hw.hbm_capacity_bytes;
    const size_t kept = std::min(memo.hinted, memo.hints.size());
    size_t k = 0;
    while (k < kept && memo.hints[k].first != hw.hbm_capacity_bytes) ++k;
    if (k == kept) {
      // The layouts the searches tried lately (the same knob changes from a layout's ZeRO
      // stages and recompute options), for this evaluator.
      struct Peaks {  // the thread's, in its evaluation context
        PeakCache cache;
        uint64_t owner = 0;
      };
      auto& [peaks, peaks_owner] = EvalContext::current().get<Peaks>();
      if (peaks_owner != id_) peaks = PeakCache{}, peaks_owner = id_;
      k = memo.hinted++ % memo.hints.size();
      memo.hints[k] = {hw.hbm_capacity_bytes,
                       find_fit_hint(spec_, w, hw.hbm_capacity_bytes, &peaks)};
    }
    const FitHintResult hint = memo.hints[k].second;
    r.fit_hint = static_cast<uint8_t>(hint.hint);
    r.fit_hint_value = hint.value;
    return;
  }
  // The closed form of the point into `out` (its memory fields as r's).
  auto closed_form = [&](EvalResult& out) {
    if (sys.no_route) {  // the closed form's verdict on hard link failures (docs/faults.md)
      out.status = Status::NoRoute;
      return;
    }
    // Layouts that differ only in their ZeRO stage share their op templates' times: the
    // ops are built (and timed) once for them.
    const AnalyticalEvaluator& ev = *sys.analytical;
    const AnalyticalEvaluator::TemplateTimes* t = ev.cached_template_times(w.par);
    // The non-ideal model reads the op templates themselves: built even when their times
    // are cached (never timed twice).
    if ((!t || sys.nonideal) && !memo.ops) {
      build_workload_ops(spec_.model, sys.training, w);
      memo.ops = true;
    }
    if (!t) t = &ev.template_times(w);
    ev.evaluate(w, *t, out);
    if (sys.nonideal) sys.nonideal->apply_analytical(w, out);
  };
  if (f == Fidelity::Des) {
    if (!memo.ops) build_workload_ops(spec_.model, sys.training, w);
    memo.ops = true;
    EvalResult a = r;
    simulate(p, w, r, des_out);
    // The closed form beside the simulation: how far apart they are, and where.
    closed_form(a);
    record_fidelity_gap(a, r);
  } else {
    closed_form(r);
    if (r.status == Status::Ok && closed_form_risk(p.par, r)) r.flags |= kFlagClosedFormRisk;
  }
  if (r.status != Status::Ok) return;
  if (sys.scenario && sys.scenario->failures.enabled)
    fill_goodput(sys.scenario->failures, spec_.model, sys.training, w, spec_.network.gpus_per_node,
                 r);
  if (r.bubble_time_s > 0.2 * r.step_time_s) r.flags |= kFlagPipelineBubble;
}

}  // namespace rapid
