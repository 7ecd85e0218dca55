// Steady-state extrapolation of a long step from a shorter run (docs/des.md "Steady
// state"): the probe's digests at the period cuts, the accumulators it extrapolates.
#include <algorithm>
#include <cmath>

#include "sim_impl.hpp"
#include "splitmix.hpp"

namespace rapid::des {

namespace {

// An order-dependent digest of one record's fields.
struct Digest {
  uint64_t h = 0;
  Digest& operator<<(int64_t v) {
    h = splitmix64(h ^ static_cast<uint64_t>(v));
    return *this;
  }
};

}  // namespace

int64_t Simulator::Impl::steady_periods(const Workload& w, const SimInputs& in,
                                        const SimOptions& opt, int32_t* delta) {
  // Recorded spans and link capacities that change during the step are not periodic.
  if (!opt.steady_state || opt.timeline || opt.power) return 0;
  if (in.link_faults)
    for (const LinkFault& f : *in.link_faults)
      if (!f.permanent()) return 0;
  const int64_t pp = w.par.pp;
  // Megatron's interleaved schedule cycles through the chunks every pp micro-batches
  // (pipeline_schedule: forward k runs chunk (k mod (pp vpp)) / pp); 1F1B repeats every one.
  const int64_t d = w.par.vpp > 1 ? pp : 1;
  // Kept: warm-up and cool-down (at most pp micro-batches each) and five periods: one to
  // settle, three watched, one spare.
  const int64_t keep = 2 * pp + 5 * d;
  if (w.num_microbatches < keep + d) return 0;
  *delta = static_cast<int32_t>(d);
  return (w.num_microbatches - keep) / d;
}

void Simulator::Impl::steady_begin(int32_t delta, int64_t periods) {
  steady.on = periods > 0;
  steady.accepted = false;
  steady.delta = delta;
  steady.periods = periods;
  steady.equal = steady.cuts = 0;
  steady.hash = steady.last_shape = 0;
  steady.event_times.clear();
  steady.t_ref = steady.period = 0;
  steady.pass.assign(inst.size(), 0);
  steady.hook.assign(inst.size(), 0);
  steady.next.assign(2 * streams.size(), 0);
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
  auto flows = static_cast<int64_t>(flows_started);
  f(flows);
  flows_started = static_cast<uint64_t>(flows);
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
      const int32_t id = e.kind == kDrain ? static_cast<int32_t>(net.tag(e.target)) : e.target;
      const ActiveOp& op = ops[id];
      d << static_cast<int64_t>(op.role()) << op.desc;
      break;
    }
    default:
      break;
  }
  return d.h;
}

void Simulator::Impl::steady_event(const Event& e) {
  if (!steady.on) return;
  steady.hash = splitmix64(steady.hash ^ event_shape(e));  // in processing order
  steady.event_times.push_back(e.time - steady.t_ref);
}

namespace {

// a and b (same length) agree within the tolerance of a period of p ps.
bool close(const std::vector<SimTime>& a, const std::vector<SimTime>& b, SimTime p) {
  if (a.size() != b.size()) return false;
  const double tol = kSteadyTolerance * static_cast<double>(p);
  for (size_t k = 0; k < a.size(); ++k)
    if (std::abs(static_cast<double>(a[k] - b[k])) > tol) return false;
  return true;
}

}  // namespace

void Simulator::Impl::steady_cut(const Inst& s0) {
  const SimTime t = s0.t;
  const int32_t mb0 =
      programs[static_cast<size_t>(s0.stage)].passes[static_cast<size_t>(s0.pass)].mb;
  // The state's shape (exact) and its times relative to the cut (compared within tolerance).
  Digest st;
  const SimTime p = t - steady.t_ref;
  std::vector<SimTime>& times = steady.times;
  times.clear();
  times.push_back(p);
  for (size_t i = 0; i < inst.size(); ++i) {
    const Inst& x = inst[i];
    st << static_cast<int64_t>(x.phase) << static_cast<int64_t>(x.sub)
       << static_cast<int64_t>(x.wait) << x.pos << x.item << x.seg << x.version << x.unit_pending
       << x.sends << x.had_sends << (x.pass - steady.pass[i]) << (x.hook - steady.hook[i]);
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
    steady.pass[i] = x.pass;
    steady.hook[i] = x.hook;
  }
  for (size_t k = 0; k < streams.size(); ++k) {
    const DpStream& ds = streams[k];
    for (size_t l = 0; l < 2; ++l) {
      const DpLane& lane = ds.lanes[l];
      const bool more = lane.next < static_cast<int32_t>(lane.ops.size());
      st << (lane.next - steady.next[2 * k + l]) << lane.busy << (ds.since[l] == kNever)
         << (more ? ds.posts[static_cast<size_t>(lane.ops[static_cast<size_t>(lane.next)])] : -1);
      times.push_back(ds.since[l] == kNever ? 0 : ds.since[l] - t);
      steady.next[2 * k + l] = lane.next;
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
  times.insert(times.end(), steady.event_times.begin(), steady.event_times.end());
  steady.event_times.clear();
  Digest shape;
  shape << static_cast<int64_t>(st.h) << static_cast<int64_t>(steady.hash)
        << static_cast<int64_t>(pending) << static_cast<int64_t>(times.size());

  steady.ints.clear();
  steady.reals.clear();
  for_each_accumulator([&](int64_t& v) { steady.ints.push_back(v); });
  for (int32_t c = 0; c < layouts.num_classes(); ++c) {
    steady.ints.push_back(net.busy_time(c, now));
    steady.reals.push_back(net.carried_bytes(c));
  }
  steady.ints.push_back(net.solves());

  bool same =
      steady.cuts >= 1 && shape.h == steady.last_shape && close(times, steady.prev_times, p);
  bool same_increments = steady.cuts >= 2;
  if (steady.cuts >= 1) {
    const double tol = kSteadyTolerance * static_cast<double>(p);
    for (size_t k = 0; k < steady.ints.size(); ++k) {
      const int64_t inc = steady.ints[k] - steady.prev_ints[k];
      same_increments =
          same_increments && std::abs(static_cast<double>(inc - steady.d_ints[k])) <= tol;
      steady.d_ints[k] = inc;
    }
    for (size_t k = 0; k < steady.reals.size(); ++k) {
      const double inc = steady.reals[k] - steady.prev_reals[k];
      same_increments = same_increments && std::abs(inc - steady.d_reals[k]) <=
                                               kSteadyTolerance * std::abs(inc) + 1e-6;
      steady.d_reals[k] = inc;
    }
  } else {
    steady.d_ints.assign(steady.ints.size(), 0);
    steady.d_reals.assign(steady.reals.size(), 0.0);
  }
  steady.equal = same ? steady.equal + 1 : 0;
  // The last period matched the two before it, and its increments the previous one's.
  if (steady.equal >= 2 && same_increments) {
    steady.accepted = true;
    steady.on = false;
    steady.period = p;
  }
  steady.prev_ints.swap(steady.ints);
  steady.prev_reals.swap(steady.reals);
  steady.prev_times.swap(steady.times);
  steady.last_shape = shape.h;
  steady.t_ref = t;
  steady.hash = 0;
  ++steady.cuts;
  // Each cut left (the run has ceil(m / delta)) can add one matching period: fewer than the
  // two more needed and the run is refused whatever follows (SteadyProbe::refused()).
  const int64_t cuts_left = (m + steady.delta - 1) / steady.delta - steady.cuts;
  if (!steady.accepted && steady.equal + cuts_left < 2) steady.on = false;
}

void Simulator::Impl::steady_apply() {
  if (!steady.accepted) return;
  const int64_t g = steady.periods;
  size_t k = 0;
  for_each_accumulator([&](int64_t& v) { v += g * steady.d_ints[k++]; });
  for (size_t c = 0; c < extra_busy.size(); ++c) {
    extra_busy[c] = g * steady.d_ints[k++];
    extra_bytes[c] = static_cast<double>(g) * steady.d_reals[c];
  }
  extra_solves = g * steady.d_ints[k];
  for (Inst& x : inst) x.end += g * steady.period;
  step_end += g * steady.period;
}

}  // namespace rapid::des
