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

/// Resolution of a replayed profile: 5 ms, or a 200th of the step when that is coarser (a
/// 14 s step in 70 ms pieces: beta x 70 ms = 1% of the air-cooled time constant, whose
/// ripple the merge leaves out; peaks are taken before merging).
double merge_s(double step_s) {
  return std::max(5e-3, step_s / 200.0);
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
  const int64_t dp = w.par.dp, pp = w.par.pp, tpcp = int64_t{w.par.tp} * w.par.cp;
  // Per stage, the replicas' states: the slowest sets the pace (every replica waits for it
  // at each data-parallel collective), so when a stage has at most one kind of straggler
  // one instance simulates it, standing for the stage, and the others replay its trace
  // waiting for it (docs/nonideal.md sec 4: exact when that replica is uniformly slower).
  // Two kinds of straggler in one stage: every replica is simulated.
  struct Stage {
    size_t slow = 0, normal = 0;  ///< indices into states
    int64_t slow_count = 0;       ///< replicas in the slow state
  };
  std::vector<Stage> stage(static_cast<size_t>(pp));
  const GpuState normal_gpu = normal_state();
  auto alike = [](const GpuState& a, const GpuState& b) {
    return same(a.base, b.base) && same_cooling(a.thermal, b.thermal);
  };
  DesRun run;
  run.power = &power_;
  bool derated = false;
  for (int64_t st = 0; st < pp; ++st) {
    Stage& S = stage[static_cast<size_t>(st)];
    S.slow = S.normal = static_cast<size_t>(st * dp);
    int kinds = 0;
    for (int64_t rep = 0; rep < dp; ++rep) {
      const size_t k = static_cast<size_t>(st * dp + rep);
      if (alike(states[k], normal_gpu)) {
        S.normal = k;
        continue;
      }
      if (kinds == 0 || !alike(states[k], states[S.slow])) ++kinds, S.slow = k;
      ++S.slow_count;
    }
    if (S.slow_count == 0) S.slow = S.normal;
    run.all_replicas = run.all_replicas || kinds > 1;
    derated = derated || !same(states[S.slow].base, Derate{});
  }
  // The derate each simulated instance runs at (stage * dp + replica).
  auto set_derates = [&](auto&& of) {
    run.derate.assign(states.size(), Derate{});
    for (size_t k = 0; k < states.size(); ++k) run.derate[k] = of(k);
  };
  if (run.all_replicas)
    set_derates([&](size_t k) { return states[k].base; });
  else
    set_derates([&](size_t k) { return states[stage[k / static_cast<size_t>(dp)].slow].base; });
  if (!derated) run.derate.clear();
  thread_local des::PowerTrace trace;
  run.trace = &trace;
  DesReport local;
  DesReport* rep = report ? report : &local;
  des.simulate(w, r, rep, timeline, &run);
  if (r.status != Status::Ok) return;
  // The network alone made the simulator take every replica (docs/des.md "Symmetry"): give
  // each its own state.
  if (!run.all_replicas && dp > 1 && static_cast<int64_t>(trace.spans.size()) == pp * dp) {
    run.all_replicas = true;
    if (derated) {
      set_derates([&](size_t k) { return states[k].base; });
      des.simulate(w, r, rep, timeline, &run);
      if (r.status != Status::Ok) return;
    }
  }
  const double unthrottled_s = r.step_time_s;
  const DvfsPolicy policy = dvfs();
  const bool replay = spec_.thermal || derated;
  // What is replayed: per simulated instance its own state, plus (one instance standing
  // for its stage) the stage's normal replicas waiting for it.
  struct Replayed {
    size_t inst = 0, state = 0;
    int64_t gpus = 0;
    bool waits = false;  ///< a normal replica of a stage whose instance is a straggler
    StepProfile profile;
    ReplayResult steady;
  };
  std::vector<Replayed> reps;
  ThermalReport tr;
  for (int iteration = 1;; ++iteration) {
    tr.iterations = iteration;
    reps.clear();
    const size_t n = trace.spans.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(trace.stage[i] * dp + trace.replica[i]);
      const Stage& S = stage[static_cast<size_t>(trace.stage[i])];
      Replayed a;
      a.inst = i;
      profile_from_spans(trace.spans[i], des::to_ps(r.step_time_s), idle_W, wait_W,
                         merge_s(r.step_time_s), a.profile);
      if (run.all_replicas) {
        a.state = k;
        a.gpus = tpcp;
        reps.push_back(std::move(a));
        continue;
      }
      a.state = S.slow;
      a.gpus = tpcp * (S.slow_count > 0 ? S.slow_count : dp);
      if (S.slow_count > 0 && S.slow_count < dp) {
        // The stage's normal replicas: the same work at their own speed, then waiting.
        Replayed b;
        b.inst = i;
        b.state = S.normal;
        b.gpus = tpcp * (dp - S.slow_count);
        b.waits = true;
        b.profile = a.profile;
        reps.push_back(std::move(a));
        reps.push_back(std::move(b));
      } else {
        reps.push_back(std::move(a));
      }
    }
    if (replay)
      for (Replayed& x : reps) {
        ReplayOptions o;
        o.base = states[x.state].base;
        o.record = record;
        // Its work at full speed, then waiting for the straggler to the end of the step.
        if (x.waits) x.profile.add_wait(std::max(0.0, r.step_time_s - x.profile.step_s()), wait_W);
        x.steady = replay_periodic(states[x.state].thermal, x.profile.segments, policy, o);
        tr.periods += x.steady.periods;
      }
    // Nothing throttled (every steady state kept its GPU's own speed): the step stands.
    const bool throttled = std::any_of(reps.begin(), reps.end(), [&](const Replayed& x) {
      return !same(x.steady.effective, states[x.state].base) &&
             (x.steady.throttle_fraction > 0 || x.steady.dvfs_fraction > 0);
    });
    if (!spec_.thermal || !throttled || iteration >= 8) break;
    // The next simulation: each instance at the derate of its steady state (the stage's
    // slowest class when one instance stands for the stage).
    std::vector<Derate> next(states.size(), Derate{});
    for (const Replayed& x : reps) {
      if (x.waits) continue;
      const size_t i = x.inst;
      const size_t first = static_cast<size_t>(trace.stage[i] * dp + trace.replica[i]);
      const int64_t fill = run.all_replicas ? 1 : dp;
      for (int64_t j = 0; j < fill; ++j) next[first + static_cast<size_t>(j)] = x.steady.effective;
    }
    const double before = r.step_time_s;
    run.derate = next;
    des.simulate(w, r, rep, timeline, &run);
    if (r.status != Status::Ok) return;
    if (std::abs(r.step_time_s - before) <= 1e-3 * before) break;
  }
  // Power columns: every replayed class of GPUs over the last simulation's step.
  double energy = 0, peak = 0;
  const Replayed* hot = nullptr;
  ClusterPower cluster;
  for (const Replayed& x : reps) {
    const double J = replay ? x.steady.avg_power_W * r.step_time_s : x.profile.energy_J;
    energy += static_cast<double>(x.gpus) * J;
    peak = std::max(peak, replay ? x.steady.peak_power_W : x.profile.peak_W);
    cluster.add(x.profile, replay ? x.steady.effective : Derate{}, static_cast<double>(x.gpus));
    if (replay && (!hot || x.steady.temperature_avg_C > hot->steady.temperature_avg_C)) hot = &x;
  }
  r.energy_per_step_J = energy;
  r.avg_gpu_power_W = energy / (static_cast<double>(w.par.num_gpus()) * r.step_time_s);
  r.peak_gpu_power_W = peak;
  r.tokens_per_J = static_cast<double>(w.tokens_per_step()) / energy;
  r.cluster_power_swing_MW = cluster.swing_W() / 1e6;
  // The bounding GPU: the simulated instance whose own kernels ran longest (the others
  // wait for it), when it is a straggler slower than the normal GPUs.
  size_t bound = 0;
  std::vector<des::SimTime> busy(trace.spans.size(), 0);
  for (size_t i = 0; i < trace.spans.size(); ++i) {
    for (const des::PowerSpan& sp : trace.spans[i]) busy[i] += sp.busy;
    if (busy[i] > busy[bound]) bound = i;
  }
  const des::SimTime full = [&] {
    des::SimTime t = 0;
    for (const des::PowerSpan& sp : trace.spans[bound]) t += des::to_ps(sp.work.time_s);
    return t;
  }();
  const size_t bk = static_cast<size_t>(trace.stage[bound] * dp + trace.replica[bound]);
  const GpuState& bs =
      states[run.all_replicas ? bk : stage[static_cast<size_t>(trace.stage[bound])].slow];
  const bool slower = static_cast<double>(busy[bound]) > 1.001 * static_cast<double>(full) ||
                      (!alike(bs, normal_gpu) && spec_.thermal);
  r.bounding_gpu = bs.gpu >= 0 && slower ? bs.gpu : -1;
  StepProfile bp;
  profile_from_spans(trace.spans[bound], des::to_ps(r.step_time_s), idle_W, wait_W,
                     merge_s(r.step_time_s), bp);
  r.hbm_utilization = bp.hbm_bytes / (hw.hbm_bandwidth_Bps * r.step_time_s);
  if (spec_.thermal && hot) {
    r.gpu_temperature_C = hot->steady.temperature_avg_C;
    r.throttle_fraction = hot->steady.throttle_fraction;
    r.thermal_slowdown = r.step_time_s / unthrottled_s - 1.0;
  }
  if (thermal) {
    tr.unthrottled_step_s = unthrottled_s;
    for (Replayed& x : reps) {
      tr.instances.push_back(std::move(x.steady));
      tr.first_gpu.push_back(states[x.state].gpu >= 0 ? states[x.state].gpu
                                                      : trace.first_gpu[x.inst]);
    }
    *thermal = std::move(tr);
  }
}

}  // namespace rapid
