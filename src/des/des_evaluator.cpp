#include "rapid/des/des_evaluator.hpp"
#include "rapid/common/eval_context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "rapid/analytical/offload.hpp"
#include "rapid/common/error.hpp"
#include "rapid/core/bottleneck.hpp"

namespace rapid {

DesEvaluator::DesEvaluator(const ModelSpec& model, const TrainingSpec& training,
                           const HardwareSpec& hw, const NetworkSpec& net, DesOptions options)
    : model_(model),
      training_(training),
      network_(net),
      analytical_(model, training, hw, net),
      options_(std::move(options)) {
  faults_ = net.faults;
  faults_.insert(faults_.end(), options_.link_faults.begin(), options_.link_faults.end());
  if (faults_.size() > kMaxLinkFaults)
    throw InputError(net.name, "link_faults",
                     fmt::format("{} faults with the network's", faults_.size()),
                     fmt::format("at most {} faults per scenario", kMaxLinkFaults));
}

void DesEvaluator::evaluate(const Workload& w, EvalResult& r) const {
  simulate(w, r, nullptr, nullptr);
}

void DesEvaluator::simulate(const Workload& w, EvalResult& r, DesReport* report,
                            des::Timeline* timeline, const DesRun* run) const {
  // The thread's simulator (warm: its buffers allocated) and result, in its evaluation
  // context.
  struct Simulation {
    des::Simulator sim;
    des::SimResult res;
  };
  auto& [sim, res] = EvalContext::current().get<Simulation>();
  const auto t0 = std::chrono::steady_clock::now();
  des::SimInputs in;
  in.model = &model_;
  in.training = &training_;
  in.network = &network_;
  in.compute = &analytical_.compute_cost();
  in.collective = &analytical_.collective_cost();
  in.step_efficiency = analytical_.step_efficiency();
  in.interference = &analytical_.interference();
  in.link_faults = faults_.empty() ? nullptr : &faults_;
  if (w.par.offload_layers > 0)
    for (const StageInfo& st : w.stages)
      in.offload_copy_s.push_back(
          offload_time(model_, training_, analytical_.hardware(), w.par, st, 0, 0).copy_s);
  des::SimOptions opt;
  opt.replicas = options_.replicas;
  opt.coalesce = options_.coalesce;
  opt.timeline = timeline;
  opt.max_events = options_.max_events;
  opt.steady_state = options_.steady_state;
  opt.fold_alone = options_.fold_alone;
  opt.batch_solves = options_.batch_solves;
  if (run) {
    in.power = run->power;
    in.derate = run->derate;
    opt.power = run->trace;
    if (run->all_replicas) opt.replicas = des::ReplicaMode::All;
  }
  sim.run(w, in, opt, res);
  r.fidelity = 1;
  if (!res.ok) {
    r.status = res.no_route ? Status::NoRoute : Status::Infeasible;
    if (report) {
      *report = DesReport{};
      report->no_route = res.no_route_reason;
    }
    return;
  }
  // Breakdown of the bottleneck instance (core/bottleneck.hpp: the analytical model's
  // definition, docs/model.md "Breakdown"): the bubble is the rest.
  size_t b = 0;
  auto sends = [&](size_t i) { return stage_sends(res.instances[i].stage, w.par.pp, w.par.vpp); };
  for (size_t i = 1; i < res.instances.size(); ++i)
    if (heavier_stage(res.instances[i].compute, sends(i), res.instances[b].compute, sends(b)))
      b = i;
  const des::InstanceTimes& c = res.instances[b];
  analytical_.fill_rates(w, res.step_time_s, r);
  r.compute_time_s = c.compute;
  set_class_columns(r, kOpClassColumns, c.compute_by_class);
  r.interference_time_s = c.interference;
  set_class_columns(r, kCommClassColumns, c.comm_by_class);
  r.pp_comm_time_s = c.pp_comm;
  r.dp_exposed_time_s = c.dp_exposed;
  r.host_bound_time_s = c.host;
  r.optimizer_time_s = c.optimizer;
  r.offload_time_s = c.offload;
  r.dp_comm_time_s = 0;
  for (const des::InstanceTimes& x : res.instances)
    r.dp_comm_time_s = std::max(r.dp_comm_time_s, x.dp_busy);
  derive_totals(r);
  r.simulated_replicas = static_cast<int32_t>(res.replicas_simulated);
  r.hot_spot_links = 0;
  r.max_link_utilization = 0;
  for (const des::LinkStat& l : res.links) {
    r.max_link_utilization = std::max(r.max_link_utilization, l.utilization);
    if (l.utilization > kHotSpotUtilization) r.hot_spot_links += l.links;
  }
  if (!report) return;
  DesReport& rep = *report;
  rep = DesReport{};
  rep.ok = true;
  rep.replicas = w.par.dp;
  rep.replicas_simulated = res.replicas_simulated;
  rep.symmetric = res.symmetric;
  rep.asymmetry = res.asymmetry;
  rep.most_loaded_link = res.most_loaded_link;
  rep.events = res.events;
  rep.flows = res.flows;
  rep.solves = res.solves;
  rep.folded_ops = res.folded_ops;
  rep.extrapolated_periods = res.extrapolated_periods;
  rep.period_microbatches = res.period_microbatches;
  rep.critical_stage =
      static_cast<int32_t>(res.replicas_simulated == 1 ? res.critical : res.critical / w.par.dp);
  rep.critical_replica =
      static_cast<int32_t>(res.replicas_simulated == 1 ? 0 : res.critical % w.par.dp);
  rep.hot_spot_links = r.hot_spot_links;
  rep.max_utilization = r.max_link_utilization;
  for (const des::LinkStat& l : res.links) {
    DesLink d{sim.topology().link_name(l.first_link),
              l.links - 1,
              l.utilization,
              l.active_fraction,
              l.peak_flows,
              l.capacity_Bps};
    if (l.utilization > kHotSpotUtilization) rep.hot_spots.push_back(d);
    if (rep.busiest.size() < 8) rep.busiest.push_back(d);
  }
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string describe_des_report(const DesReport& r) {
  if (!r.ok && !r.no_route.empty())
    return fmt::format("simulation  no route: {} (docs/faults.md)\n", r.no_route);
  if (!r.ok) return "simulation  the network cannot host this job\n";
  std::string out;
  if (!r.most_loaded_link.empty())
    out += fmt::format("faults      most_loaded faults on {}\n", r.most_loaded_link);
  if (r.replicas_simulated == 1 && r.replicas > 1)
    out += fmt::format(
        "simulation  one DP replica simulated, standing for all {} (every replica sees the same "
        "network; --full simulates them all)\n",
        r.replicas);
  else if (r.replicas > 1)
    out += fmt::format("simulation  all {} DP replicas simulated{}\n", r.replicas,
                       r.asymmetry.empty() ? "" : fmt::format(" ({})", r.asymmetry));
  else
    out += "simulation  one DP replica (dp = 1)\n";
  out += fmt::format(
      "            {} events, {} collectives and transfers as flows, {} collectives folded "
      "(uncontendable), {} rate solves, {:.1f} ms; critical: stage {}{}\n",
      r.events, r.flows, r.folded_ops, r.solves, r.wall_s * 1e3, r.critical_stage,
      r.replicas_simulated > 1 ? fmt::format(" replica {}", r.critical_replica) : "");
  if (r.extrapolated_periods > 0)
    out += fmt::format(
        "            steady state: {} periods of {} micro-batches added to a shorter run, not "
        "simulated (docs/des.md \"Steady state\"; --full simulates them)\n",
        r.extrapolated_periods, r.period_microbatches);
  auto line = [](const DesLink& l) {
    return fmt::format(
        "  {:<34} {:>6.1f}% busy, active {:>5.1f}% of the step, peak {} flows, {:.0f} GB/s{}\n",
        l.name, 100 * l.utilization, 100 * l.active_fraction, l.peak_flows, l.capacity_Bps / 1e9,
        l.similar > 0 ? fmt::format(" (+{} links alike)", l.similar) : "");
  };
  out += fmt::format("hot spots   {} links busier than {:.0f}% of the step{}\n", r.hot_spot_links,
                     100 * kHotSpotUtilization, r.hot_spots.empty() ? "" : ":");
  constexpr size_t kShown = 12;
  for (size_t i = 0; i < r.hot_spots.size() && i < kShown; ++i) out += line(r.hot_spots[i]);
  if (r.hot_spots.size() > kShown)
    out += fmt::format("  ... and {} more classes of links\n", r.hot_spots.size() - kShown);
  out += "busiest links\n";
  for (const DesLink& l : r.busiest) out += line(l);
  return out;
}

}  // namespace rapid
