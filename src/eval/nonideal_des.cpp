// The DES half of the non-ideal evaluator (nonideal_evaluator.hpp): simulations with a
// power trace, replays to the periodic steady state, derates fed back.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "rapid/common/eval_context.hpp"
#include "rapid/eval/cluster_power.hpp"
#include "rapid/eval/nonideal_evaluator.hpp"
#include "rapid/eval/step_profile.hpp"
#include "rapid/nonideal/step_power.hpp"
#include "rapid/nonideal/thermal_feedback.hpp"

namespace rapid {

using namespace nonideal_detail;

void NonIdealEvaluator::evaluate_des(const DesEvaluator& des, const Workload& w, EvalResult& r,
                                     DesReport* report, des::Timeline* timeline,
                                     ThermalReport* thermal, bool record) const {
  const HardwareSpec& hw = analytical_.hardware();
  const double idle_W = power_.idle_W(), wait_W = waiting_power_W(power_, w, network_);
  struct StatesSite;  // this call's buffer, in the thread's evaluation context
  std::vector<GpuState>& states =
      EvalContext::current().buffer<StatesSite, std::vector<GpuState>>();
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
  const GpuState normal_gpu = normal_gpu_state(hw, spec_);
  DesRun run;
  run.power = &power_;
  bool derated = false;
  for (int64_t st = 0; st < pp; ++st) {
    Stage& S = stage[static_cast<size_t>(st)];
    S.slow = S.normal = static_cast<size_t>(st * dp);
    int kinds = 0;
    for (int64_t rep = 0; rep < dp; ++rep) {
      const size_t k = static_cast<size_t>(st * dp + rep);
      if (states[k].runs_like(normal_gpu)) {
        S.normal = k;
        continue;
      }
      if (kinds == 0 || !states[k].runs_like(states[S.slow])) ++kinds, S.slow = k;
      ++S.slow_count;
    }
    if (S.slow_count == 0) S.slow = S.normal;
    run.all_replicas = run.all_replicas || kinds > 1;
    derated = derated || !(states[S.slow].base == Derate{});
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
  struct TraceSite;  // this call's buffer, in the thread's evaluation context
  des::PowerTrace& trace = EvalContext::current().buffer<TraceSite, des::PowerTrace>();
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
  const DvfsPolicy policy = dvfs_policy(spec_);
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
        // Its work at full speed, then waiting for the straggler to the end of the step.
        if (x.waits) x.profile.add_wait(std::max(0.0, r.step_time_s - x.profile.step_s()), wait_W);
        x.steady = replay_periodic(states[x.state].thermal, x.profile.segments, policy, o);
        tr.periods += x.steady.periods;
      }
    // Nothing throttled (every steady state kept its GPU's own speed): the step stands.
    const bool any = std::any_of(reps.begin(), reps.end(), [&](const Replayed& x) {
      return throttled(x.steady, states[x.state].base);
    });
    if (!spec_.thermal || !any || iteration >= kMaxThermalSimulations) break;
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
    if (thermal_settled(before, r.step_time_s)) break;
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
    if (replay && (!hot || x.steady.die_avg_C > hot->steady.die_avg_C)) hot = &x;
  }
  set_power_columns(energy, r.step_time_s, static_cast<double>(w.par.num_gpus()),
                    static_cast<double>(w.tokens_per_step()), peak, cluster.swing_W(), r);
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
                      (!bs.runs_like(normal_gpu) && spec_.thermal);
  r.bounding_gpu = bs.gpu >= 0 && slower ? bs.gpu : -1;
  // Its own class's profile (the one replayed for the instance itself, not its waiting
  // partners): the HBM bytes its kernels moved.
  const auto own = std::find_if(reps.begin(), reps.end(),
                                [&](const Replayed& x) { return x.inst == bound && !x.waits; });
  r.hbm_utilization = own->profile.hbm_bytes / (hw.hbm_bandwidth_Bps * r.step_time_s);
  // The heating from idle (a job's start): for the hottest class, and for every class when
  // their steady states are reported (the timeline's traces when recording).
  auto cold_start = [&](const Replayed& x) {
    ReplayOptions o;
    o.base = states[x.state].base;
    o.record = record;
    return heating_from_idle(states[x.state].thermal, x.profile.segments, policy, idle_W, o,
                             x.steady.throttle_fraction > 0);
  };
  std::vector<ColdStart> colds(reps.size());
  if (spec_.thermal && hot) {
    for (size_t i = 0; i < reps.size(); ++i)
      if (thermal || &reps[i] == hot) colds[i] = cold_start(reps[i]);
    set_thermal_columns(states[hot->state].thermal, hot->steady.die_avg_C, hot->steady.hbm_avg_C,
                        hot->steady.throttle_fraction, hot->steady.dvfs_fraction,
                        colds[static_cast<size_t>(hot - reps.data())], r);
    r.thermal_slowdown = r.step_time_s / unthrottled_s - 1.0;
  }
  if (timeline && !run.all_replicas)  // a straggler's instance stands for its stage
    for (size_t i = 0; i < trace.spans.size(); ++i) {
      const Stage& S = stage[static_cast<size_t>(trace.stage[i])];
      if (S.slow_count > 0 && states[S.slow].gpu >= 0)
        timeline->rename_process(
            static_cast<int32_t>(i),
            fmt::format("GPU {} (stage {}: the straggler's replica, standing for the stage's {} "
                        "replicas)",
                        states[S.slow].gpu, trace.stage[i], dp));
    }
  if (thermal) {
    tr.unthrottled_step_s = unthrottled_s;
    tr.step_s = r.step_time_s;
    if (spec_.thermal) tr.cold = std::move(colds);
    for (Replayed& x : reps) {
      tr.instances.push_back(std::move(x.steady));
      tr.inst.push_back(static_cast<int32_t>(x.inst));
      tr.waits.push_back(x.waits);
      tr.first_gpu.push_back(states[x.state].gpu >= 0 ? states[x.state].gpu
                                                      : trace.first_gpu[x.inst]);
    }
    *thermal = std::move(tr);
  }
}

}  // namespace rapid
