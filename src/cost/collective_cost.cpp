// Collective costs as NCCL runs them; docs/collectives.md derives each formula. Notation:
// n ranks, l per node, N nodes; S the nccl-tests buffer size; B_nv, B_net the achievable
// per-GPU bandwidths; a_nv, a_net the per-step latencies; L the start-up of one call;
// k_nv, k_net the ring pipeline bubbles.
#include "rapid/cost/collective_cost.hpp"

#include <algorithm>
#include <cmath>

namespace rapid {

const char* algorithm_name(CollectiveAlgorithm a) {
  static const char* names[] = {"none", "ring", "tree", "pairwise", "p2p"};
  return names[static_cast<int>(a)];
}

CollectiveCost::CollectiveCost(const HardwareSpec& hw, const NetworkSpec& net)
    : scale_up_(net.scale_up),
      gpus_per_node_(net.gpus_per_node),
      nvlink_Bps_(
          (net.nvlink_bandwidth_Bps > 0 ? net.nvlink_bandwidth_Bps : hw.nvlink_bandwidth_Bps) *
          hw.nvlink_efficiency),
      nic_Bps_(net.nic_bandwidth_per_gpu_Bps() * net.network_efficiency),
      nv_step_s_(net.nvlink_step_latency_s),
      net_step_s_(net.network_step_latency_s),
      // NCCL's NET step latency is measured inside one leaf (NIC-leaf-NIC); across the
      // spine a step crosses two more links (leaf-spine, spine-leaf).
      spine_extra_s_(2.0 * net.link_latency_s),
      launch_s_(net.collective_latency_s),
      nv_bubble_(net.nvlink_ring_bubble),
      net_bubble_(net.network_ring_bubble),
      nodes_per_leaf_(net.nodes_per_leaf),
      oversubscription_(net.oversubscription) {}

double CollectiveCost::scale_up_Bps(int64_t members) const {
  return nvlink_Bps_ * scale_up_share(scale_up_, gpus_per_node_, members);
}

double CollectiveCost::network_Bps(int64_t nodes) const {
  // A group spanning several leaves crosses the spine, where a leaf's uplinks carry
  // 1/oversubscription of its downlink bandwidth.
  return nodes > nodes_per_leaf_ ? nic_Bps_ / oversubscription_ : nic_Bps_;
}

double CollectiveCost::network_step_s(int64_t nodes) const {
  return nodes > nodes_per_leaf_ ? net_step_s_ + spine_extra_s_ : net_step_s_;
}

// Ring with `passes` = 2 (all-reduce: reduce-scatter then all-gather) or 1. Each pass is
// n-1 steps; every rank sends (n-1)/n S per pass (Thakur et al. 2005, sec. 4). NCCL lays
// the ring out node by node, so of the n hops of one ring N cross nodes (through a NIC)
// and n-N stay on NVLink; the channels rotate which GPU is the node's exit, so every GPU
// sends 1/l of its traffic through its NIC and (l-1)/l over NVLink, and the two tiers run
// pipelined: the slower sets the rate. NCCL moves the buffer in loops of one chunk per
// step; a loop of s steps takes (s + k) chunk times, k the pipeline bubble.
CollectivePlan CollectiveCost::ring(double passes, double bytes, const GroupShape& g) const {
  const double n = static_cast<double>(g.size);
  const double l = static_cast<double>(g.per_node);
  const double N = static_cast<double>(g.nodes);
  const double steps = passes * (n - 1.0);
  const double net_steps = g.nodes > 1 ? passes * (N - 1.0) : 0.0;
  CollectivePlan p;
  p.algorithm = CollectiveAlgorithm::Ring;
  p.latency_s = launch_s_ + (steps - net_steps) * nv_step_s_ + net_steps * network_step_s(g.nodes);
  p.net_steps = net_steps;
  p.crosses_spine = g.nodes > nodes_per_leaf_;
  const double sent = passes * (n - 1.0) / n * bytes;  // per GPU
  if (g.nodes <= 1) {
    p.tiers[p.num_tiers++] = {FlowPattern::IntraRing, false, sent * (steps + nv_bubble_) / steps,
                              1.0, scale_up_Bps(g.per_node)};
    return p;
  }
  if (g.per_node > 1)
    p.tiers[p.num_tiers++] = {FlowPattern::IntraRing, false,
                              (l - 1.0) / l * sent * (steps + nv_bubble_) / steps, 1.0,
                              scale_up_Bps(g.per_node)};
  p.tiers[p.num_tiers++] = {FlowPattern::InterRing, true, sent / l * (steps + net_bubble_) / steps,
                            1.0, network_Bps(g.nodes)};
  return p;
}

// Double binary tree over the nodes, a chain over the l GPUs of each node, both trees
// carrying S/2 and reduce and broadcast pipelined (NCCL 2.4 blog; Sanders et al. 2009).
// Per direction, a middle GPU of the chain sends 2S over NVLink (S when l = 2); a node
// sends S through its NICs when N = 2 (root of one tree, the only child in the other)
// and 2S when N > 2 (inner node of one tree: S/2 up, 2 x S/2 down; leaf of the other:
// S/2 up). Latency as NCCL's tuning model: 2 ((l-1) a_nv + log2(N) a_net). As flows: the
// chain's links carry one flow of S each way (two leave a middle GPU), and each GPU sends
// its node's share node_out / l through its NIC (the DES lays it out as a node ring).
CollectivePlan CollectiveCost::tree(double bytes, const GroupShape& g) const {
  const double l = static_cast<double>(g.per_node);
  const double depth = std::ceil(std::log2(static_cast<double>(g.nodes)));
  CollectivePlan p;
  p.algorithm = CollectiveAlgorithm::Tree;
  p.latency_s = launch_s_ + 2.0 * ((l - 1.0) * nv_step_s_ + depth * network_step_s(g.nodes));
  p.net_steps = 2.0 * depth;
  p.crosses_spine = g.nodes > nodes_per_leaf_;
  if (g.per_node >= 2)
    p.tiers[p.num_tiers++] = {FlowPattern::IntraChain, false, bytes, g.per_node >= 3 ? 2.0 : 1.0,
                              scale_up_Bps(g.per_node)};
  const double node_out = g.nodes == 2 ? bytes : 2.0 * bytes;
  p.tiers[p.num_tiers++] = {FlowPattern::InterRing, true, node_out / l, 1.0, network_Bps(g.nodes)};
  return p;
}

CollectivePlan CollectiveCost::plan(CollectiveKind kind, double bytes, const GroupShape& g) const {
  if (g.size <= 1 || kind == CollectiveKind::None) return {};
  const double n = static_cast<double>(g.size);
  const double l = static_cast<double>(g.per_node);
  switch (kind) {
    case CollectiveKind::AllReduce: {
      CollectivePlan best = ring(2.0, bytes, g);
      // NCCL runs trees between nodes only: inside one node a chain has the ring's step
      // count at half its bandwidth.
      if (g.nodes > 1) {
        CollectivePlan t = tree(bytes, g);
        if (t.time_s() < best.time_s()) best = t;
      }
      return best;
    }
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
      return ring(1.0, bytes, g);
    case CollectiveKind::AllToAll: {
      // Pairwise exchange: (l-1)/n of the buffer to local peers over NVLink, (n-l)/n
      // through the NICs, the tiers concurrently; one step per peer.
      CollectivePlan p;
      p.algorithm = CollectiveAlgorithm::PairwiseExchange;
      p.latency_s = launch_s_ + (l - 1.0) * nv_step_s_ + (n - l) * network_step_s(g.nodes);
      p.net_steps = n - l;
      p.crosses_spine = g.nodes > nodes_per_leaf_;
      if (g.per_node > 1)
        p.tiers[p.num_tiers++] = {FlowPattern::IntraPairs, false, bytes / n, l - 1.0,
                                  scale_up_Bps(g.per_node)};
      if (g.size > g.per_node)
        p.tiers[p.num_tiers++] = {FlowPattern::InterPairs, true, bytes / n, n - l,
                                  network_Bps(g.nodes)};
      return p;
    }
    case CollectiveKind::SendRecv: {
      // Neighbouring pipeline stages share a node when the group has several ranks per
      // node: one step over NVLink, else one through the NICs.
      const bool intra = g.per_node > 1;
      CollectivePlan p;
      p.algorithm = CollectiveAlgorithm::PointToPoint;
      p.latency_s = launch_s_ + (intra ? nv_step_s_ : network_step_s(g.nodes));
      p.net_steps = intra ? 0.0 : 1.0;
      p.crosses_spine = !intra && g.nodes > nodes_per_leaf_;
      p.tiers[p.num_tiers++] = {FlowPattern::Peer, !intra, bytes, 1.0,
                                intra ? scale_up_Bps(2) : network_Bps(g.nodes)};
      return p;
    }
    case CollectiveKind::None:
      break;
  }
  return {};
}

CollectiveEstimate CollectiveCost::estimate(CollectiveKind kind, double bytes,
                                            const GroupShape& g) const {
  const CollectivePlan p = plan(kind, bytes, g);
  if (p.algorithm == CollectiveAlgorithm::None) return {};
  return {p.time_s(), p.algorithm};
}

double CollectiveCost::busbw_Bps(CollectiveKind kind, double bytes, const GroupShape& g) const {
  if (g.size <= 1 || bytes <= 0 || kind == CollectiveKind::None) return 0.0;
  const double n = static_cast<double>(g.size);
  // nccl-tests doc/PERFORMANCE.md: the factor that makes busbw comparable to link speed.
  double factor = 1.0;
  if (kind == CollectiveKind::AllReduce) factor = 2.0 * (n - 1.0) / n;
  if (kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter ||
      kind == CollectiveKind::AllToAll)
    factor = (n - 1.0) / n;
  return bytes / time(kind, bytes, g) * factor;
}

}  // namespace rapid
