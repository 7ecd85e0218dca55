#include "folding.hpp"

#include <algorithm>

#include "sim_events.hpp"

namespace rapid::des {

void Folding::reset(bool on, size_t resources) {
  on_ = on;
  op_.assign(resources, -1);
  version_.assign(resources, 0);
  until_.assign(resources, 0);
  mark_.assign(resources, 0);
  epoch_ = 0;
}

SimTime Folding::alone_drain(SimTime start, std::span<const ResourceUse> uses, double bytes) const {
  return start + to_ps_ceil(bytes / net_.alone_rate(uses));  // as insert_locally() computes it
}

bool Folding::try_fold(int32_t id, std::span<const OpBundle> bundles, SimTime now) {
  ++epoch_;
  for (const OpBundle& b : bundles)
    for (const ResourceUse& u : b.uses) {
      const auto r = static_cast<size_t>(u.res);
      if (net_.active_flows(u.res) > 0 || mark_[r] == epoch_ || moving_on(u.res, now) >= 0)
        return false;
      mark_[r] = epoch_;  // no two bundles of the op on one resource
    }
  if (bundles.empty()) return false;
  ActiveOp& op = ops_[id];
  SimTime last = now;
  for (const OpBundle& b : bundles) {
    const SimTime drain = alone_drain(now, b.uses, b.bytes);
    last = std::max(last, drain);
    net_.account_alone(b.uses, b.bytes, now, drain);
    for (const ResourceUse& u : b.uses) {
      const auto r = static_cast<size_t>(u.res);
      op_[r] = id;
      version_[r] = op.version;
      until_[r] = drain;
    }
  }
  op.folded = true;
  op.pending = 0;
  queue_.push(last + op.latency, kOpDone, id, op.version);
  return true;
}

void Folding::unfold(int32_t id, std::span<const OpBundle> bundles, SimTime now) {
  ActiveOp& op = ops_[id];
  int32_t pending = 0;
  SimTime last = now;
  for (const OpBundle& b : bundles) {
    const SimTime drain = alone_drain(op.start, b.uses, b.bytes);
    if (drain <= now) {  // drained already (its drain event would have come first)
      last = std::max(last, drain);
      continue;
    }
    // As solve()'s update of a bundle's bytes at a later arrival.
    const double rate = net_.alone_rate(b.uses);
    const double remaining = std::max(0.0, b.bytes - rate * to_seconds(now - op.start));
    net_.account_alone(b.uses, -remaining, drain, now);  // the network counts the rest
    const int32_t nb =
        net_.add_running(now, b.uses, remaining, rate, drain, static_cast<uint64_t>(id));
    queue_.push(drain, kDrain, nb, net_.version(nb));
    ++pending;
  }
  op.folded = false;
  ++op.version;  // its kOpDone is stale: the drains schedule the new one
  op.pending = pending;
  if (pending == 0) queue_.push(last + op.latency, kOpDone, id, op.version);
}

}  // namespace rapid::des
