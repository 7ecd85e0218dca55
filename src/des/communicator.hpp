// The DES's communication owner: what is in flight between GPUs. Collectives, pipeline
// transfers and DP ops run as bundles of flows in the max-min network (FlowNetwork) or,
// when nothing shares their links, folded outside it (Folding); their descriptions
// (CommDesc) and flow layouts, the running ops (OpSlots), and the capacity changes of
// timed link faults live here. The stage executor (Simulator::Impl) starts ops with
// start() and handles their kOpDone events; the event queue is shared.
// Internal to src/des; docs/des.md.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "active_op.hpp"
#include "folding.hpp"
#include "rapid/des/comm_layouts.hpp"
#include "rapid/des/event_queue.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/flow_network.hpp"
#include "rapid/workload/op.hpp"
#include "sim_events.hpp"

namespace rapid::des {

/// A communication with its plan and flow layouts.
struct CommDesc {
  const Op* op = nullptr;  ///< the template op (nullptr for p2p and DP ops)
  const char* name = "";
  CollectivePlan plan;
  SimTime latency = 0;  ///< plan latency + per-hop latency beyond the plan's routes
  SimTime alone = 0;    ///< duration when nothing else is on its links
  int ntiers = 0;
  std::array<double, 2> bytes{};
  std::array<int32_t, 2> layout_begin{}, layout_count{};  // into Communicator::desc_layouts
  bool foldable = false;                                  ///< always uncontended
  bool quiet_foldable = false;  ///< uncontended while its stage's DP stream is quiet
  int32_t participants = 1;     ///< instances that must post it before it starts
  /// Timed lossy faults on its links (docs/faults.md): while one is in effect at the
  /// start, each network step waits p x RC timeout more (permanent ones are in `latency`).
  uint64_t timed_loss = 0;
};

class Communicator {
  EventQueue& queue_;
  const CommLayouts& layouts_;

 public:
  Communicator(EventQueue& queue, const CommLayouts& layouts) : queue_(queue), layouts_(layouts) {}

  FlowNetwork net;
  OpSlots ops;                        ///< running ops (kOpDone targets)
  Folding folding{net, queue_, ops};  ///< ops running outside the network (folding.hpp)
  std::vector<CommDesc> descs;
  std::vector<int32_t> desc_layouts;   ///< each desc's tiers' flow layouts (CommLayouts ids)
  uint64_t flows_started = 0;          ///< collectives and transfers started as flows
  std::vector<int32_t> timed_classes;  ///< link classes timed faults change
  const Fabric* topo = nullptr;

  /// Empties everything for a new run over `topo`.
  void clear(const Fabric* topo);

  /// Starts desc's op for `target` at `now`: folded if it can be, else its bundles join the
  /// network. Its kOpDone event follows its last drain by its latency. Returns its slot.
  int32_t start(SimTime now, const OpTarget& target, int32_t desc);
  /// A bundle drained at `now`: the network re-solves; its op is done after its latency
  /// once every bundle has drained.
  void on_drain(SimTime now, int32_t bundle);
  /// In batch mode (FlowNetwork::set_batch), the rates of the arrivals and departures so far
  /// at `now` and their drain events: the owner of the clock calls it before it moves on.
  void flush(SimTime now) {
    net.flush(now);
    push_changed();
  }
  /// A kOpDone or kDrain event superseded since it was scheduled.
  bool stale(const Event& e) const {
    if (e.kind == kOpDone) return ops[e.target].version != static_cast<uint32_t>(e.data);
    return e.kind == kDrain &&
           (!net.active(e.target) || net.version(e.target) != static_cast<uint32_t>(e.data));
  }

  /// Calls f(layout, bytes) for each flow layout of desc d, tier by tier, with the bytes its
  /// tier moves.
  template <class F>
  void for_each_layout(const CommDesc& d, F&& f) const {
    for (size_t t = 0; t < static_cast<size_t>(d.ntiers); ++t)
      for (int32_t k = 0; k < d.layout_count[t]; ++k)
        f(desc_layouts[static_cast<size_t>(d.layout_begin[t] + k)], d.bytes[t]);
  }

  /// Desc d's first flow layout (its first tier's), -1 when it has none, and that layout's
  /// flows per link (0 without one): what the timeline and the rendezvous name it by.
  int32_t first_layout(const CommDesc& d) const {
    return d.ntiers > 0 ? desc_layouts[static_cast<size_t>(d.layout_begin[0])] : -1;
  }
  int32_t flows(const CommDesc& d) const {
    const int32_t l = first_layout(d);
    return l >= 0 ? layouts_.flows(l) : 0;
  }

  /// Seconds of capacity desc d takes on its busiest NVLink and its busiest network link
  /// (bytes a link carries / its capacity, over d's tiers): divided by the op's span, the
  /// utilisation its timeline counters show.
  std::array<double, 2> busiest_link_seconds(const CommDesc& d) const;

  /// The bundles of desc d (each tier's layouts that carry bytes), in the order start()
  /// starts them, into `out`.
  void bundles_of(const CommDesc& d, std::vector<OpBundle>& out) const;

  /// Schedules the capacity changes of timed faults (kOpDone of FaultChangeAt entries).
  void schedule_fault_changes();
  /// A timed fault starts or ends at `now` (the k-th of Fabric::fault_times).
  void on_fault_change(SimTime now, int32_t k);

 private:
  void push_changed();
  /// A folded op still moving on one of `uses` joins the network (FlowNetwork::add_running).
  void meet_folded(SimTime now, std::span<const ResourceUse> uses);
  /// Wait of a collective for RC timeouts of the timed lossy faults in effect at `now`.
  SimTime timed_loss_latency(SimTime now, const CommDesc& d) const;

  std::vector<OpBundle> op_bundles_, unfolding_;  ///< start, meet_folded
};

}  // namespace rapid::des
