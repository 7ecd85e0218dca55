#include "rapid/des/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace rapid::des {

namespace {

// splitmix64 (Steele, Lea & Flood 2014): the ECMP hash of a (source, destination) pair.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Sizes of a grid of `rank` dimensions with at least `nodes` positions, as even as possible:
// the largest divisor of the remaining count not above its rank-th root, per dimension.
std::vector<int64_t> factor_grid(int64_t nodes, size_t rank) {
  std::vector<int64_t> dims;
  int64_t rest = std::max<int64_t>(nodes, 1);
  for (size_t k = rank; k > 1; --k) {
    const auto root = static_cast<int64_t>(
        std::floor(std::pow(static_cast<double>(rest), 1.0 / static_cast<double>(k)) + 1e-9));
    int64_t d = std::max<int64_t>(root, 1);
    while (rest % d != 0) --d;
    dims.push_back(d);
    rest /= d;
  }
  dims.push_back(rest);
  return dims;
}

}  // namespace

bool Fabric::reset(const NetworkSpec& net, double nvlink_Bps, int64_t num_gpus) {
  Params p;
  p.topology = net.topology;
  p.routing = net.routing;
  p.gpus_per_node = std::max<int64_t>(net.gpus_per_node, 1);
  p.nics_per_node = std::max<int64_t>(net.nics_per_node, 1);
  p.nodes_per_leaf = std::max<int64_t>(net.nodes_per_leaf, 1);
  p.num_gpus = num_gpus;
  p.nvlink_Bps = nvlink_Bps;
  p.nic_Bps = net.leaf_bandwidth_Bps * net.network_efficiency;
  p.nvlink_latency_s = net.nvlink_latency_s;
  p.link_latency_s = net.link_latency_s;
  const bool torus = net.topology == Topology::Torus2D || net.topology == Topology::Torus3D;
  const int64_t nodes = (num_gpus + p.gpus_per_node - 1) / p.gpus_per_node;
  if (torus) {
    const size_t rank = net.topology == Topology::Torus3D ? 3 : 2;
    p.dims = net.torus_dims.empty() ? factor_grid(nodes, rank) : net.torus_dims;
    int64_t positions = 1;
    for (int64_t d : p.dims) positions *= d;
    if (positions < nodes) return false;
    const double per_link = net.torus_link_bandwidth_Bps > 0
                                ? net.torus_link_bandwidth_Bps
                                : net.leaf_bandwidth_Bps * static_cast<double>(p.nics_per_node) /
                                      (2.0 * static_cast<double>(rank));
    p.torus_Bps = per_link * net.network_efficiency;
  } else {
    // Leaf downlinks D; uplinks carry D * leaf_bw / oversubscription in U links of about
    // spine_bandwidth each.
    const double down =
        static_cast<double>(p.nodes_per_leaf) *
        static_cast<double>(net.topology == Topology::RailOptimized ? 1 : p.nics_per_node);
    const double total = down * net.leaf_bandwidth_Bps / std::max(net.oversubscription, 1.0);
    const double spine_bw =
        net.spine_bandwidth_Bps > 0 ? net.spine_bandwidth_Bps : net.leaf_bandwidth_Bps;
    spines_ = std::max<int64_t>(1, std::llround(total / spine_bw));
    p.uplink_Bps = total / static_cast<double>(spines_) * net.network_efficiency;
  }
  if (p == p_ && !links_.empty()) return true;
  p_ = p;
  gpus_per_node_ = p.gpus_per_node;
  nodes_ = nodes;
  dims_ = p.dims;
  const int64_t nics = nodes * p.nics_per_node;
  leaves_ = torus ? nodes
                  : ((nodes + p.nodes_per_leaf - 1) / p.nodes_per_leaf) *
                        (net.topology == Topology::RailOptimized ? p.nics_per_node : 1);
  links_.clear();
  auto fresh = [](std::vector<int32_t>& t, int64_t n) { t.assign(static_cast<size_t>(n), -1); };
  fresh(gpu_up_, num_gpus);
  fresh(gpu_down_, num_gpus);
  fresh(nic_up_, nics);
  fresh(nic_down_, nics);
  fresh(leaf_up_, torus ? 0 : leaves_ * spines_);
  fresh(spine_down_, torus ? 0 : leaves_ * spines_);
  int64_t positions = 1;
  for (int64_t d : dims_) positions *= d;
  fresh(torus_, torus ? positions * 2 * static_cast<int64_t>(dims_.size()) : 0);
  return true;
}

int64_t Fabric::nic_of(int64_t gpu) const {
  const int64_t local = gpu % gpus_per_node_;
  return node_of(gpu) * p_.nics_per_node + local * p_.nics_per_node / gpus_per_node_;
}

int64_t Fabric::leaf_of_nic(int64_t nic) const {
  const int64_t node = nic / p_.nics_per_node;
  if (!dims_.empty()) return node;
  const int64_t group = node / p_.nodes_per_leaf;
  if (p_.topology == Topology::RailOptimized)
    return group * p_.nics_per_node + nic % p_.nics_per_node;
  return group;
}

int32_t Fabric::get(std::vector<int32_t>& table, size_t slot, LinkKind kind, int64_t a, int64_t b) {
  int32_t& id = table[slot];
  if (id >= 0) return id;
  Link l;
  l.kind = kind;
  l.a = static_cast<int32_t>(a);
  l.b = static_cast<int32_t>(b);
  switch (kind) {
    case LinkKind::GpuToSwitch:
    case LinkKind::SwitchToGpu:
      l.capacity_Bps = p_.nvlink_Bps;
      l.latency_s = p_.nvlink_latency_s;
      break;
    case LinkKind::NicToLeaf:
    case LinkKind::LeafToNic:
      l.capacity_Bps = p_.nic_Bps;
      l.latency_s = p_.link_latency_s;
      break;
    case LinkKind::LeafToSpine:
    case LinkKind::SpineToLeaf:
      l.capacity_Bps = p_.uplink_Bps;
      l.latency_s = p_.link_latency_s;
      break;
    case LinkKind::TorusHop:
      l.capacity_Bps = p_.torus_Bps;
      l.latency_s = p_.link_latency_s;
      break;
  }
  id = static_cast<int32_t>(links_.size());
  links_.push_back(l);
  return id;
}

void Fabric::route(int64_t src, int64_t dst, std::vector<int32_t>& out) {
  if (src == dst) return;
  const int64_t ns = node_of(src), nd = node_of(dst);
  if (ns == nd) {
    out.push_back(get(gpu_up_, static_cast<size_t>(src), LinkKind::GpuToSwitch, src, ns));
    out.push_back(get(gpu_down_, static_cast<size_t>(dst), LinkKind::SwitchToGpu, dst, ns));
    return;
  }
  // Rail-optimized: NCCL's PXN (NCCL 2.12+, on by default) moves data over NVLink to the
  // GPU of the source node on the destination's rail, which sends it rail-locally.
  if (p_.topology == Topology::RailOptimized && dims_.empty() &&
      nic_of(src) % p_.nics_per_node != nic_of(dst) % p_.nics_per_node) {
    const int64_t rail = nic_of(dst) % p_.nics_per_node;
    const int64_t proxy =
        ns * gpus_per_node_ + (rail * gpus_per_node_ + p_.nics_per_node - 1) / p_.nics_per_node;
    route(src, proxy, out);
    route(proxy, dst, out);
    return;
  }
  const int64_t nic_s = nic_of(src), nic_d = nic_of(dst);
  const int64_t leaf_s = leaf_of_nic(nic_s), leaf_d = leaf_of_nic(nic_d);
  out.push_back(get(nic_up_, static_cast<size_t>(nic_s), LinkKind::NicToLeaf, nic_s, leaf_s));
  if (!dims_.empty()) {
    route_torus(ns, nd, out);
  } else if (leaf_s != leaf_d) {
    // D-mod-k: the spine is the destination's position under its leaf, modulo the spines.
    const int64_t position = p_.topology == Topology::RailOptimized
                                 ? (nic_d / p_.nics_per_node) % p_.nodes_per_leaf
                                 : nic_d % (p_.nodes_per_leaf * p_.nics_per_node);
    const auto spine =
        p_.routing == Routing::DestinationModK
            ? position % spines_
            : static_cast<int64_t>(
                  mix(static_cast<uint64_t>(src) * 0x100000001B3ull ^ static_cast<uint64_t>(dst)) %
                  static_cast<uint64_t>(spines_));
    out.push_back(get(leaf_up_, static_cast<size_t>(leaf_s * spines_ + spine),
                      LinkKind::LeafToSpine, leaf_s, spine));
    out.push_back(get(spine_down_, static_cast<size_t>(leaf_d * spines_ + spine),
                      LinkKind::SpineToLeaf, spine, leaf_d));
  }
  out.push_back(get(nic_down_, static_cast<size_t>(nic_d), LinkKind::LeafToNic, nic_d, leaf_d));
}

void Fabric::route_torus(int64_t src_node, int64_t dst_node, std::vector<int32_t>& out) {
  const auto rank = static_cast<int64_t>(dims_.size());
  std::array<int64_t, 3> at{}, to{};
  int64_t a = src_node, b = dst_node;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t d = dims_[static_cast<size_t>(k)];
    at[static_cast<size_t>(k)] = a % d;
    to[static_cast<size_t>(k)] = b % d;
    a /= d;
    b /= d;
  }
  auto node_at = [&] {
    int64_t n = 0;
    for (int64_t k = rank - 1; k >= 0; --k)
      n = n * dims_[static_cast<size_t>(k)] + at[static_cast<size_t>(k)];
    return n;
  };
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t d = dims_[static_cast<size_t>(k)];
    const int64_t forward = ((to[static_cast<size_t>(k)] - at[static_cast<size_t>(k)]) % d + d) % d;
    const bool plus = forward <= d - forward;
    const int64_t hops = plus ? forward : d - forward;
    for (int64_t h = 0; h < hops; ++h) {
      const int64_t node = node_at();
      const int64_t dir = 2 * k + (plus ? 0 : 1);
      out.push_back(
          get(torus_, static_cast<size_t>(node * 2 * rank + dir), LinkKind::TorusHop, node, dir));
      at[static_cast<size_t>(k)] = (at[static_cast<size_t>(k)] + (plus ? 1 : d - 1)) % d;
    }
  }
}

std::string Fabric::link_name(int32_t id) const {
  const Link& l = link(id);
  const int64_t nics = p_.nics_per_node;
  const char* leaf = dims_.empty() ? "leaf" : "router";
  switch (l.kind) {
    case LinkKind::GpuToSwitch:
      return fmt::format("gpu {} -> nvswitch {}", l.a, l.b);
    case LinkKind::SwitchToGpu:
      return fmt::format("nvswitch {} -> gpu {}", l.b, l.a);
    case LinkKind::NicToLeaf:
      return fmt::format("node {} nic {} -> {} {}", l.a / nics, l.a % nics, leaf, l.b);
    case LinkKind::LeafToNic:
      return fmt::format("{} {} -> node {} nic {}", leaf, l.b, l.a / nics, l.a % nics);
    case LinkKind::LeafToSpine:
      return fmt::format("leaf {} -> spine {}", l.a, l.b);
    case LinkKind::SpineToLeaf:
      return fmt::format("spine {} -> leaf {}", l.a, l.b);
    case LinkKind::TorusHop:
      return fmt::format("node {} -> torus {}{}", l.a, "xyz"[l.b / 2], l.b % 2 ? '-' : '+');
  }
  return "?";
}

}  // namespace rapid::des
