#include "rapid/des/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "rapid/common/error.hpp"
#include "sim_impl.hpp"

namespace rapid::des {

namespace {

// "" when every stage's replicas have the same derate, else which replica differs.
std::string unequal_derates(const std::vector<Derate>& derate, int64_t pp, int64_t dp) {
  if (derate.empty()) return {};
  for (int64_t s = 0; s < pp; ++s)
    for (int64_t r = 1; r < dp; ++r)
      if (!(derate[static_cast<size_t>(s * dp + r)] == derate[static_cast<size_t>(s * dp)]))
        return fmt::format("stage {} replica {} runs at another clock or HBM derate than replica 0",
                           s, r);
  return {};
}

}  // namespace

Simulator::Simulator() : impl_(new Impl) {}
Simulator::~Simulator() {
  delete impl_;
}

void Simulator::run(const Workload& w, const SimInputs& in, const SimOptions& opt, SimResult& out) {
  Impl& s = *impl_;
  s.has_most_loaded = false;
  const bool most_loaded =
      in.link_faults &&
      std::any_of(in.link_faults->begin(), in.link_faults->end(),
                  [](const LinkFault& f) { return f.selector == LinkSelector::MostLoaded; });
  std::string most_loaded_name;
  if (most_loaded) {
    // docs/faults.md "most_loaded": the busiest scale-out link class of the fault-free step
    // (the busiest link of any kind when no scale-out link carries traffic); the fault goes
    // on its first link.
    SimInputs clean = in;
    clean.link_faults = nullptr;
    SimOptions quiet = opt;
    quiet.timeline = nullptr;
    run_once(w, clean, quiet, out);
    const LinkStat* pick = nullptr;
    for (const LinkStat& l : out.links)
      if (!pick || (topo_.link(l.first_link).network() && !topo_.link(pick->first_link).network()))
        pick = &l;
    if (pick) {
      s.most_loaded = topo_.link(pick->first_link).ref();
      s.has_most_loaded = true;
      most_loaded_name = topo_.link_name(pick->first_link);
    }
  }
  run_once(w, in, opt, out);
  out.most_loaded_link = most_loaded_name;
}

void Simulator::run_once(const Workload& w, const SimInputs& in, const SimOptions& opt,
                         SimResult& out) {
  // A step of many micro-batches: the same step with g periods fewer, extrapolated when it
  // is periodic in the middle (docs/des.md "Steady state"); else the whole step.
  int32_t delta = 1;
  if (const int64_t g = SteadyProbe::periods_to_skip(w, in, opt, &delta); g > 0) {
    Workload& shorter = impl_->buffers.shorter;
    shorter = w;
    shorter.num_microbatches -= g * delta;
    if (simulate(shorter, in, opt, out, delta, g)) return;
  }
  simulate(w, in, opt, out, 1, 0);
}

bool Simulator::simulate(const Workload& w, const SimInputs& in, const SimOptions& opt,
                         SimResult& out, int32_t delta, int64_t periods) {
  Impl& s = *impl_;
  out = SimResult{};
  if (opt.timeline) opt.timeline->clear();
  const bool one = opt.replicas != ReplicaMode::All || w.par.dp == 1;
  if (!s.setup(w, in, opt, topo_, one)) {
    out.no_route = s.no_route;
    if (s.no_route) out.no_route_reason = s.layouts.no_route_reason();
    return true;
  }
  // Replicas of a stage that run at different derates (stragglers, thermal throttling,
  // docs/nonideal.md) are never equivalent, whatever the network.
  std::string slow = one ? unequal_derates(in.derate, w.par.pp, w.par.dp) : std::string();
  out.symmetric = s.layouts.symmetric() && slow.empty();
  if (opt.replicas == ReplicaMode::Auto && one && !out.symmetric) {
    out.asymmetry = slow.empty() ? s.layouts.asymmetry() : std::move(slow);
    if (opt.timeline) opt.timeline->clear();
    s.setup(w, in, opt, topo_, false);  // the same routes: no_route was checked above
  }
  if (opt.power) {
    opt.power->reset(s.inst.size());
    for (size_t i = 0; i < s.inst.size(); ++i) {
      opt.power->stage[i] = s.inst[i].stage;
      opt.power->replica[i] = s.inst[i].replica;
      opt.power->first_gpu[i] = s.layouts.first_gpu(static_cast<int32_t>(i));
    }
  }
  s.steady_begin(delta, periods);
  s.run_events();
  if (periods > 0 && !s.steady.accepted()) return false;
  s.steady_apply();
  out.ok = true;
  out.replicas_simulated = s.one_replica ? 1 : w.par.dp;
  out.events = s.events;
  out.solves = static_cast<uint64_t>(s.comm.net.solves() + s.extra_solves);
  out.extrapolated_periods = s.steady.accepted() ? s.steady.periods() : 0;
  out.period_microbatches = s.steady.delta();
  out.flows = s.comm.flows_started;
  out.step_time_s = to_seconds(s.step_end);
  s.report_instances(out);
  s.report_links(out);
  return true;
}

void Simulator::Impl::report_instances(SimResult& out) const {
  for (size_t i = 0; i < inst.size(); ++i) {
    const Inst& x = inst[i];
    RAPID_ASSERT(x.phase == Phase::Done, "every stage instance finishes the step");
    InstanceTimes t;
    t.stage = x.stage;
    t.end = to_seconds(x.end);
    t.compute = to_seconds(class_sum(x.compute));
    t.layer_comm = to_seconds(class_sum(x.layer_comm));
    for (size_t k = 0; k < kNumOpClasses; ++k) t.compute_by_class[k] = to_seconds(x.compute[k]);
    for (size_t k = 0; k < kNumCommClasses; ++k) t.comm_by_class[k] = to_seconds(x.layer_comm[k]);
    t.interference = to_seconds(x.interf);
    t.pp_comm = to_seconds(x.pp);
    t.host = to_seconds(x.host_wait);
    t.dp_exposed = to_seconds(x.dp_exposed);
    t.dp_busy = to_seconds(streams[static_cast<size_t>(x.stage)].busy_ps);
    t.optimizer = to_seconds(x.opt);
    t.offload = to_seconds(x.offload);
    if (x.end > inst[static_cast<size_t>(out.critical)].end) out.critical = static_cast<int32_t>(i);
    out.instances.push_back(t);
  }
}

void Simulator::Impl::report_links(SimResult& out) const {
  const SimTime end = step_end;
  // Link classes: what the network carried plus the folded collectives' uncontended flows.
  const int32_t nc = layouts.num_classes();
  std::vector<double> bytes(static_cast<size_t>(nc), 0.0);
  std::vector<SimTime> busy(static_cast<size_t>(nc), 0);
  std::vector<int32_t> peak(static_cast<size_t>(nc), 0);
  for (int32_t c = 0; c < nc; ++c) {
    bytes[static_cast<size_t>(c)] = comm.net.carried_bytes(c) + extra_bytes[static_cast<size_t>(c)];
    busy[static_cast<size_t>(c)] = comm.net.busy_time(c, end) + extra_busy[static_cast<size_t>(c)];
    peak[static_cast<size_t>(c)] = comm.net.peak_flows(c);
  }
  for (const Item& it : items) {
    if (!it.block || it.runs == 0) continue;
    for (int32_t e = it.begin; e < it.begin + it.count; ++e)
      for (int32_t d :
           {entries[static_cast<size_t>(e)].comm, entries[static_cast<size_t>(e)].comm2}) {
        if (d < 0) continue;
        out.folded_ops += static_cast<uint64_t>(it.runs);
        const CommDesc& cd = comm.descs[static_cast<size_t>(d)];
        comm.for_each_layout(cd, [&](int32_t l, double moved) {
          double rate = std::numeric_limits<double>::infinity();
          for (const ResourceUse& u : layouts.uses(l))
            rate = std::min(rate, layouts.class_capacity(u.res) / u.mult);
          const SimTime drain = to_ps_ceil(moved / rate);
          for (const ResourceUse& u : layouts.uses(l)) {
            bytes[static_cast<size_t>(u.res)] += static_cast<double>(it.runs) * moved * u.mult;
            busy[static_cast<size_t>(u.res)] += it.runs * drain;
            peak[static_cast<size_t>(u.res)] = std::max(peak[static_cast<size_t>(u.res)], u.mult);
          }
        });
      }
  }
  for (int32_t c = 0; c < nc; ++c) {
    LinkStat ls;
    const auto links = layouts.class_links(c);
    ls.first_link = links.empty() ? -1 : links.front();
    ls.links = static_cast<int32_t>(links.size());
    ls.capacity_Bps = layouts.class_capacity(c);
    ls.bytes = bytes[static_cast<size_t>(c)];
    ls.peak_flows = peak[static_cast<size_t>(c)];
    ls.utilization = end > 0 ? ls.bytes / (ls.capacity_Bps * out.step_time_s) : 0.0;
    ls.active_fraction = end > 0 ? std::min(1.0, static_cast<double>(busy[static_cast<size_t>(c)]) /
                                                     static_cast<double>(end))
                                 : 0.0;
    if (ls.bytes > 0) out.links.push_back(ls);
  }
  std::stable_sort(out.links.begin(), out.links.end(), [](const LinkStat& a, const LinkStat& b) {
    return a.utilization > b.utilization;
  });
}

}  // namespace rapid::des
