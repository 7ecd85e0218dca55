// Time of a collective or point-to-point transfer on a placed process group, as NCCL runs
// it (docs/collectives.md derives every formula):
//  - alpha-beta costs (Hockney 1994) per step, per tier: NVLink inside a node, the NICs
//    between nodes; buffer sizes and bus bandwidth as nccl-tests defines them
//    (doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
//    reduce-scatter and all-to-all, 1 for send/recv);
//  - ring all-reduce / reduce-scatter / all-gather (Thakur, Rabenseifner & Gropp 2005),
//    laid out node by node so each ring enters and leaves a node once per channel through
//    a NIC (Jeaugey, "NCCL 2.0", GTC 2017): the tiers run pipelined, the slower one sets
//    the rate;
//  - double binary tree all-reduce across nodes, a chain inside each node (Sanders, Speck &
//    Traeff 2009; NVIDIA blog "Massively Scale Your Deep Learning Training with NCCL 2.4",
//    2019); NCCL picks the faster algorithm per size, and so does time();
//  - all-to-all as pairwise exchange (Thakur et al. 2005), send/recv as one step;
//  - a size-dependent efficiency: a start-up per call plus NCCL's per-step latency make
//    busbw ramp as busbw_max * S / (S + S_half); a ring pipeline bubble per loop lowers
//    busbw_max for small groups (fitted on nccl-tests curves).
#pragma once

#include <array>
#include <cstdint>

#include "rapid/cost/nccl_protocol.hpp"
#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/workload/op.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

/// The algorithm NCCL would run (the faster one for this size and placement).
enum class CollectiveAlgorithm : uint8_t { None, Ring, Tree, PairwiseExchange, PointToPoint };
const char* algorithm_name(CollectiveAlgorithm a);

/// How the flows of one tier of a collective are laid out over the members of a group. The
/// discrete-event simulator turns each pattern into flows between the actual GPUs
/// (docs/des.md); members are taken in rank order, "position" is a member's index among
/// the group's members on its node, nodes in the order of their first member.
enum class FlowPattern : uint8_t {
  IntraRing,   ///< each member -> the next member on its node (cyclic)
  InterRing,   ///< each member -> the member at its position on the next node (cyclic)
  IntraChain,  ///< each member -> its neighbours in its node's chain, both directions
  IntraPairs,  ///< each member -> every other member on its node
  InterPairs,  ///< each member -> every member on the other nodes
  Peer,        ///< send/recv: each member -> its peer (pipeline: the next stage's GPU at
               ///< its position; inside a group: the next member, a ring)
};

/// One tier of a collective: flows of `pattern`, each carrying `flow_bytes` (the ring
/// bubble included), `flows_per_link` of them leaving each member's link of the tier,
/// which gives `link_Bps` to the group when it has the tier to itself.
struct CollectiveTier {
  FlowPattern pattern = FlowPattern::Peer;
  bool network = false;  ///< through the NICs (true) or over NVLink
  double flow_bytes = 0;
  double flows_per_link = 1;
  double link_Bps = 1;
  /// Seconds to move the tier's bytes at the uncontended rate.
  double time_s() const { return flow_bytes * flows_per_link / link_Bps; }
};

/// A collective as concurrent tiers after a fixed latency: the one decomposition that both
/// CollectiveCost::time() (latency + the slowest tier) and the DES (flows per tier sharing
/// links, docs/des.md) use, so that the two agree on uncontended links by construction.
struct CollectivePlan {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::None;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
  double latency_s = 0;        ///< start-up of the call plus the per-step latencies
  double net_steps = 0;        ///< sequential steps through the network on the critical path
  bool crosses_spine = false;  ///< the latency assumes leaf-spine-leaf routes per step
  int num_tiers = 0;
  std::array<CollectiveTier, 2> tiers{};
  double time_s() const {
    double t = 0;
    for (int i = 0; i < num_tiers; ++i) t = t > tiers[i].time_s() ? t : tiers[i].time_s();
    return latency_s + t;
  }
};

/// One collective's predicted time and the algorithm that gives it.
struct CollectiveEstimate {
  double time_s = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::None;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
};

class CollectiveCost {
 public:
  /// Reads the NVLink bandwidth and efficiency from `hw` (unless `net` overrides the
  /// bandwidth) and everything else from `net`. Holds no reference to either.
  CollectiveCost(const HardwareSpec& hw, const NetworkSpec& net);

  /// Seconds for `kind` on buffer size `bytes` (nccl-tests convention: all-reduce buffer,
  /// all-gather output, reduce-scatter input, all-to-all send buffer, send/recv message)
  /// over a group placed as `g`. A group of one rank costs 0. No allocation; thread-safe.
  double time(CollectiveKind kind, double bytes, const GroupShape& g) const {
    return estimate(kind, bytes, g).time_s;
  }

  /// time() together with the algorithm chosen (ring or tree for all-reduce).
  CollectiveEstimate estimate(CollectiveKind kind, double bytes, const GroupShape& g) const;

  /// The algorithm's decomposition into latency and concurrent tiers; plan().time_s() ==
  /// time(). An empty plan (no tiers, zero latency) for a group of one rank.
  CollectivePlan plan(CollectiveKind kind, double bytes, const GroupShape& g) const;

  /// Bus bandwidth in B/s as nccl-tests reports it: algbw = bytes / time() times
  /// 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter, all-to-all) or 1
  /// (send/recv). 0 for a group of one rank or an empty buffer.
  double busbw_Bps(CollectiveKind kind, double bytes, const GroupShape& g) const;

  /// Achievable per-GPU, per-direction bandwidths (B/s) of the two tiers.
  double nvlink_Bps() const { return nvlink_Bps_; }
  double network_Bps(int64_t nodes) const;

 private:
  /// A protocol as one call of a given size and group runs it: its costs, the channels it
  /// runs on, its step latencies and ring bubbles.
  struct Protocol {
    CollectiveProtocol kind = CollectiveProtocol::Simple;
    ProtocolCosts costs;
    int64_t total_channels = 1;            ///< the communicator's channels
    double nv_step_s = 0, net_step_s = 0;  ///< per step over NVLink; through the NICs, one leaf
    /// Factor on a tier's bytes: its Simple bandwidth over the protocol's rate on it, the
    /// call running on `channels` channels.
    double stretch(double tier_Bps, int64_t channels) const;
  };
  void tabulate_protocols(const HardwareSpec& hw, const NetworkSpec& net);
  /// plan() of an all-reduce, all-gather or reduce-scatter: the fastest enabled algorithm
  /// and protocol.
  CollectivePlan choose(CollectiveKind kind, double bytes, const GroupShape& g) const;
  /// The table's entry for `p` on algorithm `a` over groups of `g`'s node row (no spine).
  const Protocol& tabulated(CollectiveProtocol p, ProtocolAlgorithm a, const GroupShape& g) const;
  /// The start-up plus per-step latencies of algorithm `a` (`passes` for a ring).
  double latency_of(ProtocolAlgorithm a, double passes, const GroupShape& g,
                    const Protocol& p) const;
  CollectivePlan ring(double passes, double bytes, const GroupShape& g, const Protocol& p,
                      int64_t channels) const;
  CollectivePlan tree(double bytes, const GroupShape& g, const Protocol& p, int64_t channels) const;
  double network_step_s(int64_t nodes) const;
  /// The NVLink tier's bandwidth for `members` ranks of one node: nvlink_Bps_ times the
  /// network's scale_up_share (a full mesh gives a small group only its members' links).
  double scale_up_Bps(int64_t members) const;

  ScaleUp scale_up_;  // the nodes' wiring and size (scale_up_share)
  int64_t gpus_per_node_;
  double nvlink_Bps_;     // achievable NVLink per GPU per direction
  double nic_Bps_;        // achievable scale-out bandwidth per GPU per direction
  double nv_step_s_;      // NCCL step latency over NVLink (Simple)
  double net_step_s_;     // NCCL step latency through the NICs, inside one leaf
  double spine_extra_s_;  // two more links per step when a group spans leaves
  double launch_s_;       // start-up of one collective call
  double nv_bubble_;      // ring pipeline bubble per loop (chunk transfers), NVLink-bound
  double net_bubble_;     // the same, NIC-bound
  int64_t nodes_per_leaf_;
  double oversubscription_;
  int64_t channels_nvlink_;  // NCCL channels of a call inside one node / across nodes
  int64_t channels_network_;
  // Per algorithm (ring, tree), node row (1, 2, more) and protocol, what does not depend
  // on the call's size; and which protocols NCCL may pick here.
  Protocol protocols_[2][3][3];
  bool enabled_[3] = {};
};

}  // namespace rapid
