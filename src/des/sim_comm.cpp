// The stage executor's side of communication: what happens when an op ends (waking the
// instances waiting for it), blocking units (with the rendezvous of their participants),
// pipeline p2p and the DP streams. The ops themselves run in the Communicator.
#include <algorithm>

#include "rapid/common/error.hpp"
#include "sim_impl.hpp"

namespace rapid::des {

void Simulator::Impl::on_op_done(int32_t id) {
  const ActiveOp op = comm.ops[id];
  comm.ops.release(id);  // done: its slot serves the next op (the handlers use the copy)
  if (const auto* f = std::get_if<FaultChangeAt>(&op.target)) {
    comm.on_fault_change(now, f->time_index);
    return;
  }
  const CommDesc& d = comm.descs[static_cast<size_t>(op.desc)];
  auto record = [&](int32_t who, Timeline::Track track, int32_t mb, bool bwd) {
    if (!opt.timeline) return;
    Timeline::Slice sl{who, track, d.name, op.start, now, d.bytes[0], comm.flows(d), mb, bwd};
    const auto busy = comm.busiest_link_seconds(d);
    sl.nvlink_busy_s = busy[0], sl.network_busy_s = busy[1];
    opt.timeline->add(sl);
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
      if (opt.timeline)  // the arrow to the receiver's next compute op (the pass it feeds)
        opt.timeline->add_flow({t.sender, Timeline::kPpComm, op.start, t.receiver,
                                Timeline::kCompute, now, bwd ? "gradient" : "activation"});
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
      for (int32_t i : woken) {
        if (opt.timeline)  // the compute op that waited for this DP collective
          opt.timeline->add_flow(
              {i, Timeline::kDpComm, op.start, i, Timeline::kCompute, now, d.name});
        wake(i);
      }
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
    const CommDesc& desc = comm.descs[static_cast<size_t>(d)];
    if (desc.participants <= 1) {  // the one waiter in c, no pool entry
      comm.start(now, UnitWaiters{-1, 1, i}, d);
      continue;
    }
    if (const auto u = units.post(i, comm.first_layout(desc), desc.participants))
      comm.start(now, *u, d);
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
  comm.start(now, Transfer{i, receiver, message(msg)}, desc);
}

void Simulator::Impl::post_dp(int32_t stage, int32_t k) {
  if (streams[static_cast<size_t>(stage)].post(k)) try_start_dp(stage);
}

void Simulator::Impl::try_start_dp(int32_t stage) {
  streams[static_cast<size_t>(stage)].start_ready(now, [&](int32_t k, int32_t desc) {
    comm.start(now, DpRun{stage, k}, desc);
  });
}

}  // namespace rapid::des
