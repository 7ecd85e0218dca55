// Dynamic folding (docs/des.md sec 5 "Dynamic folding"; SimOptions::fold_alone): a
// collective or transfer whose bundles all start alone on their links runs outside the flow
// network. Alone, a bundle moves at the lowest capacity / member flows of its links
// (FlowNetwork::alone_rate(), the rate insert_locally() and solve() give it) until another
// flow arrives there, so its drain is known at its start: its completion is scheduled at once
// (drain + latency), with no drain event and no rate computation, and what it will carry is
// recorded then (FlowNetwork::account_alone()). The first flow about to share one of its
// links puts its still-moving bundles into the network with the bytes they have left and the
// drain times they had (FlowNetwork::add_running()); from there the op is an ordinary one.
// The times are those of the op in the network all along: a bundle alone keeps its rate and
// drain there too, and the joining one has the bytes solve() would have left it.
//
// Folding owns which op is folded on which resource; it acts on the simulator's flow
// network, event queue and running ops, which it is given at construction.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "active_op.hpp"
#include "rapid/des/event_queue.hpp"
#include "rapid/des/flow_network.hpp"

namespace rapid::des {

/// One bundle of an op: the resources it uses and the bytes it carries.
struct OpBundle {
  std::span<const ResourceUse> uses;
  double bytes = 0;
};

class Folding {
 public:
  Folding(FlowNetwork& net, EventQueue& queue, OpSlots& ops)
      : net_(net), queue_(queue), ops_(ops) {}

  /// A run's start: folding `on` or off (off under timed faults, whose capacity changes
  /// would change a folded bundle's rate), over `resources` link classes, nothing folded.
  void reset(bool on, size_t resources);
  bool on() const { return on_; }

  /// Runs op `id` (its bundles `bundles`, in the order it starts them) outside the network
  /// at `now` if each would start alone: no bundle, folded or not, on its resources and no
  /// two of its own on one. Its kOpDone is scheduled. False: nothing done.
  bool try_fold(int32_t id, std::span<const OpBundle> bundles, SimTime now);

  /// The folded op still moving on resource `r` at `now`, or -1.
  int32_t moving_on(int32_t r, SimTime now) const {
    const auto i = static_cast<size_t>(r);
    const int32_t op = op_[i];
    return op >= 0 && until_[i] > now && ops_[op].folded && ops_[op].version == version_[i] ? op
                                                                                            : -1;
  }

  /// Folded op `id` (its bundles `bundles`) joins the network at `now`: the bundles still
  /// moving with the bytes they have left, drain events for them; its kOpDone follows them.
  void unfold(int32_t id, std::span<const OpBundle> bundles, SimTime now);

 private:
  /// Drain of a bundle alone on `uses` from `start`.
  SimTime alone_drain(SimTime start, std::span<const ResourceUse> uses, double bytes) const;

  FlowNetwork& net_;
  EventQueue& queue_;
  OpSlots& ops_;
  bool on_ = false;
  // Per resource: the folded op whose bundle runs there (valid while the op's version is
  // version_ and now < until_), and a mark of the op being tried.
  std::vector<int32_t> op_;
  std::vector<uint32_t> version_;
  std::vector<SimTime> until_;
  std::vector<uint32_t> mark_;
  uint32_t epoch_ = 0;
};

}  // namespace rapid::des
