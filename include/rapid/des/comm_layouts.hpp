// Where the flows of each communication of a simulated step go (docs/des.md "Layouts",
// "Exact aggregation", "Symmetry").
//
// Placement follows Megatron-LM's rank order: global rank = GPU id = inner + tpcp *
// (replica + dp * stage), inner in [0, tp * cp); a group of shape (size, stride) is the
// members base + i * stride. A *stage instance* is what the simulator executes: one per
// pipeline stage when one replica stands for all (symmetric mode: every layout then holds
// the flows of every replica, so links carry what all replicas send), else one per (stage,
// replica). The TP/CP ranks of an instance run in lock step and are one instance.
//
// A *layout* is the set of member flows (source GPU -> destination GPU, routed on the
// topology) of one tier of one communication, summarized as (link, flows on it). After
// finalize():
//  - links that every layout loads alike (same layouts, same multiplicities, same
//    capacity) are merged into one *class*: one max-min constraint stands for all of them,
//    exactly (their loads are equal at every instant), so a symmetric layout of 256 flows
//    costs the solver a handful of constraints;
//  - a layout used only by the blocking (compute-stream) ops of one instance, on links no
//    other layout uses, can never share a link with a concurrent flow: its ops take their
//    uncontended time, and the simulator folds them into the compute blocks (foldable());
//  - symmetric() tells whether one replica may stand for all (docs/des.md "Replica
//    equivalence"): every layout of traffic inside a replica (TP/CP/EP groups, pipeline
//    transfers) has the same multiset of class sequences for every replica, and every
//    layout whose flows join replicas (DP rings, an EP group spanning replicas) has it for
//    every group copy (each copy being one collective every replica waits for, its hops
//    may cross different spines and leaves: the classes, not the links, must match). With a
//    link fault on any used link the second rule is the first's (per replica). Links of
//    different faults (Link::faults) are never one class, so a degraded link breaks the
//    symmetry of the replicas whose flows cross it (asymmetry() then names the fault).
// A flow that the fabric cannot route (failed links, docs/faults.md) is left out and
// recorded: no_route() and its reason.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rapid/cost/collective_cost.hpp"
#include "rapid/des/fabric.hpp"
#include "rapid/des/flow_network.hpp"

namespace rapid::des {

/// The member flows (src[f] -> dst[f], appended) of `pattern` on a group whose members are
/// `members` in rank order, on `topo`'s nodes: what CommLayouts routes for every group copy,
/// and what a trace replay routes for one collective (trace/replay_network.hpp).
void pattern_flows(const Fabric& topo, FlowPattern pattern, const std::vector<int64_t>& members,
                   std::vector<int64_t>& src, std::vector<int64_t>& dst);

/// Wire latency a communication's routes have beyond its plan's: the plan's latency assumes
/// one NIC-leaf-NIC (or leaf-spine-leaf, `plan.crosses_spine`) route per network step; each
/// network link more on the longest member route (`network_links`) adds `link_latency_s` per
/// step of the critical path (docs/des.md "Latency").
double extra_route_latency_s(const CollectivePlan& plan, int32_t network_links,
                             double link_latency_s);

/// A communication's latency before its bytes move, in seconds: its plan's, the wire latency
/// beyond it (extra_route_latency_s) and, per network step of the critical path, the wait of
/// a lost last packet on its permanent lossy faults (`loss_s`: Fabric::permanent_loss_s;
/// docs/faults.md). Timed faults add theirs when it starts (Fabric::timed_loss_s). The one
/// rule of the DES and the trace replay.
inline double start_latency_s(const CollectivePlan& plan, int32_t network_links,
                              double link_latency_s, double loss_s) {
  return plan.latency_s + extra_route_latency_s(plan, network_links, link_latency_s) +
         plan.net_steps * loss_s;
}

class CommLayouts {
 public:
  /// Starts a point: `pp` stages x `dp` replicas x `tpcp` GPUs on `topo` (which must
  /// outlive the layouts). `one_replica`: one instance per stage stands for all replicas.
  /// `check_symmetry`: keep the routes so finalize() can compare the replicas.
  void reset(Fabric* topo, int64_t tpcp, int64_t dp, int64_t pp, bool one_replica,
             bool check_symmetry);

  int32_t num_instances() const { return static_cast<int32_t>(one_replica_ ? pp_ : pp_ * dp_); }
  int32_t instance(int64_t stage, int64_t replica) const {
    return static_cast<int32_t>(one_replica_ ? stage : stage * dp_ + replica);
  }
  int64_t stage_of(int32_t inst) const { return one_replica_ ? inst : inst / dp_; }
  int64_t replica_of(int32_t inst) const { return one_replica_ ? 0 : inst % dp_; }
  /// Global rank of the first GPU (tp = cp = 0) of an instance's replica and stage.
  int64_t first_gpu(int32_t inst) const {
    return tpcp_ * (replica_of(inst) + dp_ * stage_of(inst));
  }

  /// Layouts of the flows of `pattern` sent by the GPUs of `inst` (all replicas in
  /// symmetric mode) on their groups of shape `g`: one layout, or one per group copy when
  /// `split`. `blocking`: issued on the compute stream (TP/CP/EP ops of the templates).
  /// Appends the ids to `out`; returns false if no flow results (a tier with no peers).
  /// `dp_stage`: the stage whose DP stream issues it (DP/ZeRO traffic), else -1.
  bool collective(const GroupShape& g, FlowPattern pattern, int32_t inst, bool blocking, bool split,
                  std::vector<int32_t>& out, int32_t dp_stage = -1);
  /// Layout of the transfers from every GPU of `inst` to the GPU at the same position of
  /// stage `dst_stage` (same replica). -1 when source and destination coincide.
  int32_t p2p(int32_t inst, int64_t dst_stage);

  /// Merges links into classes, decides foldability and symmetry. Call once, after every
  /// layout of the point was requested.
  void finalize();

  int32_t num_layouts() const { return static_cast<int32_t>(layouts_.size()); }
  /// Class uses of a layout (after finalize()).
  std::span<const ResourceUse> uses(int32_t layout) const;
  bool foldable(int32_t layout) const { return layouts_[static_cast<size_t>(layout)].foldable; }
  /// Foldable while the DP stream of its instance's stage is quiet: its links are shared
  /// only with that stage's DP traffic.
  bool quiet_foldable(int32_t layout) const {
    return layouts_[static_cast<size_t>(layout)].quiet_foldable;
  }
  /// Instances whose GPUs send or receive flows of the layout (sorted).
  std::span<const int32_t> participants(int32_t layout) const;
  /// Most network links on one member flow's route (for per-hop latency beyond the plan's).
  int32_t network_links(int32_t layout) const {
    return layouts_[static_cast<size_t>(layout)].network_links;
  }
  int32_t flows(int32_t layout) const { return layouts_[static_cast<size_t>(layout)].flows; }

  int32_t num_classes() const { return static_cast<int32_t>(class_cap_.size()); }
  double class_capacity(int32_t c) const { return class_cap_[static_cast<size_t>(c)]; }
  /// Links of a class (ascending ids).
  std::span<const int32_t> class_links(int32_t c) const;
  bool symmetric() const { return symmetric_; }
  /// Why the replicas differ ("" when symmetric or not checked).
  const std::string& asymmetry() const { return asymmetry_; }
  /// Some flow has no alive path; the first such flow, with the failed link.
  bool no_route() const { return !no_route_.empty(); }
  const std::string& no_route_reason() const { return no_route_; }

 private:
  struct Layout {
    // Key.
    int64_t size = 0, stride = 0, dst_stage = -1;
    int32_t inst = 0;
    FlowPattern pattern = FlowPattern::Peer;
    bool split = false;
    int32_t copy = 0;                        // which group copy when split
    int32_t base_begin = 0, base_count = 0;  // its group copies' first members in bases_
    // Content.
    int32_t use_begin = 0, use_count = 0;  // in uses_ (links, then classes)
    int32_t part_begin = 0, part_count = 0;
    int32_t path_begin = 0, path_count = 0;  // flows in flow_paths_ (symmetry check)
    int32_t network_links = 0, flows = 0;
    bool joins_replicas = false;  // some flow goes from one replica to another
    int32_t owner = -1;           // the instance of its blocking uses (-1 none, -2 several)
    bool async = false;           // also issued off the compute stream (DP, p2p)
    int32_t dp_stage = -1;        // the stage whose DP stream issues it
    bool foldable = false, quiet_foldable = false;
  };
  struct FlowPath {
    int32_t replica;       // of the source GPU
    int32_t copy;          // index of its group copy in the layout (p2p: the replica)
    int32_t begin, count;  // links in path_links_
  };

  // Flows src[f] -> dst[f], of group copy copy_[f] (filled by the caller).
  int32_t build(Layout key, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                bool blocking);
  // On a full-mesh scale-up: the members of `gpu`'s group (of layout `key`) on its node,
  // the share of its links its flows may use (Fabric::route); 0 otherwise.
  int64_t mesh_members(const Layout& key, int64_t gpu) const;
  // comm_layouts_symmetry.cpp
  void check_symmetry();
  static int32_t group_of(const Layout& l, const FlowPath& fp, bool faulted);
  void find_redundant_links();
  int32_t first_asymmetric_layout(bool faulted, bool skip_redundant, int32_t* group);
  int32_t instance_of_gpu(int64_t gpu) const {
    const int64_t stage = gpu / (tpcp_ * dp_);
    return instance(stage, (gpu / tpcp_) % dp_);
  }

  Fabric* topo_ = nullptr;
  int64_t tpcp_ = 1, dp_ = 1, pp_ = 1;
  bool one_replica_ = true, check_symmetry_ = false, symmetric_ = true;
  std::string asymmetry_, no_route_;
  std::vector<Layout> layouts_;
  std::vector<ResourceUse> uses_;
  std::vector<int32_t> parts_;
  std::vector<FlowPath> flow_paths_;
  std::vector<int32_t> path_links_;
  // Per link: flows of the layout being built; blocking owner and DP stage of its users
  // (-1 none, -2 several); whether other asynchronous traffic uses it.
  std::vector<int32_t> link_count_, link_owner_, link_dp_, touched_;
  std::vector<uint8_t> link_async_;
  // Classes.
  std::vector<int32_t> link_class_, class_link_begin_, class_links_;
  std::vector<double> class_cap_;
  // Scratch.
  std::vector<int64_t> members_, src_, dst_, bases_;
  std::vector<int32_t> copy_;
  // Symmetry check scratch: per link its (bundle, member flows) (CSR), redundant links.
  std::vector<std::pair<int32_t, uint64_t>> sym_pairs_;
  std::vector<int32_t> sym_begin_;
  std::vector<std::pair<uint64_t, int32_t>> sym_bundles_;
  std::vector<uint8_t> redundant_;
  std::vector<int32_t> route_;
  std::vector<uint32_t> gpu_mark_;
  uint32_t mark_epoch_ = 0;
};

}  // namespace rapid::des
