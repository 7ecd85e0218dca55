// A NetCase through our flow-level network (docs/ns3.md "Our side"): every flow one bundle
// of one member flow on its route's links (FlowNetwork, max-min fair), started when its
// dependencies have completed; a flow completes when its bytes have drained plus its
// route's latency.
#pragma once

#include <vector>

#include "apps/netcheck_case.hpp"
#include "rapid/des/fabric.hpp"

namespace rapid {

/// The per-packet physics the replay applies to a link of line rate C carrying frames of
/// `mtu_bytes` (IP packet) on the wire:
///  - goodput C * payload / wire bytes, payload = MTU - 40 (IPv4 20 + TCP 20, RFC 791/793)
///    - 12 (TCP timestamps option, RFC 7323, on in ns-3 and Linux), wire bytes = MTU + 2
///    (the PPP header ns-3's PointToPointNetDevice adds, RFC 1661);
///  - store-and-forward: a switch sends a frame on once it has received all of it, so the
///    last frame adds its serialization time on every link of the route but the slowest
///    (whose serialization the drain already counts);
///  - non-preemptive frames: a link sends one whole frame at a time and never interrupts it
///    (IEEE 802.3 clause 4, the MAC transmits a frame to its end; InfiniBand Architecture
///    Specification vol. 1, ch. 7: link-layer arbitration between virtual lanes is per
///    packet). A flow whose first frame reaches a link that is transmitting another flow's
///    frame waits for that frame, one frame time, before the two share the link. Processor
///    sharing (max-min) alone lets two flows that meet at the same instant split the link
///    exactly and end together, and flows of a collective whose steps start on their
///    predecessors' ends then stay in lockstep and meet again at every step; with whole
///    frames one of them is always first, gains a frame per meeting and after a few steps
///    of a few frames the two no longer overlap (docs/ns3.md, tree). Against a flow of
///    megabytes one frame is nothing.
struct FramingModel {
  double mtu_bytes = 4096;
  bool enabled = true;  ///< false: links at line rate, no store-and-forward term, no frame hold
  double payload_fraction() const { return enabled ? (mtu_bytes - 52.0) / (mtu_bytes + 2.0) : 1.0; }
  double frame_bytes() const { return enabled ? mtu_bytes + 2.0 : 0.0; }
};

/// Completion time (s) of each flow of `c`, on `fabric` as build_case() left it.
std::vector<double> replay_case(const NetCase& c, const des::Fabric& fabric,
                                const FramingModel& framing);

}  // namespace rapid
