#include "rapid/eval/nonideal_evaluator.hpp"
#include "rapid/common/eval_context.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rapid/eval/cluster_power.hpp"
#include "rapid/eval/step_profile.hpp"
#include "rapid/nonideal/step_power.hpp"

namespace rapid {

using namespace nonideal_detail;

NonIdealEvaluator::NonIdealEvaluator(const ModelSpec& model, const NetworkSpec& network,
                                     const NonIdealSpec& spec,
                                     const AnalyticalEvaluator& analytical)
    : model_(model),
      network_(network),
      spec_(spec),
      analytical_(analytical),
      power_(analytical.hardware(), analytical.compute_cost()) {}

void NonIdealEvaluator::instance_states(const ParallelConfig& par,
                                        std::vector<GpuState>& out) const {
  const HardwareSpec& hw = analytical_.hardware();
  const GpuState normal = normal_gpu_state(hw, spec_);
  out.assign(static_cast<size_t>(par.pp) * static_cast<size_t>(par.dp), normal);
  const int64_t tpcp = int64_t{par.tp} * par.cp, gpus = par.num_gpus();
  const int64_t per_node = network_.gpus_per_node;
  for (const StragglerSpec& s : spec_.stragglers) {
    // The GPUs it covers (Megatron rank order tp, cp, dp, pp: nodes hold consecutive ranks).
    const auto [first, count] = s.gpus(per_node, network_.nodes_per_leaf);
    const GpuState st = straggler_gpu_state(hw, spec_, s, normal);
    for (int64_t g = first; g < std::min(gpus, first + count); ++g)
      merge_gpu_state(
          out[static_cast<size_t>((g / (tpcp * par.dp)) * par.dp + (g / tpcp) % par.dp)], st, g,
          hw.tdp_W);
  }
}

namespace {

// Spreads `amount` over the op classes in proportion to `weight` (by class time when the
// weights are all zero).
void spread(double amount, const OpClassTimes<>& weight, const ClassWork& work,
            OpClassTimes<>& out) {
  const double total = class_sum(weight);
  const double time = total_work(work).time_s;
  for (size_t k = 0; k < kNumOpClasses; ++k)
    out[k] += amount * (total > 0 ? weight[k] / total : time > 0 ? work[k].time_s / time : 0.0);
}

// The bounding GPU's extra compute time `extra_s` (the step's growth) over the op classes
// of its stage's work `work`, by what slowed them (docs/model.md section 8): the TDP cap's
// `cap_s` lowers the clock, each class its share of the compute-bound time; the rest
// comes from the derate `d` (straggler factors x the thermal steady state's), which
// stretches compute-bound time by 1 / clock - 1 and memory-bound time by 1 / hbm - 1.
void spread_slowdown(const ClassWork& work, double cap_s, const Derate& d, double extra_s,
                     EvalResult& r) {
  OpClassTimes<> bound{}, derated{}, extra{};
  for (size_t k = 0; k < kNumOpClasses; ++k) bound[k] = work[k].compute_bound_s;
  spread(cap_s, bound, work, extra);
  for (size_t k = 0; k < kNumOpClasses; ++k)
    derated[k] = (bound[k] + extra[k]) * (1.0 / d.clock - 1.0) +
                 work[k].memory_bound_s * (1.0 / d.hbm - 1.0);
  spread(extra_s - cap_s, derated, work, extra);
  for (size_t k = 0; k < kNumOpClasses; ++k) r.*kOpClassColumns[k] += extra[k];
  r.compute_time_s += extra_s;
}

}  // namespace

void NonIdealEvaluator::apply_analytical(const Workload& w, EvalResult& r) const {
  if (r.status != Status::Ok) return;
  const HardwareSpec& hw = analytical_.hardware();
  const double idle_W = power_.idle_W(), wait_W = waiting_power_W(power_, w, network_);
  const std::vector<ClassWork> by_class = stage_work_by_class(
      model_, w, power_, analytical_.compute_cost(), analytical_.step_efficiency());
  std::vector<OpEnergy> work;
  for (const ClassWork& c : by_class) work.push_back(total_work(c));
  size_t b = 0;
  for (size_t s = 1; s < work.size(); ++s)
    if (work[s].time_s > work[b].time_s) b = s;
  // The bottleneck's work under the TDP cap (on its average: docs/nonideal.md sec 1).
  OpEnergy bw = work[b];
  const double cap_s = power_.capped_time(bw) - bw.time_s;
  bw.compute_bound_s += cap_s;
  bw.time_s += cap_s;
  Op opt;
  opt.bytes = r.optimizer_time_s * hw.hbm_bandwidth_Bps * hw.memory_efficiency;
  StepProfile prof;
  profile_from_breakdown(r, bw, power_.op_energy(opt, r.optimizer_time_s), idle_W, wait_W, prof);
  const double tau = r.step_time_s + cap_s;
  const WorkPower step = whole_step(prof.segments, idle_W);

  // Each class of GPU (normal, each straggler) at its steady state; the slowest sets the step.
  struct StatesSite;  // this call's buffer, in the thread's evaluation context
  std::vector<GpuState>& states =
      EvalContext::current().buffer<StatesSite, std::vector<GpuState>>();
  instance_states(w.par, states);
  struct ClassState {
    GpuState g;
    double static_s = 0, time_s = 0;
    ThermalSteadyState ss;
    int64_t gpus = 0;
  };
  std::vector<ClassState> classes;
  const int64_t per_instance = int64_t{w.par.tp} * w.par.cp;
  for (const GpuState& g : states) {
    auto it = std::find_if(classes.begin(), classes.end(),
                           [&](const ClassState& c) { return c.g.runs_like(g); });
    if (it != classes.end()) {
      it->gpus += per_instance;
      continue;
    }
    ClassState c;
    c.g = g;
    c.gpus = per_instance;
    const double s_b = g.base.slowdown(step.compute_share, step.memory_share);
    c.ss = steady_state(g.thermal, under(step, g.base));
    c.static_s = tau * s_b;
    c.time_s = c.static_s * c.ss.slowdown;
    classes.push_back(c);
  }
  size_t slowest = 0, normal = 0;
  double static_max = 0;
  for (size_t c = 0; c < classes.size(); ++c) {
    if (classes[c].time_s > classes[slowest].time_s) slowest = c;
    if (classes[c].g.gpu < 0) normal = c;
    static_max = std::max(static_max, classes[c].static_s);
  }
  const double step_s = classes[slowest].time_s;
  // The faster classes wait for the slowest: their steady state over the step with that
  // wait added (at the waiting power; their own speed taken as before the wait).
  for (ClassState& c : classes) {
    if (c.time_s >= step_s) continue;
    StepProfile longer = prof;
    longer.add_wait(step_s - c.time_s, wait_W);
    c.ss = steady_state(c.g.thermal, under(whole_step(longer.segments, idle_W), c.g.base));
  }
  size_t hottest = 0;
  for (size_t c = 0; c < classes.size(); ++c)
    if (classes[c].ss.die_C > classes[hottest].ss.die_C) hottest = c;
  // The bounding GPU's compute ran that much longer.
  const ClassState& bound = classes[slowest];
  spread_slowdown(
      by_class[b], cap_s,
      Derate{bound.g.base.clock * bound.ss.derate.clock, bound.g.base.hbm * bound.ss.derate.hbm},
      step_s - r.step_time_s, r);
  analytical_.fill_rates(w, step_s, r);
  r.step_time_analytical_s = step_s;
  derive_totals(r);
  r.bounding_gpu = classes[slowest].g.gpu >= 0 && step_s > 1.001 * classes[normal].time_s
                       ? classes[slowest].g.gpu
                       : -1;
  // Energy: every GPU's work at its steady state, then waiting for the slowest.
  double energy = 0;
  const double gpus_per_stage =
      static_cast<double>(w.par.num_gpus()) / static_cast<double>(w.par.pp);
  for (const ClassState& c : classes) {
    // Its steady state's average power over the whole step (its wait included).
    energy += static_cast<double>(c.gpus) * c.ss.power_W * step_s;
  }
  // Stages other than the bottleneck do less work and wait longer (full-speed energies).
  double stage_correction = 0;
  for (size_t s = 0; s < work.size(); ++s)
    stage_correction += gpus_per_stage * ((work[s].compute_J + work[s].memory_J) -
                                          (work[b].compute_J + work[b].memory_J) -
                                          wait_W * (work[s].time_s - work[b].time_s));
  energy += stage_correction;
  double low_W = std::numeric_limits<double>::infinity();
  for (const PowerSegment& s : prof.segments) low_W = std::min(low_W, s.work.full_W());
  const auto gpus = static_cast<double>(w.par.num_gpus());
  set_power_columns(energy, step_s, gpus, static_cast<double>(w.tokens_per_step()),
                    std::min(prof.peak_W, hw.tdp_W), gpus * (prof.peak_W - low_W), r);
  r.hbm_utilization = prof.hbm_bytes / (hw.hbm_bandwidth_Bps * step_s);
  if (spec_.thermal) {
    // DVFS has no effect at a steady state (dT/dt is 0 there); the heating from idle
    // replays the step's profile at the hottest class's speed (its own derate).
    const ClassState& h = classes[hottest];
    ReplayOptions o;
    o.base = h.g.base;
    const ColdStart cold = heating_from_idle(h.g.thermal, prof.segments, dvfs_policy(spec_), idle_W,
                                             o, h.ss.throttle_fraction > 0);
    set_thermal_columns(h.g.thermal, h.ss.die_C, h.ss.hbm_C, h.ss.throttle_fraction, 0.0, cold, r);
    r.thermal_slowdown = step_s / static_max - 1.0;
  }
}

}  // namespace rapid
