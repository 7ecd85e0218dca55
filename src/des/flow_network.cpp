#include "rapid/des/flow_network.hpp"

#include <algorithm>
#include <limits>

namespace rapid::des {

void FlowNetwork::clear() {
  res_.clear();
  inc_.clear();
  bundles_.clear();
  free_bundles_.clear();
  for (std::vector<int32_t>& f : free_inc_) f.clear();
  seeds_.clear();
  changed_.clear();
  departed_ = false;
  solves_ = local_updates_ = 0;
}

int32_t FlowNetwork::add_resource(double capacity_Bps) {
  Resource r;
  r.cap = capacity_Bps;
  res_.push_back(r);
  return static_cast<int32_t>(res_.size()) - 1;
}

SimTime FlowNetwork::busy_time(int32_t r, SimTime now) const {
  const Resource& x = res_[static_cast<size_t>(r)];
  return x.busy + (x.active_mult > 0 ? now - x.busy_since : 0);
}

// insert_locally()'s level with no load: (C - 0) / mult, the lowest over the resources.
double FlowNetwork::alone_rate(std::span<const ResourceUse> uses) const {
  double x = std::numeric_limits<double>::infinity();
  for (const ResourceUse& u : uses) x = std::min(x, res_[static_cast<size_t>(u.res)].cap / u.mult);
  return x;
}

void FlowNetwork::account_alone(std::span<const ResourceUse> uses, double bytes, SimTime from,
                                SimTime to) {
  for (const ResourceUse& u : uses) {
    Resource& r = res_[static_cast<size_t>(u.res)];
    r.carried += bytes * u.mult;
    r.busy += to - from;
    r.peak = std::max(r.peak, u.mult);
  }
}

int32_t FlowNetwork::add_running(SimTime now, std::span<const ResourceUse> uses, double remaining,
                                 double rate, SimTime drain, uint64_t tag) {
  const int32_t b = add(now, uses, remaining, tag);
  seeds_.pop_back();  // add() seeded it
  Bundle& x = bundles_[static_cast<size_t>(b)];
  x.rate = x.next_rate = rate;
  x.drain = drain;
  x.fresh = false;
  ++x.version;
  return b;
}

int32_t FlowNetwork::start(SimTime now, std::span<const ResourceUse> uses, double bytes,
                           uint64_t tag) {
  if (!batch_) seeds_.clear();
  const int32_t b = add(now, uses, bytes, tag);
  commit(now);
  return b;
}

void FlowNetwork::commit(SimTime now) {
  changed_.clear();
  if (batch_) return;  // flush() solves
  if (!local_ || !insert_locally(now)) solve(now);
  seeds_.clear();
}

// The changes of one instant solved at once: arrivals alone are inserted locally where they
// can be (the others' rates are then the max-min fair allocation of the network without
// them: no departure since the last flush, or only departures that changed no rate); with a
// departure that freed a saturated link, or a capacity change, the union of the seeds'
// components is re-solved. Rates that held for no time between the changes are never
// computed: the result is the last change's solve, to rounding.
void FlowNetwork::flush(SimTime now) {
  changed_.clear();
  if (!seeds_.empty() && (departed_ || !local_ || !insert_locally(now))) solve(now);
  seeds_.clear();
  departed_ = false;
}

// Where a new bundle meets only bundles bottlenecked elsewhere, max-min fairness leaves
// their rates as they are and gives it what its links have left: each other bundle keeps a
// saturated bottleneck on which it has the largest rate (the characterisation of the
// max-min fair allocation, Bertsekas & Gallager sec. 6.5.2), and so does the new one at its
// tightest link. That needs (a) none of its links saturated now (else some bundle there is
// bottlenecked on it and would give up rate), (b) no other bundle on its tightest links
// faster than its rate x = min over its links of (C - load) / mult. Where both hold, the
// allocation is the one progressive filling would compute (unique), with the other
// bundles' rates and drain events untouched; else the component is solved. Bundles added
// together are inserted one after another (each insertion keeps the allocation max-min).
bool FlowNetwork::insert_locally(SimTime now) {
  changed_.clear();
  for (int32_t s : seeds_) {
    Bundle& b = bundles_[static_cast<size_t>(s)];
    double x = std::numeric_limits<double>::infinity();
    tight_.clear();
    for (int32_t k = 0; k < b.num_inc; ++k) {
      const Incidence& in = inc_[static_cast<size_t>(b.first_inc + k)];
      const Load l = load(in.res, s);
      const double cap = res_[static_cast<size_t>(in.res)].cap;
      if (cap - l.sum <= kSaturated * cap) return false;
      const double level = (cap - l.sum) / in.mult;
      x = std::min(x, level);
      tight_.push_back({level, l.fastest});
    }
    for (const Tight& t : tight_)  // no other bundle faster on a link it saturates
      if (t.level <= x * (1 + kSaturated) && t.fastest > x) return false;
    b.next_rate = x;
    b.rate = x;  // seen by the next insertions; fresh until all are in
  }
  ++solves_;
  ++local_updates_;
  for (int32_t s : seeds_) {
    Bundle& b = bundles_[static_cast<size_t>(s)];
    b.fresh = false;
    b.drain = now + to_ps_ceil(b.remaining / b.rate);
    ++b.version;
    changed_.push_back(s);
  }
  return true;
}

FlowNetwork::Load FlowNetwork::load(int32_t r, int32_t except) const {
  Load l;
  for (int32_t j = res_[static_cast<size_t>(r)].head; j >= 0;
       j = inc_[static_cast<size_t>(j)].next) {
    const Incidence& in = inc_[static_cast<size_t>(j)];
    if (in.bundle == except) continue;
    const double rate = bundles_[static_cast<size_t>(in.bundle)].rate;
    l.sum += rate * in.mult;
    l.fastest = std::max(l.fastest, rate);
  }
  return l;
}

int32_t FlowNetwork::add(SimTime now, std::span<const ResourceUse> uses, double bytes,
                         uint64_t tag) {
  // A finished bundle's slot and an incidence block of the same size are reused (LIFO: the
  // same run reuses the same slots), so the storage is bounded by the most bundles in
  // flight at once. A slot keeps its version: events of its former bundle stay stale.
  int32_t b;
  if (!free_bundles_.empty()) {
    b = free_bundles_.back();
    free_bundles_.pop_back();
  } else {
    b = static_cast<int32_t>(bundles_.size());
    bundles_.emplace_back();
  }
  const size_t n = uses.size();
  if (free_inc_.size() <= n) free_inc_.resize(n + 1);
  int32_t first;
  if (!free_inc_[n].empty()) {
    first = free_inc_[n].back();
    free_inc_[n].pop_back();
  } else {
    first = static_cast<int32_t>(inc_.size());
    inc_.resize(inc_.size() + n);
  }
  Bundle& nb = bundles_[static_cast<size_t>(b)];
  const uint32_t version = nb.version;
  nb = Bundle{};
  nb.version = version;
  nb.bytes = nb.remaining = bytes;
  nb.last = now;
  nb.tag = tag;
  nb.first_inc = first;
  nb.num_inc = static_cast<int32_t>(n);
  nb.active = nb.fresh = true;
  int32_t i = first;
  for (const ResourceUse& u : uses) {
    Resource& r = res_[static_cast<size_t>(u.res)];
    inc_[static_cast<size_t>(i)] = Incidence{b, u.res, u.mult, -1, r.head};
    if (r.head >= 0) inc_[static_cast<size_t>(r.head)].prev = i;
    r.head = i++;
    if (r.active_mult == 0) r.busy_since = now;
    r.active_mult += u.mult;
    r.peak = std::max(r.peak, r.active_mult);
  }
  seeds_.push_back(b);
  return b;
}

void FlowNetwork::finish(SimTime now, int32_t b) {
  Bundle& x = bundles_[static_cast<size_t>(b)];
  if (!batch_) seeds_.clear();
  // Bundles bottlenecked on one of its links gain rate when it leaves; where none of its
  // links is saturated, no bundle is, and every rate stays (see insert_locally()). Not after
  // an unsolved departure (batch mode): the others' rates are not the fair ones yet. Bundles
  // waiting for their first rate (batch mode) have none and load nothing.
  bool saturated = !local_ || departed_;
  for (int32_t k = 0; k < x.num_inc && !saturated; ++k) {
    const int32_t r = inc_[static_cast<size_t>(x.first_inc + k)].res;
    const double cap = res_[static_cast<size_t>(r)].cap;
    saturated = cap - load(r, -1).sum <= kSaturated * cap;
  }
  x.active = false;
  x.remaining = 0;
  for (int32_t k = 0; k < x.num_inc; ++k) {
    const Incidence& in = inc_[static_cast<size_t>(x.first_inc + k)];
    Resource& r = res_[static_cast<size_t>(in.res)];
    if (in.prev >= 0)
      inc_[static_cast<size_t>(in.prev)].next = in.next;
    else
      r.head = in.next;
    if (in.next >= 0) inc_[static_cast<size_t>(in.next)].prev = in.prev;
    r.active_mult -= in.mult;
    r.carried += x.bytes * in.mult;
    if (r.active_mult == 0) r.busy += now - r.busy_since;
    if (saturated)
      for (int32_t j = r.head; j >= 0; j = inc_[static_cast<size_t>(j)].next)
        seeds_.push_back(inc_[static_cast<size_t>(j)].bundle);
  }
  free_bundles_.push_back(b);
  free_inc_[static_cast<size_t>(x.num_inc)].push_back(x.first_inc);
  if (batch_) {  // flush() solves
    departed_ = departed_ || saturated;
    changed_.clear();
    return;
  }
  solve(now);
  seeds_.clear();  // the next add()s seed the next commit() alone
}

void FlowNetwork::set_capacity(SimTime now, int32_t r, double capacity_Bps) {
  Resource& x = res_[static_cast<size_t>(r)];
  x.cap = capacity_Bps;
  if (!batch_) seeds_.clear();
  for (int32_t j = x.head; j >= 0; j = inc_[static_cast<size_t>(j)].next)
    seeds_.push_back(inc_[static_cast<size_t>(j)].bundle);
  departed_ = true;  // not a local change: solved with whatever else is pending
  flush(now);
}

}  // namespace rapid::des
