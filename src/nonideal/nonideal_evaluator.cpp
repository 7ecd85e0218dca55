#include "rapid/nonideal/nonideal_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rapid/nonideal/cluster_power.hpp"
#include "rapid/nonideal/step_profile.hpp"

namespace rapid {

namespace {

/// Temperature of `p` under steady TDP: orders coolings from the best to the worst.
double hot_at_tdp(const ThermalParams& p, double tdp_W) {
  return p.steady_C(tdp_W);
}

/// The whole step of `prof` as one WorkPower (the analytical closed form's input): the
/// work's dynamic power and roofline shares averaged over the step, the waits' power above
/// idle spread over it as energy that no derate stretches.
WorkPower whole_step(const StepProfile& prof, double idle_W) {
  WorkPower w;
  w.idle_W = idle_W;
  const double T = prof.step_s();
  if (T <= 0) return w;
  for (const PowerSegment& s : prof.segments) {
    const double d = s.duration_s / T;
    if (s.stretches) {
      w.compute_W += s.work.compute_W * d;
      w.memory_W += s.work.memory_W * d;
      w.compute_share += s.work.compute_share * d;
      w.memory_share += s.work.memory_share * d;
    } else {
      w.memory_W += (s.work.full_W() - idle_W) * d;
    }
  }
  return w;
}

/// `w` running under derate `b` for good: what the thermal model then sees.
WorkPower under(const WorkPower& w, const Derate& b) {
  const double s = b.slowdown(w.compute_share, w.memory_share);
  WorkPower o = w;
  o.compute_W = w.compute_W * b.clock * b.clock / s;
  o.memory_W = w.memory_W / s;
  o.compute_share = w.compute_share / b.clock / s;
  o.memory_share = w.memory_share / b.hbm / s;
  return o;
}

bool same(const Derate& a, const Derate& b) {
  return a.clock == b.clock && a.hbm == b.hbm;
}

/// Two GPUs heat alike (the hardware's throttle law is common to all).
bool same_cooling(const ThermalParams& a, const ThermalParams& b) {
  return a.alpha_C_per_J == b.alpha_C_per_J && a.beta_per_s == b.beta_per_s &&
         a.ambient_C == b.ambient_C && a.throttle_C == b.throttle_C;
}

}  // namespace

NonIdealEvaluator::NonIdealEvaluator(const ModelSpec& model, const NetworkSpec& network,
                                     const NonIdealSpec& spec,
                                     const AnalyticalEvaluator& analytical)
    : model_(model),
      network_(network),
      spec_(spec),
      analytical_(analytical),
      power_(analytical.hardware(), analytical.compute_cost()) {}

NonIdealEvaluator::GpuState NonIdealEvaluator::normal_state() const {
  GpuState g;
  g.thermal = thermal_params(analytical_.hardware(), spec_.cooling.beta_per_s,
                             spec_.cooling.ambient_C, spec_.cooling.alpha_C_per_J);
  if (!spec_.thermal) g.thermal.throttle_C = std::numeric_limits<double>::infinity();
  return g;
}

DvfsPolicy NonIdealEvaluator::dvfs() const {
  DvfsPolicy d;
  d.enabled = spec_.thermal &&
              (spec_.mitigation == Mitigation::Dvfs || spec_.mitigation == Mitigation::Both);
  return d;
}

void NonIdealEvaluator::instance_states(const ParallelConfig& par,
                                        std::vector<GpuState>& out) const {
  const GpuState normal = normal_state();
  out.assign(static_cast<size_t>(par.pp) * static_cast<size_t>(par.dp), normal);
  const int64_t tpcp = int64_t{par.tp} * par.cp, gpus = par.num_gpus();
  const int64_t per_node = network_.gpus_per_node;
  for (const StragglerSpec& s : spec_.stragglers) {
    // The GPUs it covers (Megatron rank order tp, cp, dp, pp: nodes hold consecutive ranks).
    int64_t first = s.index, count = 1;
    if (s.scope == StragglerSpec::Scope::Node) first = s.index * per_node, count = per_node;
    if (s.scope == StragglerSpec::Scope::Rack)
      count = per_node * network_.nodes_per_leaf, first = s.index * count;
    GpuState st = normal;
    st.base = Derate{s.clock_factor, s.hbm_factor};
    if (s.own_cooling) {
      st.thermal = thermal_params(analytical_.hardware(), s.cooling.beta_per_s, s.cooling.ambient_C,
                                  s.cooling.alpha_C_per_J);
      if (!spec_.thermal) st.thermal.throttle_C = normal.thermal.throttle_C;
    }
    for (int64_t g = first; g < std::min(gpus, first + count); ++g) {
      GpuState& x = out[static_cast<size_t>((g / (tpcp * par.dp)) * par.dp + (g / tpcp) % par.dp)];
      const double tdp = analytical_.hardware().tdp_W;
      const bool worse = st.base.slowdown(0.5, 0.5) > x.base.slowdown(0.5, 0.5) ||
                         hot_at_tdp(st.thermal, tdp) > hot_at_tdp(x.thermal, tdp);
      if (!worse) continue;
      x.base = Derate{std::min(x.base.clock, st.base.clock), std::min(x.base.hbm, st.base.hbm)};
      if (hot_at_tdp(st.thermal, tdp) > hot_at_tdp(x.thermal, tdp)) x.thermal = st.thermal;
      x.gpu = g;
    }
  }
}

void NonIdealEvaluator::apply_analytical(const Workload& w, EvalResult& r) const {
  if (r.status != Status::Ok) return;
  const HardwareSpec& hw = analytical_.hardware();
  const double idle_W = power_.idle_W(), wait_W = waiting_power_W(power_, w, network_);
  const std::vector<OpEnergy> work =
      stage_work(model_, w, power_, analytical_.compute_cost(), analytical_.step_efficiency());
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
  const WorkPower step = whole_step(prof, idle_W);

  // Each class of GPU (normal, each straggler) at its steady state; the slowest sets the step.
  thread_local std::vector<GpuState> states;
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
    auto it = std::find_if(classes.begin(), classes.end(), [&](const ClassState& c) {
      return same(c.g.base, g.base) && same_cooling(c.g.thermal, g.thermal);
    });
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
  size_t slowest = 0, hottest = 0, normal = 0;
  double static_max = 0;
  for (size_t c = 0; c < classes.size(); ++c) {
    if (classes[c].time_s > classes[slowest].time_s) slowest = c;
    if (classes[c].ss.temperature_C > classes[hottest].ss.temperature_C) hottest = c;
    if (classes[c].g.gpu < 0) normal = c;
    static_max = std::max(static_max, classes[c].static_s);
  }
  const double step_s = classes[slowest].time_s;
  const double extra_s = step_s - r.step_time_s;
  r.compute_time_s += extra_s;  // the bounding GPU's compute ran that much longer
  analytical_.fill_rates(w, step_s, r);
  derive_totals(r);
  r.bounding_gpu = classes[slowest].g.gpu >= 0 && step_s > 1.001 * classes[normal].time_s
                       ? classes[slowest].g.gpu
                       : -1;
  // Energy: every GPU's work at its steady state, then waiting for the slowest.
  double energy = 0;
  const double gpus_per_stage =
      static_cast<double>(w.par.num_gpus()) / static_cast<double>(w.par.pp);
  for (const ClassState& c : classes) {
    const double own_J = c.ss.power_W * c.time_s + wait_W * (step_s - c.time_s);
    // Stages other than the bottleneck do less work: their share of the class scaled by
    // their work's energy (full speed) over the bottleneck's.
    energy += static_cast<double>(c.gpus) * own_J;
  }
  double stage_correction = 0;
  for (size_t s = 0; s < work.size(); ++s)
    stage_correction += gpus_per_stage * ((work[s].compute_J + work[s].memory_J) -
                                          (work[b].compute_J + work[b].memory_J) -
                                          wait_W * (work[s].time_s - work[b].time_s));
  energy += stage_correction;
  r.energy_per_step_J = energy;
  r.avg_gpu_power_W = energy / (static_cast<double>(w.par.num_gpus()) * step_s);
  r.peak_gpu_power_W = std::min(prof.peak_W, hw.tdp_W);
  r.tokens_per_J = static_cast<double>(w.tokens_per_step()) / energy;
  double low_W = std::numeric_limits<double>::infinity();
  for (const PowerSegment& s : prof.segments) low_W = std::min(low_W, s.work.full_W());
  r.cluster_power_swing_MW = static_cast<double>(w.par.num_gpus()) * (prof.peak_W - low_W) / 1e6;
  r.hbm_utilization = prof.hbm_bytes / (hw.hbm_bandwidth_Bps * step_s);
  if (spec_.thermal) {
    r.gpu_temperature_C = classes[hottest].ss.temperature_C;
    r.throttle_fraction = classes[hottest].ss.throttle_fraction;
    r.thermal_slowdown = step_s / static_max - 1.0;
  }
}

void NonIdealEvaluator::evaluate_des(const DesEvaluator& des, const Workload& w, EvalResult& r,
                                     DesReport* report, des::Timeline* timeline,
                                     ThermalReport* thermal, bool record) const {
  const HardwareSpec& hw = analytical_.hardware();
  const double idle_W = power_.idle_W(), wait_W = waiting_power_W(power_, w, network_);
  thread_local std::vector<GpuState> states;
  instance_states(w.par, states);
  const int64_t dp = w.par.dp;
  DesRun run;
  run.power = &power_;
  bool derated = false;
  for (const GpuState& g : states) {
    run.derate.push_back(g.base);
    derated = derated || !same(g.base, Derate{});
    run.all_replicas =
        run.all_replicas ||
        !same(g.base, states[static_cast<size_t>((&g - states.data()) / dp * dp)].base) ||
        !same_cooling(g.thermal, states[0].thermal);
  }
  if (!derated) run.derate.clear();
  thread_local des::PowerTrace trace;
  run.trace = &trace;
  DesReport local;
  DesReport* rep = report ? report : &local;
  des.simulate(w, r, rep, timeline, &run);
  if (r.status != Status::Ok) return;
  const double unthrottled_s = r.step_time_s;
  const DvfsPolicy policy = dvfs();
  ThermalReport tr;
  std::vector<ReplayResult> steady;
  std::vector<StepProfile> profiles;
  const bool replay = spec_.thermal || derated;
  int64_t stands_for = dp;
  for (int iteration = 1;; ++iteration) {
    tr.iterations = iteration;
    const size_t n = trace.spans.size();
    // Replicas each simulated instance stands for: the simulator simulates them all when
    // asked to or when the network is not the same for each (docs/des.md).
    stands_for = static_cast<int64_t>(n) == int64_t{w.par.pp} * dp ? 1 : dp;
    profiles.resize(n);
    steady.assign(n, ReplayResult{});
    std::vector<Derate> next(states.size(), Derate{});
    for (size_t i = 0; i < n; ++i) {
      profile_from_spans(trace.spans[i], des::to_ps(r.step_time_s), idle_W, wait_W, 5e-3,
                         profiles[i]);
      const size_t k = static_cast<size_t>(trace.stage[i] * dp + trace.replica[i]);
      if (!replay) continue;
      ReplayOptions o;
      o.base = states[k].base;
      o.record = record;
      steady[i] = replay_periodic(states[k].thermal, profiles[i].segments, policy, o);
      tr.periods += steady[i].periods;
      // One instance stands for its stage's replicas when they are alike.
      for (int64_t rep_i = 0; rep_i < stands_for; ++rep_i)
        next[k + static_cast<size_t>(rep_i)] = steady[i].effective;
    }
    if (!spec_.thermal || iteration >= 8) break;
    const double before = r.step_time_s;
    run.derate = next;
    des.simulate(w, r, rep, timeline, &run);
    if (r.status != Status::Ok) return;
    if (std::abs(r.step_time_s - before) <= 1e-3 * before) break;
  }
  // Power columns from the last simulation's instances (each standing for its GPUs).
  const int64_t per_instance = int64_t{w.par.tp} * w.par.cp * stands_for;
  double energy = 0, peak = 0, hottest = -std::numeric_limits<double>::infinity();
  size_t hot = 0;
  ClusterPower cluster;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const ReplayResult& s = steady[i];
    const double J = replay ? s.avg_power_W * r.step_time_s : profiles[i].energy_J;
    energy += static_cast<double>(per_instance) * J;
    peak = std::max(peak, replay ? s.peak_power_W : profiles[i].peak_W);
    cluster.add(profiles[i], replay ? s.effective : Derate{}, static_cast<double>(per_instance));
    if (replay && s.temperature_avg_C > hottest) hottest = s.temperature_avg_C, hot = i;
  }
  r.energy_per_step_J = energy;
  r.avg_gpu_power_W = energy / (static_cast<double>(w.par.num_gpus()) * r.step_time_s);
  r.peak_gpu_power_W = peak;
  r.tokens_per_J = static_cast<double>(w.tokens_per_step()) / energy;
  r.cluster_power_swing_MW = cluster.swing_W() / 1e6;
  // The bounding instance: the one whose own kernels ran longest in the last simulation
  // (the others wait for it); a straggler when it stands out from the least busy one.
  size_t bound = 0, least = 0;
  std::vector<des::SimTime> busy(profiles.size(), 0);
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (const des::PowerSpan& sp : trace.spans[i]) busy[i] += sp.busy;
    if (busy[i] > busy[bound]) bound = i;
    if (busy[i] < busy[least]) least = i;
  }
  const bool stands_out =
      static_cast<double>(busy[bound]) > 1.001 * static_cast<double>(busy[least]);
  r.hbm_utilization = profiles[bound].hbm_bytes / (hw.hbm_bandwidth_Bps * r.step_time_s);
  const GpuState& bs = states[static_cast<size_t>(trace.stage[bound] * dp + trace.replica[bound])];
  r.bounding_gpu = bs.gpu >= 0 && stands_out ? bs.gpu : -1;
  if (spec_.thermal) {
    r.gpu_temperature_C = steady[hot].temperature_avg_C;
    r.throttle_fraction = steady[hot].throttle_fraction;
    r.thermal_slowdown = r.step_time_s / unthrottled_s - 1.0;
  }
  if (thermal) {
    tr.unthrottled_step_s = unthrottled_s;
    tr.instances = std::move(steady);
    tr.first_gpu = trace.first_gpu;
    *thermal = std::move(tr);
  }
}

}  // namespace rapid
