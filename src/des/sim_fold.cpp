// Dynamic folding (docs/des.md "Dynamic folding"): a collective or transfer whose bundles
// all start alone on their links runs outside the flow network. Alone, a bundle moves at
// the lowest capacity / member flows of its links (FlowNetwork::alone_rate(), the rate
// insert_locally() and solve() give it) until another flow arrives there, so its drain is
// known at its start: its completion is scheduled at once (drain + latency), with no drain
// event and no rate computation, and what it will carry is recorded then
// (FlowNetwork::account_alone()). The first flow about to share one of its links puts its
// still-moving bundles into the network with the bytes they have left and the drain times
// they had (FlowNetwork::add_running()); from there the op is an ordinary one. The times are
// those of the op in the network all along: a bundle alone keeps its rate and drain there
// too, and the joining one has the bytes solve() would have left it.
#include <algorithm>

#include "sim_impl.hpp"

namespace rapid::des {

void Simulator::Impl::fold_reset() {
  // Timed faults change capacities during the step (a folded bundle's rate would change).
  fold_on = opt.fold_alone && timed_classes.empty();
  const auto n = static_cast<size_t>(layouts.num_classes());
  fold_op.assign(n, -1);
  fold_version.assign(n, 0);
  fold_until.assign(n, 0);
  fold_mark.assign(n, 0);
  fold_epoch = 0;
}

bool Simulator::Impl::try_fold(int32_t id) {
  ActiveOp& op = ops[id];
  const CommDesc& d = descs[static_cast<size_t>(op.desc)];
  ++fold_epoch;
  fold_scratch.clear();
  bool alone = true;
  for_each_bundle(d, [&](std::span<const ResourceUse> uses, double bytes) {
    if (!alone) return;
    for (const ResourceUse& u : uses) {
      const auto r = static_cast<size_t>(u.res);
      if (net.active_flows(u.res) > 0 || fold_mark[r] == fold_epoch || fold_moving(r)) {
        alone = false;
        return;
      }
      fold_mark[r] = fold_epoch;  // no two bundles of the op on one resource
    }
    fold_scratch.push_back({uses, bytes});
  });
  if (!alone || fold_scratch.empty()) return false;
  SimTime last = now;
  for (const FoldBundle& f : fold_scratch) {
    const SimTime drain = alone_drain(now, f.uses, f.bytes);
    last = std::max(last, drain);
    net.account_alone(f.uses, f.bytes, now, drain);
    for (const ResourceUse& u : f.uses) {
      const auto r = static_cast<size_t>(u.res);
      fold_op[r] = id;
      fold_version[r] = op.version;
      fold_until[r] = drain;
    }
  }
  op.folded = true;
  op.pending = 0;
  queue.push(last + op.latency, kOpDone, id, op.version);
  return true;
}

void Simulator::Impl::meet_folded(std::span<const ResourceUse> uses) {
  for (const ResourceUse& u : uses) {
    const auto r = static_cast<size_t>(u.res);
    if (fold_moving(r)) unfold(fold_op[r]);
  }
}

void Simulator::Impl::unfold(int32_t id) {
  ActiveOp& op = ops[id];
  const CommDesc& d = descs[static_cast<size_t>(op.desc)];
  int32_t pending = 0;
  SimTime last = now;
  for_each_bundle(d, [&](std::span<const ResourceUse> uses, double bytes) {
    const SimTime drain = alone_drain(op.start, uses, bytes);
    if (drain <= now) {  // drained already (its drain event would have come first)
      last = std::max(last, drain);
      return;
    }
    // As solve()'s update of a bundle's bytes at a later arrival.
    const double rate = net.alone_rate(uses);
    const double remaining = std::max(0.0, bytes - rate * to_seconds(now - op.start));
    net.account_alone(uses, -remaining, drain, now);  // the network counts the rest
    const int32_t b = net.add_running(now, uses, remaining, rate, drain, static_cast<uint64_t>(id));
    queue.push(drain, kDrain, b, net.version(b));
    ++pending;
  });
  op.folded = false;
  ++op.version;  // its kOpDone is stale: the drains schedule the new one
  op.pending = pending;
  if (pending == 0) queue.push(last + op.latency, kOpDone, id, op.version);
}

}  // namespace rapid::des
