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
///    (whose serialization the drain already counts).
struct FramingModel {
  double mtu_bytes = 4096;
  bool enabled = true;  ///< false: links at line rate, no store-and-forward term
  double payload_fraction() const { return enabled ? (mtu_bytes - 52.0) / (mtu_bytes + 2.0) : 1.0; }
  double frame_bytes() const { return enabled ? mtu_bytes + 2.0 : 0.0; }
};

/// Completion time (s) of each flow of `c`, on `fabric` as build_case() left it.
std::vector<double> replay_case(const NetCase& c, const des::Fabric& fabric,
                                const FramingModel& framing);

}  // namespace rapid
