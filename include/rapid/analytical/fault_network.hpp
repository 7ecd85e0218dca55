// Link faults in the closed form (docs/faults.md "Analytical"): the network a synchronous
// step sees when some links are degraded, failed or lossy.
//
// A ring (or tree) collective moves at the pace of its slowest link, and a synchronous
// training step waits for its slowest collective, so a fault on any link some collective
// crosses slows the tier of every collective of that kind:
//  - a NIC link (either direction) at bandwidth factor f = health x go-back-N goodput
//    (spec/go_back_n.hpp) scales the network tier: leaf_bandwidth x f (the slowest such
//    fault counts); `most_loaded` is taken to be a NIC link (every inter-node collective
//    crosses the NICs);
//  - a leaf's uplinks: with k of its U uplinks failed the rest carry its traffic, a
//    degraded one (factor f) carries its share f times slower; the spine crossing then runs
//    at (U - k) / U x min f of the uplink share: oversubscription grows to
//    max(1, oversubscription x f_nic / f_spine) so that the tier's crossing bandwidth,
//    NIC / oversubscription, is the slower of the faulted NIC and the faulted uplinks;
//  - an NVLink port at factor f scales the NVLink tier (nvlink_bandwidth x f);
//  - loss adds the expected RC timeout per network step, p x 4.096 us x 2^timeout, to
//    network_step_latency;
//  - a failed NIC or NVLink port of a GPU the job uses (one NIC per GPU, GPUDirect RDMA)
//    leaves it unreachable: no_route. So does a leaf with every uplink failed.
// Faults on GPUs, leaves or spines the job does not use change nothing. Timed faults
// (start, duration) are treated as permanent: the closed form has no time axis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rapid/spec/link_fault.hpp"
#include "rapid/spec/network_spec.hpp"

namespace rapid {

struct FaultedNetwork {
  NetworkSpec network;  ///< the input with the tiers scaled (faults cleared)
  /// NVLink tier factor; already applied to network.nvlink_bandwidth_Bps when that was set
  /// (or `gpu_nvlink_Bps` given), else the caller scales the GPU's own NVLink bandwidth.
  double nvlink_factor = 1.0;
  double nic_factor = 1.0;    ///< applied to leaf_bandwidth
  double spine_factor = 1.0;  ///< of the uplink share, folded into oversubscription
  bool no_route = false;
  std::string reason;  ///< why no route ("nic of gpu 17: failed: ...")
};

/// The network of `num_gpus` GPUs on `net` under `faults` (docs/faults.md).
/// `gpu_nvlink_Bps`: the GPU's NVLink bandwidth, used when `net` does not set its own.
FaultedNetwork apply_link_faults(const NetworkSpec& net, const std::vector<LinkFault>& faults,
                                 int64_t num_gpus, double gpu_nvlink_Bps = 0);

}  // namespace rapid
