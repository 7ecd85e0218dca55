// Stage instances: the event loop and the execution of a stage's passes on its compute
// stream (docs/des.md "Execution").
#include <algorithm>

#include <fmt/format.h>

#include "rapid/analytical/offload.hpp"
#include "rapid/common/error.hpp"
#include "sim_impl.hpp"

namespace rapid::des {

namespace {

// Length of the overlap of [a0, a1] with [b0, b1].
SimTime overlap(SimTime a0, SimTime a1, SimTime b0, SimTime b1) {
  return std::max<SimTime>(0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

void Simulator::Impl::post_dp_at(Inst& s, int32_t first, int32_t count) {
  if (s.t > now) {
    queue.push(s.t, kDpPost, s.stage,
               (static_cast<uint64_t>(first) << 32) | static_cast<uint32_t>(count));
    streams[static_cast<size_t>(s.stage)].future_posts += count;
    return;
  }
  for (int32_t k = 0; k < count; ++k) post_dp(s.stage, first + k);
}

void Simulator::Impl::schedule_resume(Inst& s, SimTime at) {
  s.wait = Wait::Time;
  queue.push(at, kResume, static_cast<int32_t>(&s - inst.data()));
}

// A DP collective running beside the pass took SMs and HBM from its compute
// (interference.hpp): over the time the two overlapped, the compute progressed at
// pass_compute / pass_dp of its speed, so the pass runs longer by that shortfall. Checked
// per interval between owner boundaries (each a point where DP traffic is posted or
// awaited), so the extension lands where the overlap was and the DP traffic behind it
// keeps flowing; the extension itself is compute of the next interval.
SimTime Simulator::Impl::dp_interference(Inst& s) {
  if (s.t <= s.checked || s.pass_dp <= s.pass_compute) return 0;
  const DpStream& ds = streams[static_cast<size_t>(s.stage)];
  auto advance = [&](SimTime carry) {
    s.checked = s.t;
    s.checked_compute = s.pass_compute;
    s.carry = carry;
  };
  // Nothing ran since the last check nor can start before this instance posts: no overlap.
  if (ds.quiet() && (ds.span_end.empty() || ds.span_end.back() <= s.checked)) {
    advance(0);
    return 0;
  }
  if (s.t > now) {
    schedule_resume(s, s.t);
    return kDeferred;
  }
  const SimTime span = s.t - s.checked;
  const SimTime work = s.pass_compute - s.checked_compute + s.carry;
  // Of the interval, only its compute share suffers.
  const double covered = static_cast<double>(ds.cover(s.checked, s.t, now, buffers.spans)) *
                         std::min(1.0, static_cast<double>(work) / static_cast<double>(span));
  const auto ext = static_cast<SimTime>(
      covered * (1.0 - static_cast<double>(s.pass_compute) / static_cast<double>(s.pass_dp)));
  if (ext < 1000) {  // under a nanosecond
    advance(0);
    return 0;
  }
  advance(ext);
  s.t += ext;
  s.interf += ext;
  return ext;
}

// Activation offload (offload.hpp): the copies of the stage's first layers run beside the
// pass; what outlasts all of it but its first layer's forward (last layer's backward) is
// exposed at its end.
void Simulator::Impl::offload(Inst& s) {
  const SimTime e = to_ps(offload_exposed(
      in.offload_copy_s[static_cast<size_t>(s.stage)], to_seconds(s.t - s.pass_start),
      static_cast<double>(w->stages[static_cast<size_t>(s.stage)].num_layers)));
  s.t += e;
  s.offload += e;
}

void Simulator::Impl::run_events() {
  for (size_t i = 0; i < inst.size(); ++i) resume(static_cast<int32_t>(i));
  uint64_t popped = 0;
  while (!steady.refused()) {
    // The changes of this instant get their rates before the clock moves on (batch mode).
    if (comm.net.pending() && (queue.empty() || queue.top().time > now)) comm.flush(now);
    if (queue.empty()) break;
    if (++popped > opt.max_events)
      throw LimitError(fmt::format(
          "discrete-event simulation past its budget of {} events at t = {:.6g} s of the step",
          opt.max_events, to_seconds(now)));
    const Event e = queue.pop();
    RAPID_ASSERT(e.time >= now, "events in time order");
    now = e.time;
    if (stale(e)) continue;
    if (steady.on()) steady.event(event_shape(e), e.time);
    switch (e.kind) {
      case kResume:
        ++events;
        inst[static_cast<size_t>(e.target)].wait = Wait::None;
        resume(e.target);
        break;
      case kDrain:
        ++events;
        comm.on_drain(now, e.target);
        break;
      case kOpDone:
        ++events;
        on_op_done(e.target);
        break;
      case kDpPost:
        ++events;
        streams[static_cast<size_t>(e.target)].future_posts -=
            static_cast<int32_t>(e.data & 0xFFFFFFFFu);
        for (uint64_t k = 0; k < (e.data & 0xFFFFFFFFu); ++k)
          post_dp(e.target, static_cast<int32_t>((e.data >> 32) + k));
        break;
      default:
        RAPID_ASSERT(false, "known event kind");
    }
  }
}

// A DP op known to be done is passed (its wait counted); one that may still finish before
// the instance gets there is looked at again then; otherwise the instance waits.
bool Simulator::Impl::gate(Inst& s, int32_t k, SimTime* exposed) {
  DpStream& ds = streams[static_cast<size_t>(s.stage)];
  const SimTime done = ds.done[static_cast<size_t>(k)];
  if (done != kNever) {
    *exposed = std::max<SimTime>(0, done - s.t);
    s.t = std::max(s.t, done);
    return true;
  }
  if (s.t > now) {
    schedule_resume(s, s.t);
    return false;
  }
  s.wait = Wait::Dp;
  s.wait_arg = k;
  ds.waiters.push_back(static_cast<int32_t>(&s - inst.data()));
  return false;
}

void Simulator::Impl::run_block(Inst& s, Item& it, int64_t k) {
  it.runs += k;
  if (!opt.timeline) {
    const SimTime slack =
        it.slack + std::min<SimTime>(0, (k - 1) * (it.duration - it.slots * host_op));
    if (s.host - s.t <= slack) {
      if (opt.power)
        opt.power->add(static_cast<size_t>(&s - inst.data()), s.t, s.t + k * it.duration,
                       k * it.compute, it.energy.scaled(static_cast<double>(k)));
      s.t += k * it.duration;
      s.host += k * it.slots * host_op;
      add_scaled(s.compute, it.compute_by_class, k);
      add_scaled(s.layer_comm, it.comm_by_class, k);
      s.interf += k * it.interference;
      s.pass_compute += k * it.compute;
      s.pass_dp += k * it.dp_compute;
      return;
    }
  }
  const int32_t id = static_cast<int32_t>(&s - inst.data());
  for (int64_t r = 0; r < k; ++r)
    for (int32_t x = it.begin; x < it.begin + it.count; ++x) {
      const Entry& e = entries[static_cast<size_t>(x)];
      const SimTime issue = s.host + e.slots * host_op;
      s.host = issue;
      if (issue > s.t) {
        s.host_wait += issue - s.t;
        s.t = issue;
      }
      if (opt.timeline) {
        const PassRef& pr =
            programs[static_cast<size_t>(s.stage)].passes[static_cast<size_t>(s.pass)];
        const bool bwd = pr.dir == PassDir::Backward;
        if (e.compute > 0) {
          Timeline::Slice sl{id, Timeline::kCompute, e.op->name, s.t, s.t + e.compute, 0, 0, pr.mb,
                             bwd};
          sl.hbm_bytes = e.op->bytes;
          opt.timeline->add(sl);
        }
        for (int32_t d : {e.comm, e.comm2})
          if (d >= 0) {
            const CommDesc& c = comm.descs[static_cast<size_t>(d)];
            Timeline::Slice sl{id,         Timeline::kTpComm, c.name, s.t, s.t + c.alone,
                               c.bytes[0], comm.flows(c),     pr.mb,  bwd};
            const auto busy = comm.busiest_link_seconds(c);
            sl.nvlink_busy_s = busy[0], sl.network_busy_s = busy[1];
            opt.timeline->add(sl);
          }
      }
      if (opt.power)
        opt.power->add(static_cast<size_t>(id), s.t, s.t + e.duration, e.compute, e.energy);
      s.t += e.duration;
      s.compute[e.op_class] += e.compute;
      s.layer_comm[e.comm_class] += e.exposed_comm();
      s.interf += e.interference;
      s.pass_compute += e.compute;
      s.pass_dp += e.dp_compute;
    }
}

bool Simulator::Impl::run_pass(Inst& s) {
  const StageProgram& sp = programs[static_cast<size_t>(s.stage)];
  const PassRef& pr = sp.passes[static_cast<size_t>(s.pass)];
  const PassCursor c{sp, pr, sp.num_owners(pr.chunk),
                     sp.hook_begin[static_cast<size_t>(s.pass) + 1],
                     static_cast<int32_t>(&s - inst.data())};
  while (true) {
    bool go = true;
    switch (s.sub) {
      case Sub::AtBoundary:
        go = at_boundary(s, c);
        break;
      case Sub::AtGate:
        go = at_gate(s, c);
        break;
      case Sub::PassEnd:
        return pass_end(s, c);
      case Sub::InOwner:
        go = in_owner(s, c);
        break;
      case Sub::CommPosting:
        go = comm_posting(s, c);
        break;
      case Sub::CommWaiting:
        go = comm_waiting(s, c);
        break;
    }
    if (!go) return false;
  }
}

bool Simulator::Impl::at_boundary(Inst& s, const PassCursor& c) {
  const StageProgram& sp = c.sp;
  auto hook_here = [&] {
    return s.hook < c.hook_end && sp.hooks[static_cast<size_t>(s.hook)].boundary == s.pos;
  };
  // Interference is accounted where DP traffic is posted or awaited (and at the pass's
  // end): the same points whether the owners between run folded or op by op.
  if ((s.pos == c.n || hook_here()) && dp_interference(s) == kDeferred) return false;
  // Posts at this boundary; consecutive ops go in one event (first op, count).
  while (hook_here() && !sp.hooks[static_cast<size_t>(s.hook)].gate) {
    const int32_t first = sp.hooks[static_cast<size_t>(s.hook)].dp_op;
    int32_t count = 0;
    while (hook_here() && !sp.hooks[static_cast<size_t>(s.hook)].gate &&
           sp.hooks[static_cast<size_t>(s.hook)].dp_op == first + count) {
      ++count;
      ++s.hook;
    }
    post_dp_at(s, first, count);
  }
  s.sub = Sub::AtGate;
  return true;
}

bool Simulator::Impl::at_gate(Inst& s, const PassCursor& c) {
  const StageProgram& sp = c.sp;
  bool waited = false;
  for (; s.hook < c.hook_end && sp.hooks[static_cast<size_t>(s.hook)].boundary == s.pos; ++s.hook) {
    SimTime exposed = 0;
    if (!gate(s, sp.hooks[static_cast<size_t>(s.hook)].dp_op, &exposed)) return false;
    s.dp_exposed += exposed;
    waited = waited || exposed > 0;
  }
  // Compute slowed while waiting on the DP traffic only shortens the wait.
  if (waited) {
    s.checked = s.t;
    s.checked_compute = s.pass_compute;
    s.carry = 0;
  }
  if (s.pos == c.n && c.pr.chunk == 0 && !in.offload_copy_s.empty()) offload(s);
  s.sub = s.pos == c.n ? Sub::PassEnd : Sub::InOwner;
  s.item = 0;
  // Fold what shares links only with this stage's DP traffic while that is idle and stays
  // so for the owners up to the next hook: nothing running, posted or due to be posted
  // now. An op cannot start without this instance's post, and its next post is at a later
  // boundary, after these owners' collectives have ended (a post at the end of a backward
  // owner, its gradient bucket, cannot meet them either).
  s.version = streams[static_cast<size_t>(s.stage)].quiet() ? 1 : 0;
  return true;
}

bool Simulator::Impl::pass_end(Inst& s, const PassCursor& c) {
  if (s.t > now) {
    schedule_resume(s, s.t);
    return false;
  }
  // The last extension may overlap DP traffic again: account it until it vanishes.
  if (const SimTime ext = dp_interference(s); ext != 0) {
    if (ext != kDeferred) schedule_resume(s, s.t);
    return false;
  }
  send(c.id, c.pr);
  return true;
}

bool Simulator::Impl::in_owner(Inst& s, const PassCursor& c) {
  const StageProgram& sp = c.sp;
  while (sp.segments[static_cast<size_t>(s.seg)].first_pos +
             sp.segments[static_cast<size_t>(s.seg)].count <=
         s.pos)
    ++s.seg;
  const Segment& g = sp.segments[static_cast<size_t>(s.seg)];
  const Compiled& cp = s.compiled[static_cast<size_t>(s.version)][static_cast<size_t>(g.tmpl)];
  if (s.item == 0 && cp.item_count == 1 && items[static_cast<size_t>(cp.item_begin)].block &&
      !opt.timeline) {
    // A run of owners whose template is one block, up to the next hook: one step.
    const int32_t next_hook =
        s.hook < c.hook_end ? sp.hooks[static_cast<size_t>(s.hook)].boundary : c.n + 1;
    const int32_t k = std::min(g.first_pos + g.count - s.pos, next_hook - s.pos);
    run_block(s, items[static_cast<size_t>(cp.item_begin)], k);
    s.pos += k;
    s.sub = Sub::AtBoundary;
    return true;
  }
  while (s.item < cp.item_count) {
    Item& it = items[static_cast<size_t>(cp.item_begin + s.item)];
    if (it.block) {
      run_block(s, it, 1);
      ++s.item;
      continue;
    }
    const SimTime issue = s.host + it.slots * host_op;
    s.host = issue;
    s.post = std::max(s.t, issue);
    s.sub = Sub::CommPosting;
    if (s.post > now) {
      schedule_resume(s, s.post);
      return false;
    }
    return true;
  }
  ++s.pos;
  s.sub = Sub::AtBoundary;
  return true;
}

bool Simulator::Impl::comm_posting(Inst& s, const PassCursor& c) {
  s.host_wait += s.post - s.t;
  s.t = s.post;
  s.sub = Sub::CommWaiting;
  s.wait = Wait::Comm;
  post_unit(c.id);
  if (s.unit_pending > 0) return false;
  s.wait = Wait::None;
  return true;
}

bool Simulator::Impl::comm_waiting(Inst& s, const PassCursor& c) {
  if (s.unit_pending > 0) {
    s.wait = Wait::Comm;
    return false;
  }
  const Segment& g = c.sp.segments[static_cast<size_t>(s.seg)];
  const Compiled& cp = s.compiled[static_cast<size_t>(s.version)][static_cast<size_t>(g.tmpl)];
  const Item& it = items[static_cast<size_t>(cp.item_begin + s.item)];
  const SimTime compute_end = s.post + it.compute + it.interference;
  const SimTime end = std::max(compute_end, s.unit_done);
  if (opt.timeline && it.compute_op) {
    Timeline::Slice sl{
        c.id,    Timeline::kCompute,           it.compute_op->name, s.post, compute_end, 0, 0,
        c.pr.mb, c.pr.dir == PassDir::Backward};
    sl.hbm_bytes = it.compute_op->bytes;
    opt.timeline->add(sl);
  }
  if (opt.power)
    opt.power->add(static_cast<size_t>(c.id), s.post, compute_end, it.compute, it.energy);
  if (it.compute_op) s.compute[op_class(it.compute_op->kind)] += it.compute;
  s.interf += it.interference;
  s.pass_compute += it.compute;
  s.pass_dp += it.dp_compute;
  s.layer_comm[s.unit_class] += end - compute_end;
  s.t = end;
  ++s.item;
  s.sub = Sub::InOwner;
  return true;
}

// Before pass s.pass: its sends done and its input arrived (false: waiting for them).
bool Simulator::Impl::before_pass(Inst& s, const StageProgram& sp) {
  if (s.pass == static_cast<int32_t>(sp.passes.size())) {
    s.phase = Phase::Tail;
    return true;
  }
  if (s.sends > 0) {
    s.wait = Wait::Sends;
    return false;
  }
  const PassRef& pr = sp.passes[static_cast<size_t>(s.pass)];
  const bool input = pr.dir == PassDir::Forward ? (s.stage > 0 || pr.chunk > 0)
                                                : (s.stage < pp - 1 || pr.chunk < vpp - 1);
  SimTime ready = std::max(s.t, s.sends_done);
  const SimTime in_pp = s.had_sends ? overlap(s.t, ready, s.sends_start, s.sends_done) : 0;
  if (input) {
    const auto msg = static_cast<size_t>(message(pr));
    if (s.arrived[msg] == kNever) {
      s.wait = Wait::Recv;
      s.wait_arg = static_cast<int32_t>(msg);
      return false;
    }
    ready = std::max(ready, s.arrived[msg]);
    // Waiting for data still in flight is the schedule's idle (bubble), as in the
    // analytical model: the stage's pipeline time is its own (blocking) sends.
  }
  s.pp += in_pp;
  // Megatron's p2p calls end in torch.cuda.synchronize(): the host resumes with them.
  if (input || s.had_sends) s.host = std::max(s.host, ready);
  s.t = ready;
  s.had_sends = false;
  s.sends_done = 0;
  s.phase = Phase::InPass;
  s.checked = s.pass_start = s.t;
  s.pass_compute = s.pass_dp = s.checked_compute = s.carry = 0;
  s.sub = Sub::AtBoundary;
  s.pos = 0;
  s.item = 0;
  s.hook = sp.hook_begin[static_cast<size_t>(s.pass)];
  s.seg = sp.segment_range(pr.chunk, pr.dir).first;
  if (steady.on() && s.stage == 0 && s.replica == 0 && pr.dir == PassDir::Forward &&
      pr.chunk == 0 && pr.mb % steady.delta() == 0)
    steady_cut(s);
  return true;
}

// The optimizer step over the stage's shard (HBM-bound, at the instance's derate), then the
// weight gathers posted after it.
void Simulator::Impl::optimizer_step(Inst& s, const StageProgram& sp) {
  const int32_t id = static_cast<int32_t>(&s - inst.data());
  const double opt_s = in.compute->memory_time(sp.optimizer_bytes);
  const SimTime d = to_ps(
      in.derate.empty() ? opt_s
                        : opt_s / in.derate[static_cast<size_t>(s.stage * dp + s.replica)].hbm);
  if (opt.power) {  // a streaming kernel over the optimizer states
    Op o;
    o.bytes = sp.optimizer_bytes;
    opt.power->add(static_cast<size_t>(id), s.t, s.t + d, d, in.power->op_energy(o, opt_s));
  }
  if (opt.timeline) {
    Timeline::Slice sl{id, Timeline::kCompute, "optimizer_step", s.t, s.t + d};
    sl.hbm_bytes = sp.optimizer_bytes;
    opt.timeline->add(sl);
  }
  s.opt += d;
  s.t += d;
  if (static_cast<size_t>(sp.end_posts_begin) < sp.dp_ops.size())
    post_dp_at(s, sp.end_posts_begin, static_cast<int32_t>(sp.dp_ops.size()) - sp.end_posts_begin);
}

void Simulator::Impl::resume(int32_t i) {
  Inst& s = inst[static_cast<size_t>(i)];
  const StageProgram& sp = programs[static_cast<size_t>(s.stage)];
  while (true) {
    switch (s.phase) {
      case Phase::Start:
        for (int32_t k = 0; k < sp.start_posts; ++k) post_dp(s.stage, k);
        s.phase = Phase::BeforePass;
        break;
      case Phase::BeforePass:
        if (!before_pass(s, sp)) return;
        break;
      case Phase::InPass:
        if (!run_pass(s)) return;
        ++s.pass;
        s.phase = Phase::BeforePass;
        break;
      case Phase::Tail:
        if (sp.tail_gate >= 0) {
          SimTime exposed = 0;
          if (!gate(s, sp.tail_gate, &exposed)) return;
          s.dp_exposed += exposed;
        }
        s.phase = Phase::Optimizer;
        break;
      case Phase::Optimizer:
        optimizer_step(s, sp);
        s.phase = Phase::EndGather;
        break;
      case Phase::EndGather:
        if (static_cast<size_t>(sp.end_posts_begin) < sp.dp_ops.size()) {
          SimTime exposed = 0;
          if (!gate(s, static_cast<int32_t>(sp.dp_ops.size()) - 1, &exposed)) return;
          s.dp_exposed += exposed;
        }
        s.end = s.t;
        step_end = std::max(step_end, s.t);
        s.phase = Phase::Done;
        return;
      case Phase::Done:
        return;
    }
  }
}

}  // namespace rapid::des
