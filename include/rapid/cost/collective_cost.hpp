// Time of a collective or point-to-point transfer on a placed process group: alpha-beta
// model (Hockney 1994; Thakur, Rabenseifner & Gropp 2005) with the ring algorithm's
// per-rank traffic as defined by nccl-tests (busbw = algbw * 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather and reduce-scatter), hierarchical when the group spans nodes:
// NVLink inside a node, the scale-out NICs between nodes (Jeaugey, NCCL, GTC 2020).
#pragma once

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/workload/op.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

class CollectiveCost {
 public:
  CollectiveCost(const HardwareSpec& hw, const NetworkSpec& net);

  /// Seconds for `kind` on buffer size `bytes` (nccl-tests convention: all-reduce buffer,
  /// all-gather output, reduce-scatter input, all-to-all send buffer, send/recv message)
  /// over a group placed as `g`. A group of one rank costs 0.
  double time(CollectiveKind kind, double bytes, const GroupShape& g) const;

  /// Per-GPU bandwidths (B/s, achievable) of the two tiers.
  double nvlink_Bps() const { return nvlink_Bps_; }
  double network_Bps(int64_t nodes) const;

 private:
  double nvlink_Bps_;    // achievable NVLink per GPU per direction
  double nvlink_hop_s_;  // latency of one NVLink/NVSwitch step
  double nic_Bps_;       // achievable scale-out bandwidth per GPU per direction
  double net_hop_s_;     // latency of one step through the network (NIC, leaf, spine)
  double launch_s_;      // start-up of one collective call
  int64_t nodes_per_leaf_;
  double oversubscription_;
};

}  // namespace rapid
