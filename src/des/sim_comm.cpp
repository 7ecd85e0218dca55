// Collectives as flows: starting an op's bundles, drains, completions, blocking units
// (with the rendezvous of their participants), pipeline p2p and the DP streams.
#include <algorithm>

#include "rapid/common/error.hpp"
#include "sim_impl.hpp"

namespace rapid::des {

void Simulator::Impl::push_changed() {
  for (int32_t b : net.changed()) queue.push(net.drain_time(b), kDrain, b, net.version(b));
}

int32_t Simulator::Impl::start_op(const OpTarget& target, int32_t desc) {
  ++flows_started;
  ActiveOp op;
  op.target = target;
  op.desc = desc;
  op.start = op.last = now;
  const CommDesc& d = descs[static_cast<size_t>(desc)];
  op.latency = d.latency + (d.timed_loss != 0 ? timed_loss_latency(d) : 0);
  const int32_t id = ops.add(op);
  const bool fold = folding.on();
  // The op's bundles, listed once: tried folded, else started in the network. (Unfolding
  // another op lists that op's bundles in buffers.unfolding, not here.)
  bundles_of(d, buffers.op_bundles);
  if (fold && folding.try_fold(id, buffers.op_bundles, now)) return id;
  int32_t pending = 0;
  for (const OpBundle& b : buffers.op_bundles) {
    if (fold) meet_folded(b.uses);
    net.add(now, b.uses, b.bytes, static_cast<uint64_t>(id));
    ++pending;
  }
  if (pending > 0) {
    net.commit(now);
    push_changed();
  }
  ActiveOp& o = ops[id];
  o.pending = pending;
  if (pending == 0) queue.push(now + o.latency, kOpDone, id, o.version);
  return id;
}

void Simulator::Impl::meet_folded(std::span<const ResourceUse> uses) {
  for (const ResourceUse& u : uses)
    if (const int32_t id = folding.moving_on(u.res, now); id >= 0) {
      bundles_of(descs[static_cast<size_t>(ops[id].desc)], buffers.unfolding);
      folding.unfold(id, buffers.unfolding, now);
    }
}

SimTime Simulator::Impl::timed_loss_latency(const CommDesc& d) const {
  return to_ps(d.plan.net_steps * topo->timed_loss_s(d.timed_loss, to_seconds(now)));
}

void Simulator::Impl::schedule_fault_changes() {
  if (timed_classes.empty()) return;
  for (size_t k = 0; k < topo->fault_times().size(); ++k) {
    ActiveOp op;
    op.target = FaultChangeAt{static_cast<int32_t>(k)};
    const int32_t id = ops.add(op);
    queue.push(to_ps(topo->fault_times()[k]), kOpDone, id, ops[id].version);
  }
}

// A timed fault starts or ends: the faulted classes take their capacity of the interval up to
// the next change (probed at its middle: the set of faults in effect is constant there), and
// the bundles crossing them get new rates (FlowNetwork::set_capacity).
void Simulator::Impl::on_fault_change(int32_t k) {
  const std::vector<double>& times = topo->fault_times();
  const auto next = static_cast<size_t>(k) + 1;
  const double probe = next < times.size() ? 0.5 * (times[static_cast<size_t>(k)] + times[next])
                                           : times[static_cast<size_t>(k)] + 1.0;
  for (int32_t c : timed_classes) {
    const double cap = topo->capacity_at(layouts.class_links(c).front(), probe);
    if (cap == net.capacity(c)) continue;
    net.set_capacity(now, c, cap);
    push_changed();
  }
}

void Simulator::Impl::on_drain(int32_t bundle, uint32_t /*version*/) {
  const auto id = static_cast<int32_t>(net.tag(bundle));
  net.finish(now, bundle);
  push_changed();
  ActiveOp& op = ops[id];
  op.last = now;
  if (--op.pending == 0) queue.push(now + op.latency, kOpDone, id, op.version);
}

void Simulator::Impl::on_op_done(int32_t id) {
  const ActiveOp op = ops[id];
  ops.release(id);  // done: its slot serves the next op (the handlers use the copy)
  if (const auto* f = std::get_if<FaultChangeAt>(&op.target)) {
    on_fault_change(f->time_index);
    return;
  }
  const CommDesc& d = descs[static_cast<size_t>(op.desc)];
  auto record = [&](int32_t who, Timeline::Track track, int32_t mb, bool bwd) {
    if (!opt.timeline) return;
    const int32_t l = d.ntiers > 0 ? desc_layouts[static_cast<size_t>(d.layout_begin[0])] : -1;
    opt.timeline->add(
        {who, track, d.name, op.start, now, d.bytes[0], l >= 0 ? layouts.flows(l) : 0, mb, bwd});
  };
  switch (op.role()) {
    case CommRole::Unit: {
      const UnitWaiters& u = std::get<UnitWaiters>(op.target);
      for (int32_t k = 0; k < u.count; ++k) {
        const int32_t i = units.waiter(u, k);
        Inst& s = inst[static_cast<size_t>(i)];
        const PassRef& pr =
            programs[static_cast<size_t>(s.stage)].passes[static_cast<size_t>(s.pass)];
        record(i, Timeline::kTpComm, pr.mb, pr.dir == PassDir::Backward);
        if (now >= s.unit_done && d.op)  // the unit's exposed time is its last collective's
          s.unit_class = static_cast<uint8_t>(comm_class(d.op->group));
        s.unit_done = std::max(s.unit_done, now);
        if (--s.unit_pending == 0 && s.wait == Wait::Comm) wake(i);
      }
      units.finished(u);
      break;
    }
    case CommRole::P2P: {
      const Transfer& t = std::get<Transfer>(op.target);
      Inst& r = inst[static_cast<size_t>(t.receiver)];
      r.arrived[static_cast<size_t>(t.message)] = now;
      const bool bwd = t.message >= vpp * m;
      record(t.sender, Timeline::kPpComm, static_cast<int32_t>(t.message % m), bwd);
      Inst& s = inst[static_cast<size_t>(t.sender)];
      s.sends_done = std::max(s.sends_done, now);
      const bool sender_wakes = --s.sends == 0 && s.wait == Wait::Sends;
      if (r.wait == Wait::Recv && r.wait_arg == t.message) wake(t.receiver);
      if (sender_wakes && s.wait == Wait::Sends) wake(t.sender);
      break;
    }
    case CommRole::FaultChange:
      break;
    case CommRole::Dp: {
      const DpRun& run = std::get<DpRun>(op.target);
      DpStream& ds = streams[static_cast<size_t>(run.stage)];
      ds.finish(run.op, op.start, now);
      if (opt.timeline)
        for (size_t i = 0; i < inst.size(); ++i)
          if (inst[i].stage == run.stage)
            record(static_cast<int32_t>(i), Timeline::kDpComm, -1, false);
      // Wake the instances waiting for this op.
      std::vector<int32_t>& woken = buffers.woken;
      woken.clear();
      auto it = std::remove_if(ds.waiters.begin(), ds.waiters.end(), [&](int32_t i) {
        const Inst& s = inst[static_cast<size_t>(i)];
        if (s.wait != Wait::Dp || s.wait_arg != run.op) return false;
        woken.push_back(i);
        return true;
      });
      ds.waiters.erase(it, ds.waiters.end());
      for (int32_t i : woken) wake(i);
      try_start_dp(run.stage);
      break;
    }
  }
}

// The current unit of instance i: start each collective, or join its rendezvous when it
// involves several instances (a group spanning simulated replicas).
void Simulator::Impl::post_unit(int32_t i) {
  Inst& s = inst[static_cast<size_t>(i)];
  const StageProgram& sp = programs[static_cast<size_t>(s.stage)];
  const Segment& g = sp.segments[static_cast<size_t>(s.seg)];
  const Compiled& c = s.compiled[static_cast<size_t>(s.version)][static_cast<size_t>(g.tmpl)];
  const Item& it = items[static_cast<size_t>(c.item_begin + s.item)];
  s.unit_pending = it.count;
  s.unit_done = s.t;
  for (int32_t k = 0; k < it.count; ++k) {
    const int32_t d = unit_comms[static_cast<size_t>(it.begin + k)];
    const CommDesc& desc = descs[static_cast<size_t>(d)];
    if (desc.participants <= 1) {  // the one waiter in c, no pool entry
      start_op(UnitWaiters{-1, 1, i}, d);
      continue;
    }
    const int32_t first = desc_layouts[static_cast<size_t>(desc.layout_begin[0])];
    if (const auto u = units.post(i, first, desc.participants)) start_op(*u, d);
  }
}

void Simulator::Impl::send(int32_t i, const PassRef& pr) {
  Inst& s = inst[static_cast<size_t>(i)];
  int32_t dst = -1, desc = -1;
  PassRef msg = pr;
  if (pr.dir == PassDir::Forward) {
    if (s.stage + 1 < pp) {
      dst = s.stage + 1;
      desc = s.p2p_desc[0];
    } else if (pr.chunk + 1 < vpp) {
      dst = 0;
      desc = s.p2p_wrap;
      msg.chunk = pr.chunk + 1;
    }
  } else {
    if (s.stage > 0) {
      dst = s.stage - 1;
      desc = s.p2p_desc[1];
    } else if (pr.chunk > 0) {
      dst = static_cast<int32_t>(pp) - 1;
      desc = s.p2p_wrap;
      msg.chunk = pr.chunk - 1;
    }
  }
  if (dst < 0) return;
  const int32_t receiver = layouts.instance(dst, s.replica);
  if (desc < 0) {  // same GPUs (cannot happen with pp > 1): the data is there at once
    inst[static_cast<size_t>(receiver)].arrived[static_cast<size_t>(message(msg))] = now;
    return;
  }
  ++s.sends;
  s.had_sends = true;
  s.sends_start = now;
  start_op(Transfer{i, receiver, message(msg)}, desc);
}

void Simulator::Impl::post_dp(int32_t stage, int32_t k) {
  if (streams[static_cast<size_t>(stage)].post(k)) try_start_dp(stage);
}

void Simulator::Impl::try_start_dp(int32_t stage) {
  streams[static_cast<size_t>(stage)].start_ready(now, [&](int32_t k, int32_t desc) {
    start_op(DpRun{stage, k}, desc);
  });
}

}  // namespace rapid::des
