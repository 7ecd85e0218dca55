#include "rapid/cost/collective_cost.hpp"

#include <algorithm>

namespace rapid {

CollectiveCost::CollectiveCost(const HardwareSpec& hw, const NetworkSpec& net)
    : nvlink_Bps_(
          (net.nvlink_bandwidth_Bps > 0 ? net.nvlink_bandwidth_Bps : hw.nvlink_bandwidth_Bps) *
          hw.nvlink_efficiency),
      nvlink_hop_s_(net.nvlink_latency_s),
      nic_Bps_(net.nic_bandwidth_per_gpu_Bps() * net.network_efficiency),
      // A step inside one leaf crosses two links (NIC-leaf, leaf-NIC); across the spine
      // four (time() doubles it for groups spanning leaves).
      net_hop_s_(2.0 * net.link_latency_s),
      launch_s_(net.collective_latency_s),
      nodes_per_leaf_(net.nodes_per_leaf),
      oversubscription_(net.oversubscription) {}

double CollectiveCost::network_Bps(int64_t nodes) const {
  // A group spanning several leaves crosses the spine, where a leaf's uplinks carry
  // 1/oversubscription of its downlink bandwidth.
  return nodes > nodes_per_leaf_ ? nic_Bps_ / oversubscription_ : nic_Bps_;
}

namespace {
// Ring phases per collective: all-reduce = reduce-scatter + all-gather (2 passes).
double passes(CollectiveKind k) {
  return k == CollectiveKind::AllReduce ? 2.0 : 1.0;
}
}  // namespace

double CollectiveCost::time(CollectiveKind kind, double bytes, const GroupShape& g) const {
  const double n = static_cast<double>(g.size);
  if (g.size <= 1 || kind == CollectiveKind::None) return 0.0;
  const double nl = static_cast<double>(g.per_node);
  const double N = static_cast<double>(g.nodes);
  const double net_Bps = network_Bps(g.nodes);
  const double net_hop = g.nodes > nodes_per_leaf_ ? 2.0 * net_hop_s_ : net_hop_s_;

  if (kind == CollectiveKind::SendRecv) {
    // Neighbouring pipeline stages: same node when the group has several ranks per node.
    bool intra = g.per_node > 1;
    return launch_s_ + (intra ? nvlink_hop_s_ + bytes / nvlink_Bps_ : net_hop + bytes / net_Bps);
  }

  if (kind == CollectiveKind::AllToAll) {
    // Each rank sends (n-1)/n of its buffer: (nl-1)/n of it over NVLink, (n-nl)/n over the
    // network; the two tiers run concurrently.
    double t_nv = (nl - 1.0) / n * bytes / nvlink_Bps_;
    double t_net = (n - nl) / n * bytes / net_Bps;
    return launch_s_ + std::max(t_nv, t_net) + (n - 1.0) * (g.nodes > 1 ? net_hop : nvlink_hop_s_);
  }

  const double p = passes(kind);
  // Intra-node ring part (reduce-scatter and/or all-gather among the nl local ranks).
  double t_intra =
      nl > 1.0 ? p * ((nl - 1.0) / nl) * bytes / nvlink_Bps_ + p * (nl - 1.0) * nvlink_hop_s_ : 0.0;
  // Inter-node ring among the N nodes on this rank's 1/nl shard of the buffer.
  double t_inter =
      N > 1.0 ? p * ((N - 1.0) / N) * (bytes / nl) / net_Bps + p * (N - 1.0) * net_hop : 0.0;
  return launch_s_ + t_intra + t_inter;
}

}  // namespace rapid
