// The system input, part 2: how GPUs are wired (configs/networks/*.yaml or an inline
// `network:` in a job). The form operators write loads as is:
//   network: {topology: fat_tree, spine_bandwidth: 400Gbps, leaf_bandwidth: 200Gbps,
//             link_latency: 0.5us}
// with the defaults below for everything else (8 GPUs per node on NVSwitch, one NIC per
// GPU, non-blocking unless the leaf/spine numbers say otherwise).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rapid/spec/link_fault.hpp"

namespace rapid {

enum class Topology : uint8_t { FatTree, RailOptimized, Torus2D, Torus3D };

/// How a leaf picks the spine a flow takes (DES only): ECMP hashing of the (source,
/// destination) pair, as Ethernet/RoCE fabrics do, or destination-mod-k, as InfiniBand
/// subnet managers route fat trees (OpenSM ftree/updn: the spine is fixed by the
/// destination's index; contention-free for shift permutations such as ring neighbours,
/// Zahavi et al., "Optimized InfiniBand fat-tree routing for shift all-to-all
/// communication patterns", CCPE 2010).
enum class Routing : uint8_t { Ecmp, DestinationModK };
const char* topology_name(Topology t);

/// How the GPUs of one node (scale-up domain) are wired: through NVSwitch chips, every GPU
/// at its full NVLink bandwidth to any peer (DGX/HGX, NVL72), or as a full mesh with one
/// link per pair (AMD MI300X's Infinity Fabric: 7 links to the 7 peers of an 8-GPU
/// platform, AMD CDNA 3 white paper).
enum class ScaleUp : uint8_t { NvSwitch, FullMesh };

/// The share of a GPU's scale-up bandwidth (all its links) that a collective among
/// `members` GPUs of one node can use: 1 through NVSwitch; on a full mesh only the links
/// to the other members, min(members - 1, gpus_per_node - 1) / (gpus_per_node - 1) (TP2
/// on an 8-GPU MI300X mesh: 1 of 7 links; TP8: all 7). One rule for both fidelities
/// (docs/collectives.md "Full mesh").
double scale_up_share(ScaleUp kind, int64_t gpus_per_node, int64_t members);

struct NetworkSpec {
  std::string name;
  Topology topology = Topology::FatTree;
  Routing routing = Routing::Ecmp;
  int64_t gpus_per_node = 8;             ///< size of one NVSwitch (NVLink) domain
  ScaleUp scale_up = ScaleUp::NvSwitch;  ///< `scale_up: nvswitch | full_mesh`
  double nvlink_bandwidth_Bps = 0;       ///< per GPU per direction; 0 = the GPU's own figure
  double nvlink_latency_s = 0;           ///< one hop through NVSwitch (wire; collectives use
                                         ///< nvlink_step_latency_s, NCCL's per-step cost)
  int64_t nics_per_node = 8;             ///< scale-out NICs per node (default one per GPU)
  double leaf_bandwidth_Bps = 0;         ///< NIC <-> leaf switch link, per direction
  double spine_bandwidth_Bps = 0;        ///< leaf <-> spine link, per direction
  int64_t nodes_per_leaf = 32;           ///< nodes under one leaf (per rail when rail-optimized)
  double oversubscription = 1.0;         ///< leaf down/up bandwidth ratio, >= 1
  double link_latency_s = 0;             ///< per network link (NIC-leaf, leaf-spine)
  double collective_latency_s = 0;       ///< software start-up of one collective call (NCCL)
  double network_efficiency = 0.9;       ///< achievable fraction of NIC bandwidth (protocol)

  // NCCL efficiency curve per tier (docs/collectives.md). Busbw ramps with the message size
  // S as busbw(S) = busbw_max * S / (S + S_half), S_half = algbw_max * (start-up + steps *
  // step latency); busbw_max = link bandwidth * efficiency * steps / (steps + ring bubble).
  double nvlink_step_latency_s = 3.4e-6;  ///< one ring/tree step over NVLink (NCCL tuning.cc)
  double network_step_latency_s = 14e-6;  ///< one step through the NICs (NCCL tuning.cc)
  /// One ring step over NVLink of the LL and LL128 protocols: hwLat[NVLINK][RING] {0.6, 1.9}
  /// us (NCCL 2.20.3-2.28 tuning.cc; docs/collectives.md sec 6b).
  double nvlink_step_latency_ll_s = 0.6e-6;
  double nvlink_step_latency_ll128_s = 1.9e-6;
  /// The protocols NCCL may pick (`nccl_protocols: [ll, ll128, simple]`, NCCL_PROTO): all
  /// three by default, as NCCL enables them (LL128 only where NCCL does).
  bool nccl_ll = true;
  bool nccl_ll128 = true;
  bool nccl_simple = true;
  double nvlink_ring_bubble = 0.5;   ///< ring pipeline bubble per loop, in chunk transfers
  double network_ring_bubble = 0.0;  ///< same for rings whose bottleneck is the NICs

  // Torus topologies (torus2d, torus3d; used by the DES only): nodes on a wrap-around grid
  // of these sizes (empty: the job's nodes factored as evenly as possible), each node with
  // one link per direction to each neighbour of torus_link_bandwidth (0: the node's NIC
  // bandwidth split over its 2 x dims links).
  std::vector<int64_t> torus_dims;
  double torus_link_bandwidth_Bps = 0;

  // What NCCL's kernels take from the GPU they run on (docs/model.md "Interference"): one
  // thread block on one SM per channel (NCCL src/enqueue.cc), with the channel counts NCCL's
  // topology search settles on (src/graph/search.cc, connect.cc: ring channels doubled for
  // NVLink; 24 on a DGX A100/H100 node, 16 across H100 nodes in NCCL's logs), and local
  // HBM traffic of 2 bytes per byte sent (stored, then read back: NCCL maintainers,
  // NVIDIA/nccl issue 1428).
  int64_t nccl_channels_nvlink = 24;
  int64_t nccl_channels_network = 16;
  double nccl_hbm_bytes_per_byte = 2.0;

  /// Link faults of the cluster itself (`faults:`, docs/faults.md): a flaky cable or a dead
  /// spine port every job on it sees. The DES applies them together with a scenario's
  /// `link_faults` (DesEvaluator passes the union to the simulator).
  std::vector<LinkFault> faults;

  bool operator==(const NetworkSpec&) const = default;
  /// Scale-out bandwidth available to one GPU, per direction:
  /// leaf_bandwidth * nics_per_node / gpus_per_node.
  double nic_bandwidth_per_gpu_Bps() const;
  /// scale_up_share() of this network's nodes.
  double scale_up_share(int64_t members) const {
    return rapid::scale_up_share(scale_up, gpus_per_node, members);
  }

  /// A leaf's uplinks to the spines of a fat tree or rail-optimized fabric (docs/des.md
  /// "Topologies"): the leaf's downlink capacity (nodes_per_leaf NICs, or one per node on a
  /// rail's leaf) / oversubscription, in links of about spine_bandwidth each (at least one),
  /// each at that total / count x network_efficiency. The DES's fabric and the closed
  /// form's faulted network both build on it.
  struct LeafUplinks {
    int64_t count = 1;
    double link_Bps = 0;
  };
  LeafUplinks leaf_uplinks() const;
  /// Leaves of a fat tree or rail-optimized fabric over `nodes` nodes: one per
  /// nodes_per_leaf nodes, times nics_per_node rails on a rail-optimized one.
  int64_t leaves(int64_t nodes) const;
};

/// Reads a network mapping. Throws InputError on a missing/invalid/unknown key.
/// `oversubscription` may be given, or it is derived as max(1, leaf_bw / spine_bw) for a
/// leaf with as many uplinks as downlinks (the usual two-tier fat tree).
NetworkSpec parse_network(const YAML::Node& node, const std::string& file);

}  // namespace rapid
