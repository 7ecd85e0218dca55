// Collective costs as NCCL runs them; docs/collectives.md derives each formula. Notation:
// n ranks, l per node, N nodes; S the nccl-tests buffer size; B_nv, B_net the achievable
// per-GPU bandwidths; a_nv, a_net the per-step latencies; L the start-up of one call;
// k_nv, k_net the ring pipeline bubbles.
#include "rapid/cost/collective_cost.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace rapid {

namespace {
// Simple first: it wins ties, as the plans before protocols did.
constexpr CollectiveProtocol kProtocols[] = {CollectiveProtocol::Simple, CollectiveProtocol::LL,
                                             CollectiveProtocol::LL128};

// ceil(log2(N)) for N >= 1 nodes: the depth of NCCL's binary trees, in integers.
double tree_depth(int64_t nodes) {
  return static_cast<double>(std::bit_width(static_cast<uint64_t>(nodes - 1)));
}
}  // namespace

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
      oversubscription_(net.oversubscription),
      channels_nvlink_(net.nccl_channels_nvlink),
      channels_network_(net.nccl_channels_network) {
  tabulate_protocols(hw, net);
}

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

// How the protocol stretches a tier: the tier's Simple bandwidth B over what the protocol
// moves on it, min(share x B, channels x per-channel rate, cap) (docs/collectives.md sec
// 6b). Simple's channel runs at its share B / C of the links, so a call on nc < C channels
// is C / nc slower (NCCL's time model: bw / nChannels * nc).
double CollectiveCost::Protocol::stretch(double B, int64_t channels) const {
  if (kind == CollectiveProtocol::Simple)  // a channel's share of the links: C / nc
    return channels >= total_channels
               ? 1.0
               : static_cast<double>(total_channels) / static_cast<double>(channels);
  double rate = costs.link_share * B;
  const double channel =
      costs.per_channel_Bps > 0 ? costs.per_channel_Bps : B / static_cast<double>(total_channels);
  rate = std::min(rate, channel * static_cast<double>(channels));
  if (costs.total_cap_Bps > 0) rate = std::min(rate, costs.total_cap_Bps);
  return B / rate;
}

const CollectiveCost::Protocol& CollectiveCost::tabulated(CollectiveProtocol p, ProtocolAlgorithm a,
                                                          const GroupShape& g) const {
  return protocols_[static_cast<int>(a)][nccl_node_row(g.nodes)][static_cast<int>(p)];
}

// The protocols' costs per algorithm and node row (1, 2, more nodes), made once, and which
// protocols NCCL may pick: the network file's (nccl_protocols) that NCCL enables here.
void CollectiveCost::tabulate_protocols(const HardwareSpec& hw, const NetworkSpec& net) {
  const NcclArch arch = nccl_arch(hw.compute_capability);
  const bool nvlink = net.nvlink_bandwidth_Bps > 0 || hw.nvlink_bandwidth_Bps > 0;
  // The network files' default NIC step, NCCL's hwLat[NET][RING][SIMPLE] (tuning.cc).
  const double nccl_simple_net_step_s = NetworkSpec{}.network_step_latency_s;
  for (int ai = 0; ai < 2; ++ai)
    for (int row = 0; row < 3; ++row)
      for (CollectiveProtocol p : kProtocols) {
        const auto a = static_cast<ProtocolAlgorithm>(ai);
        const int64_t nodes = row + 1;  // 1, 2 or 3 (any count beyond 2 reads the same row)
        Protocol& r = protocols_[ai][row][static_cast<int>(p)];
        r.kind = p;
        r.costs = protocol_costs(p, a, arch, nodes, nvlink,
                                 p == CollectiveProtocol::LL ? net.nvlink_step_latency_ll_s
                                                             : net.nvlink_step_latency_ll128_s);
        r.total_channels = nodes > 1 ? channels_network_ : channels_nvlink_;
        const bool simple = p == CollectiveProtocol::Simple;
        r.nv_step_s = simple ? nv_step_s_ : r.costs.intra_step_s;
        // What the network file's NIC step has beyond NCCL's Simple one (a slower fabric,
        // the timeouts of a lossy link: fault_network.cpp) every protocol's step has too.
        r.net_step_s =
            simple ? net_step_s_
                   : r.costs.net_step_s + std::max(0.0, net_step_s_ - nccl_simple_net_step_s);
      }
  const bool chosen[] = {net.nccl_simple, net.nccl_ll, net.nccl_ll128};  // CollectiveProtocol order
  for (CollectiveProtocol p : kProtocols)
    enabled_[static_cast<int>(p)] =
        chosen[static_cast<int>(p)] && protocol_enabled(p, hw.compute_capability, nvlink);
}

double CollectiveCost::latency_of(ProtocolAlgorithm a, double passes, const GroupShape& g,
                                  const Protocol& pr) const {
  // NCCL's NET step latency is measured inside one leaf; across the spine a step crosses
  // two more links.
  const double net_step = pr.net_step_s + (g.nodes > nodes_per_leaf_ ? spine_extra_s_ : 0.0);
  if (a == ProtocolAlgorithm::Ring) {
    const double steps = passes * (static_cast<double>(g.size) - 1.0);
    const double net_steps = g.nodes > 1 ? passes * (static_cast<double>(g.nodes) - 1.0) : 0.0;
    return launch_s_ + pr.costs.base_offset_s + (steps - net_steps) * pr.nv_step_s +
           net_steps * net_step;
  }
  const double depth = tree_depth(g.nodes);
  return launch_s_ + pr.costs.base_offset_s +
         2.0 * ((static_cast<double>(g.per_node) - 1.0) * pr.nv_step_s + depth * net_step);
}

// Ring with `passes` = 2 (all-reduce: reduce-scatter then all-gather) or 1. Each pass is
// n-1 steps; every rank sends (n-1)/n S per pass (Thakur et al. 2005, sec. 4). NCCL lays
// the ring out node by node, so of the n hops of one ring N cross nodes (through a NIC)
// and n-N stay on NVLink; the channels rotate which GPU is the node's exit, so every GPU
// sends 1/l of its traffic through its NIC and (l-1)/l over NVLink, and the two tiers run
// pipelined: the slower sets the rate. NCCL moves the buffer in loops of one chunk per
// step; a loop of s steps takes (s + k) chunk times, k the pipeline bubble.
CollectivePlan CollectiveCost::ring(double passes, double bytes, const GroupShape& g,
                                    const Protocol& pr, int64_t channels) const {
  const double n = static_cast<double>(g.size);
  const double l = static_cast<double>(g.per_node);
  const double N = static_cast<double>(g.nodes);
  const double steps = passes * (n - 1.0);
  const double net_steps = g.nodes > 1 ? passes * (N - 1.0) : 0.0;
  CollectivePlan p;
  p.algorithm = CollectiveAlgorithm::Ring;
  p.protocol = pr.kind;
  p.latency_s = latency_of(ProtocolAlgorithm::Ring, passes, g, pr);
  p.net_steps = net_steps;
  p.crosses_spine = g.nodes > nodes_per_leaf_;
  const double sent = passes * (n - 1.0) / n * bytes;  // per GPU
  const double B_nv = scale_up_Bps(g.per_node), B_net = network_Bps(g.nodes);
  // The ring's pipeline bubble is the ring's (a loop of chunk transfers), whatever the
  // protocol.
  const double nv_loop = (steps + nv_bubble_) / steps * pr.stretch(B_nv, channels);
  if (g.nodes <= 1) {
    p.tiers[p.num_tiers++] = {FlowPattern::IntraRing, false, sent * nv_loop, 1.0, B_nv};
    return p;
  }
  if (g.per_node > 1)
    p.tiers[p.num_tiers++] = {FlowPattern::IntraRing, false, (l - 1.0) / l * sent * nv_loop, 1.0,
                              B_nv};
  p.tiers[p.num_tiers++] = {FlowPattern::InterRing, true,
                            sent / l * (steps + net_bubble_) / steps * pr.stretch(B_net, channels),
                            1.0, B_net};
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
CollectivePlan CollectiveCost::tree(double bytes, const GroupShape& g, const Protocol& pr,
                                    int64_t channels) const {
  const double l = static_cast<double>(g.per_node);
  const double depth = tree_depth(g.nodes);
  CollectivePlan p;
  p.algorithm = CollectiveAlgorithm::Tree;
  p.protocol = pr.kind;
  p.latency_s = latency_of(ProtocolAlgorithm::Tree, 0.0, g, pr);
  p.net_steps = 2.0 * depth;
  p.crosses_spine = g.nodes > nodes_per_leaf_;
  const double B_nv = scale_up_Bps(g.per_node), B_net = network_Bps(g.nodes);
  if (g.per_node >= 2)
    p.tiers[p.num_tiers++] = {FlowPattern::IntraChain, false, bytes * pr.stretch(B_nv, channels),
                              g.per_node >= 3 ? 2.0 : 1.0, B_nv};
  const double node_out = g.nodes == 2 ? bytes : 2.0 * bytes;
  p.tiers[p.num_tiers++] = {FlowPattern::InterRing, true,
                            node_out / l * pr.stretch(B_net, channels), 1.0, B_net};
  return p;
}

// Flattened: every collective of a sweep passes here; inlining ring() and tree() took it
// from 0.93M to 0.97M points/s on the demo job (rapid_bench BM_DecodeEvaluate).
// NCCL times every enabled (algorithm, protocol) and runs the fastest [TU]. Trees run
// all-reduces between nodes only: inside one node a chain has the ring's step count at half
// its bandwidth.
[[gnu::flatten]] CollectivePlan CollectiveCost::choose(CollectiveKind kind, double bytes,
                                                       const GroupShape& g) const {
  const bool all_reduce = kind == CollectiveKind::AllReduce;
  const double passes = all_reduce ? 2.0 : 1.0;
  // The ring's Simple plan, built in place: the usual winner, and NCCL's fallback when
  // nothing else is enabled (NCCL_PROTO naming only what this machine lacks: "at least set
  // ring algo available" [TU]).
  const Protocol& simple = tabulated(CollectiveProtocol::Simple, ProtocolAlgorithm::Ring, g);
  const int64_t simple_nc = channels_used(CollectiveProtocol::Simple, ProtocolAlgorithm::Ring,
                                          bytes, g.size, simple.total_channels);
  CollectivePlan best = ring(passes, bytes, g, simple, simple_nc);
  const bool simple_on = enabled_[static_cast<int>(CollectiveProtocol::Simple)];
  double best_s = simple_on ? best.time_s() : std::numeric_limits<double>::infinity();
  // A protocol moving at most share x B on a tier cannot beat its latency + Simple's tier
  // time at full channels / share: skipped when that bound is no better than the best so
  // far (exact: the same tiers and bubbles).
  auto full_channels_s = [](const CollectivePlan& c, const Protocol& t, int64_t nc) {
    return (c.time_s() - c.latency_s) / t.stretch(1.0, nc);  // Simple's stretch: C / nc or 1
  };
  for (ProtocolAlgorithm a : {ProtocolAlgorithm::Ring, ProtocolAlgorithm::Tree}) {
    if (a == ProtocolAlgorithm::Tree && (!all_reduce || g.nodes <= 1)) continue;
    double simple_full_s =
        a == ProtocolAlgorithm::Ring && simple_on ? full_channels_s(best, simple, simple_nc) : -1;
    for (CollectiveProtocol proto : kProtocols) {
      if (!enabled_[static_cast<int>(proto)]) continue;
      if (a == ProtocolAlgorithm::Ring && proto == CollectiveProtocol::Simple) continue;  // built
      const Protocol& t = tabulated(proto, a, g);
      if (simple_full_s >= 0 &&
          latency_of(a, passes, g, t) + simple_full_s / t.costs.link_share >= best_s)
        continue;
      const int64_t nc = channels_used(proto, a, bytes, g.size, t.total_channels);
      const CollectivePlan c =
          a == ProtocolAlgorithm::Ring ? ring(passes, bytes, g, t, nc) : tree(bytes, g, t, nc);
      const double time = c.time_s();
      if (proto == CollectiveProtocol::Simple) simple_full_s = full_channels_s(c, t, nc);
      if (time < best_s) {
        best_s = time;
        best = c;
      }
    }
  }
  return best;
}

CollectivePlan CollectiveCost::plan(CollectiveKind kind, double bytes, const GroupShape& g) const {
  if (g.size <= 1 || kind == CollectiveKind::None) return {};
  const double n = static_cast<double>(g.size);
  const double l = static_cast<double>(g.per_node);
  switch (kind) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
      return choose(kind, bytes, g);
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
  return {p.time_s(), p.algorithm, p.protocol};
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
