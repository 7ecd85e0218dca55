#include "steady_probe.hpp"

#include <cmath>

namespace rapid::des {

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

int64_t SteadyProbe::periods_to_skip(const Workload& w, const SimInputs& in, const SimOptions& opt,
                                     int32_t* delta) {
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

void SteadyProbe::begin(int32_t delta, int64_t periods, size_t instances, size_t lanes) {
  on_ = periods > 0;
  accepted_ = false;
  delta_ = delta;
  periods_ = periods;
  equal_ = cuts_ = 0;
  hash_ = last_shape_ = 0;
  event_times_.clear();
  period_ = 0;
  last_.t = 0;
  last_.pass.assign(instances, 0);
  last_.hook.assign(instances, 0);
  last_.next.assign(lanes, 0);
}

void SteadyProbe::close_cut(SimTime t, uint64_t state, uint64_t pending, int64_t microbatches) {
  const SimTime p = t - last_.t;
  std::vector<SimTime>& times = cut_.times;
  times.insert(times.end(), event_times_.begin(), event_times_.end());
  event_times_.clear();
  Digest shape;
  shape << static_cast<int64_t>(state) << static_cast<int64_t>(hash_)
        << static_cast<int64_t>(pending) << static_cast<int64_t>(times.size());

  const bool same = cuts_ >= 1 && shape.h == last_shape_ && close(times, prev_.times, p);
  bool same_increments = cuts_ >= 2;
  if (cuts_ >= 1) {
    const double tol = kSteadyTolerance * static_cast<double>(p);
    for (size_t k = 0; k < cut_.ints.size(); ++k) {
      const int64_t inc = cut_.ints[k] - prev_.ints[k];
      same_increments = same_increments && std::abs(static_cast<double>(inc - d_ints_[k])) <= tol;
      d_ints_[k] = inc;
    }
    for (size_t k = 0; k < cut_.reals.size(); ++k) {
      const double inc = cut_.reals[k] - prev_.reals[k];
      same_increments =
          same_increments && std::abs(inc - d_reals_[k]) <= kSteadyTolerance * std::abs(inc) + 1e-6;
      d_reals_[k] = inc;
    }
  } else {
    d_ints_.assign(cut_.ints.size(), 0);
    d_reals_.assign(cut_.reals.size(), 0.0);
  }
  equal_ = same ? equal_ + 1 : 0;
  // The last period matched the two before it, and its increments the previous one's.
  if (equal_ >= 2 && same_increments) {
    accepted_ = true;
    on_ = false;
    period_ = p;
  }
  std::swap(prev_, cut_);
  last_shape_ = shape.h;
  last_.t = t;
  hash_ = 0;
  ++cuts_;
  // Each cut left (the run has ceil(m / delta)) can add one matching period: fewer than the
  // two more needed and the run is refused whatever follows (refused()).
  const int64_t cuts_left = (microbatches + delta_ - 1) / delta_ - cuts_;
  if (!accepted_ && equal_ + cuts_left < 2) on_ = false;
}

}  // namespace rapid::des
