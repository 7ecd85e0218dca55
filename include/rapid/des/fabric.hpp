// The cluster as directed links, built lazily for the GPUs a simulation touches
// (docs/des.md "Topologies"):
//  - one NVSwitch per node (NVLink domain of gpus_per_node GPUs): a link GPU -> switch and
//    one switch -> GPU per GPU at the achievable NVLink bandwidth per direction;
//  - scale-out NICs (nics_per_node per node; GPU i uses NIC i * nics / gpus_per_node,
//    GPUDirect RDMA, the PCIe hop not modelled) with a link NIC -> leaf and leaf -> NIC at
//    leaf_bandwidth;
//  - fat_tree: the NICs of nodes_per_leaf nodes share one leaf; rail_optimized: NIC j of
//    each of nodes_per_leaf nodes sits on leaf j of the group (one leaf per rail, NVIDIA
//    DGX SuperPOD reference architectures; a flow to another rail goes over NVLink to the
//    source node's GPU on that rail first, NCCL's PXN); leaves reach the spines through uplinks
//    whose total capacity is the leaf's downlink capacity / oversubscription, one uplink to each of
//    U spines, U = downlinks * leaf_bw / (oversubscription * spine_bw) (rounded, >= 1); a flow
//    between leaves takes the spine chosen by a deterministic hash of (source, destination) GPU
//    (ECMP, RFC 2992 hash-threshold's idea);
//  - torus2d / torus3d: one router per node, NICs to router as to a leaf, router to each
//    grid neighbour over one link per direction; dimension-order routing (x, then y, then
//    z), the shorter way around each ring, ties in the + direction (Dally & Towles 2004,
//    ch. 14).
// Network capacities are achievable ones (the datasheet rate x network_efficiency), as the
// collective model's; latencies are wire latencies (nvlink_latency, link_latency).
//
// Link faults (docs/faults.md) given to reset(): a degraded link's capacity is nominal x
// health x go-back-N goodput (spec/go_back_n.hpp) while the fault is in effect
// (capacity_at()); a failed link carries nothing: a flow between leaves takes another alive
// spine (the hashed or destination-mod-k choice if alive, else that choice modulo the alive
// spines of the pair: only the failed path's flows move, as resilient ECMP hashing and a
// subnet manager's re-route do), and route() reports a flow with no alive path (a GPU's
// only NIC or NVLink port failed, a leaf with all uplinks down).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rapid/spec/link_fault.hpp"
#include "rapid/spec/network_spec.hpp"

namespace rapid::des {

enum class LinkKind : uint8_t {
  GpuToSwitch,  ///< a = GPU
  SwitchToGpu,  ///< a = GPU
  NicToLeaf,    ///< a = NIC (node * nics_per_node + local), b = leaf (torus: node router)
  LeafToNic,    ///< a = NIC, b = leaf
  LeafToSpine,  ///< a = leaf, b = spine
  SpineToLeaf,  ///< a = spine, b = leaf
  TorusHop,     ///< a = node, b = direction (2 * dim, + 1 for the - direction)
  /// Full-mesh scale-up (NetworkSpec::scale_up): the links from GPU a to the other members
  /// of its group in the node, b of them with a (scale_up_share(b) of its bandwidth).
  MeshShare,
};

/// A directed link by what it joins: stable across rebuilds of the fabric, unlike its id.
struct LinkRef {
  LinkKind kind = LinkKind::GpuToSwitch;
  int32_t a = 0, b = 0;
  bool operator==(const LinkRef&) const = default;
};

struct Link {
  double capacity_Bps = 0;  ///< achievable, per direction, at the start of the step (faults in)
  double nominal_Bps = 0;   ///< achievable without faults
  double latency_s = 0;     ///< wire latency
  LinkKind kind = LinkKind::GpuToSwitch;
  int32_t a = 0, b = 0;
  uint64_t faults = 0;  ///< bit f: fault f of reset()'s list applies to the link
  bool failed = false;  ///< a hard failure: no route uses it
  bool network() const {
    return kind != LinkKind::GpuToSwitch && kind != LinkKind::SwitchToGpu &&
           kind != LinkKind::MeshShare;
  }
  LinkRef ref() const { return LinkRef{kind, a, b}; }
};

class Fabric {
 public:
  /// Prepares an empty topology for GPUs 0 .. num_gpus - 1 of `net` (node = gpu /
  /// gpus_per_node). `nvlink_Bps`: achievable NVLink bandwidth per GPU and direction (the
  /// collective model's). Keeps the links already built when called again with the same
  /// network, GPU count and faults. Returns false (and builds nothing) when a torus grid
  /// given by `torus_dims` has fewer positions than the job has nodes.
  /// `faults` (at most kMaxLinkFaults): a fault naming a GPU, leaf or spine the job does not
  /// have applies to nothing; `most_loaded` is the link `most_loaded` faults apply to
  /// (nullptr: they apply to nothing).
  bool reset(const NetworkSpec& net, double nvlink_Bps, int64_t num_gpus,
             std::span<const LinkFault> faults = {}, const LinkRef* most_loaded = nullptr);

  /// Appends the links from GPU `src` to GPU `dst` to `out` (nothing when src == dst).
  /// Creates the links on first use. Deterministic. False when failed links leave no path
  /// (route_failure() says which); `out` then holds a partial route. `mesh_members`: the
  /// members of the flow's group in the node; on a full-mesh scale-up an intra-node flow
  /// also crosses the source's MeshShare link for them (the one rule the closed form uses,
  /// NetworkSpec::scale_up_share; 0: none).
  bool route(int64_t src, int64_t dst, std::vector<int32_t>& out, int64_t mesh_members = 0);
  /// Why the last route() failed: "node 0 nic 3 -> leaf 0 failed".
  const std::string& route_failure() const { return failure_; }

  int64_t node_of(int64_t gpu) const { return gpu / gpus_per_node_; }
  /// Whether the nodes' scale-up is a full mesh (route()'s mesh_members matter).
  bool full_mesh() const { return !mesh_.empty(); }
  int64_t nic_of(int64_t gpu) const;
  /// Leaf (fat tree, rail-optimized) of a GPU's NIC; the node for a torus.
  int64_t leaf_of_nic(int64_t nic) const;
  int32_t num_links() const { return static_cast<int32_t>(links_.size()); }
  const Link& link(int32_t id) const { return links_[static_cast<size_t>(id)]; }
  /// "gpu 12 -> nvswitch 1", "node 3 nic 2 -> leaf 0", "leaf 0 -> spine 5", ...
  std::string link_name(int32_t id) const;
  int64_t spines() const { return spines_; }
  const std::vector<int64_t>& torus_dims() const { return dims_; }

  const std::vector<LinkFault>& faults() const { return p_.faults; }
  /// Faults whose effect changes during the step (not permanent, not a failure).
  uint64_t timed_faults() const { return timed_; }
  /// Times (s, > 0, ascending, distinct) at which a timed fault starts or ends.
  const std::vector<double>& fault_times() const { return times_; }
  /// Capacity of `link` at `t_s` into the step: nominal x the factors of the faults of the
  /// link in effect then.
  double capacity_at(int32_t link, double t_s) const;
  /// Bandwidth factor of fault `f` on link `l`: health x go-back-N goodput.
  double fault_factor(int32_t f, const Link& l) const;
  /// Expected wait for the RC timeout per message crossing a link with fault `f`: p x timeout
  /// (spec/go_back_n.hpp); 0 without loss.
  double loss_delay_s(int32_t f) const;
  /// Per network step of a message crossing links with the faults in `faults`: the
  /// permanent ones' loss_delay_s summed (timed ones left to timed_loss_s).
  double permanent_loss_s(uint64_t faults) const;
  /// The same for the timed faults in `faults` in effect at `t_s` into the step.
  double timed_loss_s(uint64_t faults, double t_s) const;
  /// The faults of a set, described ("nic of gpu 3: health 0.5; ...").
  std::string fault_names(uint64_t mask) const;

 private:
  // The parameters the links are built from (reset() compares them to keep links).
  struct Params {
    Topology topology = Topology::FatTree;
    Routing routing = Routing::Ecmp;
    int64_t gpus_per_node = 8, nics_per_node = 8, nodes_per_leaf = 32, num_gpus = 0;
    double nvlink_Bps = 0, nic_Bps = 0, uplink_Bps = 0, torus_Bps = 0;
    double nvlink_latency_s = 0, link_latency_s = 0;
    ScaleUp scale_up = ScaleUp::NvSwitch;
    std::vector<int64_t> dims;
    std::vector<LinkFault> faults;
    LinkRef most_loaded;
    bool has_most_loaded = false;
    bool operator==(const Params&) const = default;
  };
  // A fault's link(s): kind and ends (b < 0: any).
  struct Target {
    LinkKind kind;
    int64_t a, b;
    int32_t fault;
  };

  int32_t get(std::vector<int32_t>& table, size_t slot, LinkKind kind, int64_t a, int64_t b);
  void route_torus(int64_t src_node, int64_t dst_node, std::vector<int32_t>& out);
  void resolve_faults();
  bool failed_ends(LinkKind kind, int64_t a, int64_t b) const;  // without building it
  int64_t alive_spine(int64_t leaf_s, int64_t leaf_d, int64_t spine, uint64_t pick) const;
  bool fail(int32_t link);

  Params p_;
  int64_t gpus_per_node_ = 8;
  int64_t nodes_ = 0, leaves_ = 0, spines_ = 1;
  std::vector<int64_t> dims_;  // torus grid sizes
  std::vector<Link> links_;
  // Link id per slot, -1 until built.
  std::vector<int32_t> gpu_up_, gpu_down_, nic_up_, nic_down_, leaf_up_, spine_down_, torus_;
  std::vector<int32_t> mesh_;  // full mesh: per GPU and group size (gpus_per_node + 1 slots)
  // Faults.
  std::vector<Target> targets_;
  uint64_t timed_ = 0;
  bool failed_uplinks_ = false;
  std::vector<double> times_;
  std::string failure_;
};

}  // namespace rapid::des
