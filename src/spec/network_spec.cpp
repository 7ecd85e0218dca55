#include "rapid/spec/network_spec.hpp"

#include <algorithm>
#include <cmath>

#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

const char* topology_name(Topology t) {
  static const char* names[] = {"fat_tree", "rail_optimized", "torus2d", "torus3d"};
  return names[static_cast<int>(t)];
}

double NetworkSpec::nic_bandwidth_per_gpu_Bps() const {
  return leaf_bandwidth_Bps * static_cast<double>(nics_per_node) /
         static_cast<double>(gpus_per_node);
}

NetworkSpec::LeafUplinks NetworkSpec::leaf_uplinks() const {
  const bool rail = topology == Topology::RailOptimized;
  const double down = static_cast<double>(std::max<int64_t>(nodes_per_leaf, 1)) *
                      static_cast<double>(rail ? 1 : std::max<int64_t>(nics_per_node, 1));
  const double total = down * leaf_bandwidth_Bps / std::max(oversubscription, 1.0);
  const double spine_bw = spine_bandwidth_Bps > 0 ? spine_bandwidth_Bps : leaf_bandwidth_Bps;
  LeafUplinks u;
  u.count = std::max<int64_t>(1, std::llround(total / spine_bw));
  u.link_Bps = total / static_cast<double>(u.count) * network_efficiency;
  return u;
}

double scale_up_share(ScaleUp kind, int64_t gpus_per_node, int64_t members) {
  if (kind == ScaleUp::NvSwitch || gpus_per_node < 2) return 1.0;
  const auto links = static_cast<double>(gpus_per_node - 1);
  return std::clamp(static_cast<double>(members - 1), 1.0, links) / links;
}

int64_t NetworkSpec::leaves(int64_t nodes) const {
  const int64_t per_leaf = std::max<int64_t>(nodes_per_leaf, 1);
  return ((nodes + per_leaf - 1) / per_leaf) *
         (topology == Topology::RailOptimized ? std::max<int64_t>(nics_per_node, 1) : 1);
}

NetworkSpec parse_network(const YAML::Node& node, const std::string& file) {
  // A file holding the job-level snippet `network: {...}` is accepted as is.
  if (node.IsMap() && node.size() == 1 && node["network"] && node["network"].IsMap())
    return parse_network(node["network"], file);
  YamlMap m(node, file);
  NetworkSpec n;
  n.name = m.string_or("name", file.find("<inline") == 0 ? "inline network" : file);
  n.topology = static_cast<Topology>(
      m.choice_or("topology", {"fat_tree", "rail_optimized", "torus2d", "torus3d"}, 0));
  n.routing = static_cast<Routing>(m.choice_or("routing", {"ecmp", "dmodk"}, 0));
  n.gpus_per_node = m.integer_or("gpus_per_node", 8, 1, 4096);
  n.scale_up = static_cast<ScaleUp>(m.choice_or("scale_up", {"nvswitch", "full_mesh"}, 0));
  if (n.scale_up == ScaleUp::FullMesh && n.gpus_per_node < 2)
    m.fail("gpus_per_node", std::to_string(n.gpus_per_node),
           "at least 2 GPUs per node on a full_mesh scale-up (a mesh of links between them)");
  n.nvlink_bandwidth_Bps = m.quantity_or("nvlink_bandwidth", Dimension::Bandwidth, 0.0);
  // NVSwitch hop latency, sub-microsecond (NVIDIA NVSwitch whitepaper); 0.5us is a
  // conservative default when the file does not say.
  n.nvlink_latency_s = m.quantity_or("nvlink_latency", Dimension::Time, 0.5e-6);
  n.nics_per_node = m.integer_or("nics_per_node", n.gpus_per_node, 1, 4096);
  n.leaf_bandwidth_Bps = m.quantity("leaf_bandwidth", Dimension::Bandwidth);
  n.spine_bandwidth_Bps =
      m.quantity_or("spine_bandwidth", Dimension::Bandwidth, n.leaf_bandwidth_Bps);
  n.nodes_per_leaf = m.integer_or("nodes_per_leaf", 32, 1, 1000000);
  double derived =
      n.spine_bandwidth_Bps > 0 ? std::max(1.0, n.leaf_bandwidth_Bps / n.spine_bandwidth_Bps) : 1.0;
  n.oversubscription = m.number_or("oversubscription", derived, 1.0, 1024.0);
  n.link_latency_s = m.quantity_or("link_latency", Dimension::Time, 1e-6);
  // NCCL start-up per collective call: 5-10 us for small all-reduces (PRODUCT.md section 7;
  // nccl-tests small-message latencies on DGX A100).
  n.collective_latency_s = m.quantity_or("collective_latency", Dimension::Time, 8e-6);
  n.network_efficiency = m.number_or("network_efficiency", n.network_efficiency, 0.01, 1.0);
  // Per-step latencies of NCCL's Simple protocol (src/graph/tuning.cc, NCCL 2.18-2.19:
  // hwLat[NVLINK][RING][SIMPLE] = 3.4 us, hwLat[NET][RING][SIMPLE] = 14 us) and the ring
  // pipeline bubble fitted to nccl_allreduce_busbw_dgx_a100.csv (docs/collectives.md).
  n.nvlink_step_latency_s =
      m.quantity_or("nvlink_step_latency", Dimension::Time, n.nvlink_step_latency_s);
  n.network_step_latency_s =
      m.quantity_or("network_step_latency", Dimension::Time, n.network_step_latency_s);
  // The low-latency protocols' NVLink ring steps (hwLat[NVLINK][RING][LL, LL128], same file).
  n.nvlink_step_latency_ll_s =
      m.quantity_or("nvlink_step_latency_ll", Dimension::Time, n.nvlink_step_latency_ll_s);
  n.nvlink_step_latency_ll128_s =
      m.quantity_or("nvlink_step_latency_ll128", Dimension::Time, n.nvlink_step_latency_ll128_s);
  n.nvlink_ring_bubble = m.number_or("nvlink_ring_bubble", n.nvlink_ring_bubble, 0.0, 64.0);
  // NCCL_PROTO as a list (docs/collectives.md sec 6b): which protocols NCCL may pick.
  {
    const std::vector<int> protocols =
        m.choice_list_or("nccl_protocols", {"ll", "ll128", "simple"}, {0, 1, 2});
    n.nccl_ll = std::find(protocols.begin(), protocols.end(), 0) != protocols.end();
    n.nccl_ll128 = std::find(protocols.begin(), protocols.end(), 1) != protocols.end();
    n.nccl_simple = std::find(protocols.begin(), protocols.end(), 2) != protocols.end();
  }
  n.nccl_channels_nvlink = m.integer_or("nccl_channels_nvlink", n.nccl_channels_nvlink, 1, 64);
  n.nccl_channels_network = m.integer_or("nccl_channels_network", n.nccl_channels_network, 1, 64);
  n.nccl_hbm_bytes_per_byte =
      m.number_or("nccl_hbm_bytes_per_byte", n.nccl_hbm_bytes_per_byte, 0.0, 8.0);
  n.network_ring_bubble = m.number_or("network_ring_bubble", n.network_ring_bubble, 0.0, 64.0);
  // Torus grid and link bandwidth (DES only; docs/des.md "Topologies").
  n.torus_dims = m.integer_list_or("torus_dims", {}, 1);
  const size_t torus_rank = n.topology == Topology::Torus3D ? 3 : 2;
  if (!n.torus_dims.empty() && n.torus_dims.size() != torus_rank)
    m.fail("torus_dims", std::to_string(n.torus_dims.size()) + " sizes",
           std::to_string(torus_rank) + " sizes for " + topology_name(n.topology));
  n.torus_link_bandwidth_Bps = m.quantity_or("torus_link_bandwidth", Dimension::Bandwidth, 0.0);
  if (m.has("faults")) n.faults = parse_link_faults(m.node("faults"), file, "faults");
  for (const char* k : {"description", "source", "sources"}) m.has(k);
  m.finish();
  // The value as written (the default spine bandwidth is the leaf's).
  auto given = [&](const char* key, double v) {
    return m.has(key) && m.node(key).IsScalar() ? m.node(key).Scalar() : std::to_string(v);
  };
  if (n.leaf_bandwidth_Bps < 1e3)
    m.fail("leaf_bandwidth", given("leaf_bandwidth", n.leaf_bandwidth_Bps),
           "a bandwidth of at least 1 kB/s");
  if (n.spine_bandwidth_Bps < 1e3)
    m.fail("spine_bandwidth", given("spine_bandwidth", n.spine_bandwidth_Bps),
           "a bandwidth of at least 1 kB/s");
  if (m.has("nvlink_bandwidth") && n.nvlink_bandwidth_Bps < 1e3)
    m.fail("nvlink_bandwidth", given("nvlink_bandwidth", n.nvlink_bandwidth_Bps),
           "a bandwidth of at least 1 kB/s");
  if (n.nics_per_node < 1) m.fail("nics_per_node", "0", "an integer >= 1");
  return n;
}

}  // namespace rapid
