#include "communicator.hpp"

#include <algorithm>
#include <utility>

namespace rapid::des {

void Communicator::clear(const Fabric* fabric) {
  net.clear();
  ops.clear();
  descs.clear();
  desc_layouts.clear();
  flows_started = 0;
  timed_classes.clear();
  topo = fabric;
}

void Communicator::push_changed() {
  for (int32_t b : net.changed()) queue_.push(net.drain_time(b), kDrain, b, net.version(b));
}

void Communicator::bundles_of(const CommDesc& d, std::vector<OpBundle>& out) const {
  out.clear();
  for_each_layout(d, [&](int32_t l, double bytes) {
    const auto uses = layouts_.uses(l);
    if (!uses.empty() && bytes > 0) out.push_back({uses, bytes});
  });
}

int32_t Communicator::start(SimTime now, const OpTarget& target, int32_t desc) {
  ++flows_started;
  ActiveOp op;
  op.target = target;
  op.desc = desc;
  op.start = op.last = now;
  const CommDesc& d = descs[static_cast<size_t>(desc)];
  op.latency = d.latency + (d.timed_loss != 0 ? timed_loss_latency(now, d) : 0);
  const int32_t id = ops.add(op);
  const bool fold = folding.on();
  // The op's bundles, listed once: tried folded, else started in the network. (Unfolding
  // another op lists that op's bundles in unfolding_, not here.)
  bundles_of(d, op_bundles_);
  if (fold && folding.try_fold(id, op_bundles_, now)) return id;
  int32_t pending = 0;
  for (const OpBundle& b : op_bundles_) {
    if (fold) meet_folded(now, b.uses);
    net.add(now, b.uses, b.bytes, static_cast<uint64_t>(id));
    ++pending;
  }
  if (pending > 0) {
    net.commit(now);
    push_changed();
  }
  ActiveOp& o = ops[id];
  o.pending = pending;
  if (pending == 0) queue_.push(now + o.latency, kOpDone, id, o.version);
  return id;
}

void Communicator::meet_folded(SimTime now, std::span<const ResourceUse> uses) {
  for (const ResourceUse& u : uses)
    if (const int32_t id = folding.moving_on(u.res, now); id >= 0) {
      bundles_of(descs[static_cast<size_t>(ops[id].desc)], unfolding_);
      folding.unfold(id, unfolding_, now);
    }
}

SimTime Communicator::timed_loss_latency(SimTime now, const CommDesc& d) const {
  return to_ps(d.plan.net_steps * topo->timed_loss_s(d.timed_loss, to_seconds(now)));
}

void Communicator::schedule_fault_changes() {
  if (timed_classes.empty()) return;
  for (size_t k = 0; k < topo->fault_times().size(); ++k) {
    ActiveOp op;
    op.target = FaultChangeAt{static_cast<int32_t>(k)};
    const int32_t id = ops.add(op);
    queue_.push(to_ps(topo->fault_times()[k]), kOpDone, id, ops[id].version);
  }
}

// The faulted classes take their capacity of the interval up to the next change (probed at
// its middle: the set of faults in effect is constant there), and the bundles crossing
// them get new rates (FlowNetwork::set_capacity).
void Communicator::on_fault_change(SimTime now, int32_t k) {
  const std::vector<double>& times = topo->fault_times();
  const auto next = static_cast<size_t>(k) + 1;
  const double probe = next < times.size() ? 0.5 * (times[static_cast<size_t>(k)] + times[next])
                                           : times[static_cast<size_t>(k)] + 1.0;
  for (int32_t c : timed_classes) {
    const double cap = topo->capacity_at(layouts_.class_links(c).front(), probe);
    if (cap == net.capacity(c)) continue;
    net.set_capacity(now, c, cap);
    push_changed();
  }
}

void Communicator::on_drain(SimTime now, int32_t bundle) {
  const auto id = static_cast<int32_t>(net.tag(bundle));
  net.finish(now, bundle);
  push_changed();
  ActiveOp& op = ops[id];
  op.last = now;
  if (--op.pending == 0) queue_.push(now + op.latency, kOpDone, id, op.version);
}

std::array<double, 2> Communicator::busiest_link_seconds(const CommDesc& d) const {
  std::vector<std::pair<int32_t, double>> per_class;  // (class, seconds), tiers summed
  for_each_layout(d, [&](int32_t layout, double bytes) {
    for (const ResourceUse& u : layouts_.uses(layout)) {
      auto it = std::find_if(per_class.begin(), per_class.end(),
                             [&](const auto& p) { return p.first == u.res; });
      if (it == per_class.end()) it = per_class.insert(per_class.end(), {u.res, 0.0});
      it->second += bytes * u.mult / net.capacity(u.res);
    }
  });
  std::array<double, 2> busiest{};
  for (const auto& [c, seconds] : per_class) {
    double& b = busiest[topo->link(layouts_.class_links(c).front()).network() ? 1 : 0];
    b = std::max(b, seconds);
  }
  return busiest;
}

}  // namespace rapid::des
