// Steady-state extrapolation of a long step from a shorter run (docs/des.md "Steady
// state"; the probe, steady_probe.hpp, decides): what the simulator observes for it (event
// shapes, the state's digest and relative times at each cut, the accumulators) and the
// accumulators it extrapolates.
#include <algorithm>
#include <cmath>

#include "sim_impl.hpp"
#include "splitmix.hpp"

namespace rapid::des {

void Simulator::Impl::steady_begin(int32_t delta, int64_t periods) {
  steady.begin(delta, periods, inst.size(), 2 * streams.size());
  const auto nc = static_cast<size_t>(layouts.num_classes());
  extra_bytes.assign(nc, 0.0);
  extra_busy.assign(nc, 0);
  extra_solves = 0;
}

template <class F>
void Simulator::Impl::for_each_accumulator(F&& f) {
  for (Inst& x : inst) {
    for (SimTime& v : x.compute) f(v);
    for (SimTime& v : x.layer_comm) f(v);
    for (SimTime* v : {&x.interf, &x.pp, &x.host_wait, &x.dp_exposed, &x.opt, &x.offload}) f(*v);
  }
  for (DpStream& ds : streams) f(ds.busy_ps);
  for (Item& it : items) f(it.runs);
  auto flows = static_cast<int64_t>(comm.flows_started);
  f(flows);
  comm.flows_started = static_cast<uint64_t>(flows);
}

uint64_t Simulator::Impl::event_shape(const Event& e) const {
  Digest d;
  d << e.kind;
  switch (e.kind) {
    case kResume:
      d << e.target;
      break;
    case kDpPost:
      d << e.target << static_cast<int64_t>(e.data & 0xFFFFFFFFu);
      break;
    case kDrain:
    case kOpDone: {
      const int32_t id = e.kind == kDrain ? static_cast<int32_t>(comm.net.tag(e.target)) : e.target;
      const ActiveOp& op = comm.ops[id];
      d << static_cast<int64_t>(op.role()) << op.desc;
      break;
    }
    default:
      break;
  }
  return d.h;
}

void Simulator::Impl::steady_cut(const Inst& s0) {
  const SimTime t = s0.t;
  const int32_t mb0 =
      programs[static_cast<size_t>(s0.stage)].passes[static_cast<size_t>(s0.pass)].mb;
  // The state's shape (exact) and its times relative to the cut (compared within tolerance).
  Digest st;
  SteadyProbe::LastCut& last = steady.last();
  const SimTime p = t - last.t;
  SteadyProbe::Cut& cut = steady.open_cut();
  std::vector<SimTime>& times = cut.times;
  times.push_back(p);
  for (size_t i = 0; i < inst.size(); ++i) {
    const Inst& x = inst[i];
    st << static_cast<int64_t>(x.phase) << static_cast<int64_t>(x.sub)
       << static_cast<int64_t>(x.wait) << x.pos << x.item << x.seg << x.version << x.unit_pending
       << x.sends << x.had_sends << (x.pass - last.pass[i]) << (x.hook - last.hook[i]);
    if (x.wait == Wait::Recv) st << (x.wait_arg - mb0);  // the message of a later micro-batch
    for (SimTime v :
         {x.t, x.host, x.post, x.sends_done, x.sends_start, x.unit_done, x.checked, x.pass_start}) {
      // "Not yet" values and times before the last cut (left from an earlier unit, pass or
      // send, read again only after they are set anew) are shape; the rest relative times.
      const bool old = v != 0 && v != kNever && v - t < -p;
      st << (v == 0 || v == kNever ? v : old ? 2 : 1);
      times.push_back(v == 0 || v == kNever || old ? 0 : v - t);
    }
    for (SimTime v : {x.pass_compute, x.pass_dp, x.checked_compute, x.carry}) times.push_back(v);
    last.pass[i] = x.pass;
    last.hook[i] = x.hook;
  }
  for (size_t k = 0; k < streams.size(); ++k) {
    const DpStream& ds = streams[k];
    for (size_t l = 0; l < 2; ++l) {
      const DpLane& lane = ds.lanes[l];
      const bool more = lane.next < static_cast<int32_t>(lane.ops.size());
      st << (lane.next - last.next[2 * k + l]) << lane.busy << (ds.since[l] == kNever)
         << (more ? ds.posts[static_cast<size_t>(lane.ops[static_cast<size_t>(lane.next)])] : -1);
      times.push_back(ds.since[l] == kNever ? 0 : ds.since[l] - t);
      last.next[2 * k + l] = lane.next;
    }
    st << ds.future_posts << static_cast<int64_t>(ds.waiters.size());
  }
  // Pending events: their shapes (in any order) and their times, sorted.
  uint64_t pending = 0;
  const size_t first_pending = times.size();
  for (const Event& e : queue.pending()) {
    if (stale(e)) continue;
    pending += event_shape(e);
    times.push_back(e.time - t);
  }
  std::sort(times.begin() + static_cast<std::ptrdiff_t>(first_pending), times.end());
  for_each_accumulator([&](int64_t& v) { cut.ints.push_back(v); });
  for (int32_t c = 0; c < layouts.num_classes(); ++c) {
    cut.ints.push_back(comm.net.busy_time(c, now));
    cut.reals.push_back(comm.net.carried_bytes(c));
  }
  cut.ints.push_back(comm.net.solves());
  steady.close_cut(t, st.h, pending, m);
}

void Simulator::Impl::steady_apply() {
  if (!steady.accepted()) return;
  const int64_t g = steady.periods();
  const std::vector<int64_t>& d_ints = steady.int_increments();
  size_t k = 0;
  for_each_accumulator([&](int64_t& v) { v += g * d_ints[k++]; });
  for (size_t c = 0; c < extra_busy.size(); ++c) {
    extra_busy[c] = g * d_ints[k++];
    extra_bytes[c] = static_cast<double>(g) * steady.real_increments()[c];
  }
  extra_solves = g * d_ints[k];
  for (Inst& x : inst) x.end += g * steady.period();
  step_end += g * steady.period();
}

}  // namespace rapid::des
