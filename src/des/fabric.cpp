#include "rapid/des/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "rapid/common/error.hpp"
#include "rapid/spec/go_back_n.hpp"
#include "splitmix.hpp"

namespace rapid::des {

namespace {

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

bool Fabric::reset(const NetworkSpec& net, double nvlink_Bps, int64_t num_gpus,
                   std::span<const LinkFault> faults, const LinkRef* most_loaded) {
  RAPID_ASSERT(faults.size() <= kMaxLinkFaults, "at most kMaxLinkFaults faults per point");
  Params p;
  p.faults.assign(faults.begin(), faults.end());
  p.has_most_loaded = most_loaded != nullptr;
  if (most_loaded) p.most_loaded = *most_loaded;
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
  p.scale_up = net.scale_up;
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
    const NetworkSpec::LeafUplinks up = net.leaf_uplinks();
    spines_ = up.count;
    p.uplink_Bps = up.link_Bps;
  }
  if (p == p_ && !links_.empty()) return true;
  p_ = p;
  gpus_per_node_ = p.gpus_per_node;
  nodes_ = nodes;
  dims_ = p.dims;
  const int64_t nics = nodes * p.nics_per_node;
  leaves_ = torus ? nodes : net.leaves(nodes);
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
  fresh(mesh_, p.scale_up == ScaleUp::FullMesh ? num_gpus * (p.gpus_per_node + 1) : 0);
  resolve_faults();
  return true;
}

// Each fault's links, by kind and ends; the times its effect changes.
void Fabric::resolve_faults() {
  targets_.clear();
  timed_ = 0;
  failed_uplinks_ = false;
  times_.clear();
  const bool tree = dims_.empty();
  for (size_t i = 0; i < p_.faults.size(); ++i) {
    const LinkFault& f = p_.faults[i];
    const auto id = static_cast<int32_t>(i);
    const bool gpu_ok = f.index >= 0 && f.index < p_.num_gpus;
    auto add = [&](LinkKind k, int64_t a, int64_t b) { targets_.push_back({k, a, b, id}); };
    switch (f.selector) {
      case LinkSelector::NicUp:
      case LinkSelector::NicDown:
      case LinkSelector::Nic:
        if (!gpu_ok) break;
        if (f.selector != LinkSelector::NicDown) add(LinkKind::NicToLeaf, nic_of(f.index), -1);
        if (f.selector != LinkSelector::NicUp) add(LinkKind::LeafToNic, nic_of(f.index), -1);
        break;
      case LinkSelector::LeafSpine:
        if (!tree || f.index >= leaves_ || f.index2 >= spines_) break;
        add(LinkKind::LeafToSpine, f.index, f.index2);
        add(LinkKind::SpineToLeaf, f.index2, f.index);
        failed_uplinks_ = failed_uplinks_ || f.failed;
        break;
      case LinkSelector::Nvlink:
        if (!gpu_ok) break;
        add(LinkKind::GpuToSwitch, f.index, -1);
        add(LinkKind::SwitchToGpu, f.index, -1);
        break;
      case LinkSelector::MostLoaded:
        if (!p_.has_most_loaded) break;
        add(p_.most_loaded.kind, p_.most_loaded.a, p_.most_loaded.b);
        failed_uplinks_ =
            failed_uplinks_ || (f.failed && (p_.most_loaded.kind == LinkKind::LeafToSpine ||
                                             p_.most_loaded.kind == LinkKind::SpineToLeaf));
        break;
    }
    if (f.permanent() || f.failed) continue;
    timed_ |= uint64_t{1} << i;
    if (f.start_s > 0) times_.push_back(f.start_s);
    if (std::isfinite(f.duration_s)) times_.push_back(f.start_s + f.duration_s);
  }
  std::sort(times_.begin(), times_.end());
  times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
}

double Fabric::fault_factor(int32_t f, const Link& l) const {
  const LinkFault& x = p_.faults[static_cast<size_t>(f)];
  // Go-back-N over the leaf-to-leaf round trip (spec/go_back_n.hpp).
  const double goodput =
      x.loss_rate > 0
          ? go_back_n(x.loss_rate, l.nominal_Bps, kRoundTripLinks * p_.link_latency_s).goodput
          : 1.0;
  return x.health * goodput;
}

double Fabric::loss_delay_s(int32_t f) const {
  const LinkFault& x = p_.faults[static_cast<size_t>(f)];
  return x.loss_rate > 0 ? go_back_n(x.loss_rate, 1.0, 0.0).tail_delay_s : 0.0;
}

double Fabric::permanent_loss_s(uint64_t faults) const {
  double s = 0;
  for (uint64_t f = faults & ~timed_; f; f &= f - 1) s += loss_delay_s(std::countr_zero(f));
  return s;
}

double Fabric::timed_loss_s(uint64_t faults, double t_s) const {
  double s = 0;
  for (uint64_t f = faults & timed_; f; f &= f - 1) {
    const int k = std::countr_zero(f);
    if (p_.faults[static_cast<size_t>(k)].active_at(t_s)) s += loss_delay_s(k);
  }
  return s;
}

double Fabric::capacity_at(int32_t id, double t_s) const {
  const Link& l = link(id);
  double c = l.nominal_Bps;
  for (uint64_t m = l.faults; m; m &= m - 1) {
    const int f = std::countr_zero(m);
    if (p_.faults[static_cast<size_t>(f)].active_at(t_s)) c *= fault_factor(f, l);
  }
  return c;
}

std::string Fabric::fault_names(uint64_t mask) const {
  std::string out;
  for (uint64_t m = mask; m; m &= m - 1)
    out += (out.empty() ? "" : "; ") +
           describe_link_fault(p_.faults[static_cast<size_t>(std::countr_zero(m))]);
  return out;
}

bool Fabric::failed_ends(LinkKind kind, int64_t a, int64_t b) const {
  for (const Target& t : targets_)
    if (t.kind == kind && t.a == a && (t.b < 0 || t.b == b) &&
        p_.faults[static_cast<size_t>(t.fault)].failed)
      return true;
  return false;
}

// The spine a flow from leaf_s to leaf_d takes: `spine` if both its links are alive, else
// alive[pick % alive], -1 when none is.
int64_t Fabric::alive_spine(int64_t leaf_s, int64_t leaf_d, int64_t spine, uint64_t pick) const {
  auto alive = [&](int64_t k) {
    return !failed_ends(LinkKind::LeafToSpine, leaf_s, k) &&
           !failed_ends(LinkKind::SpineToLeaf, k, leaf_d);
  };
  if (alive(spine)) return spine;
  uint64_t count = 0;
  for (int64_t k = 0; k < spines_; ++k) count += alive(k) ? 1 : 0;
  if (count == 0) return -1;
  // The (pick mod count)-th alive spine, in spine order.
  uint64_t left = pick % count;
  for (int64_t k = 0;; ++k)
    if (alive(k) && left-- == 0) return k;
}

bool Fabric::fail(int32_t id) {
  failure_ = link_name(id) + " failed";
  return false;
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
    case LinkKind::MeshShare:
      l.capacity_Bps = p_.nvlink_Bps * scale_up_share(p_.scale_up, p_.gpus_per_node, b);
      l.latency_s = 0;  // the hop's latency is the GPU's link's
      break;
  }
  l.nominal_Bps = l.capacity_Bps;
  for (const Target& t : targets_)
    if (t.kind == kind && t.a == a && (t.b < 0 || t.b == b)) {
      l.faults |= uint64_t{1} << t.fault;
      l.failed = l.failed || p_.faults[static_cast<size_t>(t.fault)].failed;
    }
  id = static_cast<int32_t>(links_.size());
  links_.push_back(l);
  links_.back().capacity_Bps = capacity_at(id, 0.0);
  return id;
}

bool Fabric::route(int64_t src, int64_t dst, std::vector<int32_t>& out, int64_t mesh_members) {
  if (src == dst) return true;
  const int64_t ns = node_of(src), nd = node_of(dst);
  // Appends link `id`; false when it failed.
  auto take = [&](int32_t id) {
    out.push_back(id);
    return !link(id).failed || fail(id);
  };
  if (ns == nd) {
    if (!take(get(gpu_up_, static_cast<size_t>(src), LinkKind::GpuToSwitch, src, ns))) return false;
    if (!mesh_.empty() && mesh_members > 1) {
      const int64_t k = std::min(mesh_members, gpus_per_node_);
      out.push_back(get(mesh_, static_cast<size_t>(src * (gpus_per_node_ + 1) + k),
                        LinkKind::MeshShare, src, k));
    }
    return take(get(gpu_down_, static_cast<size_t>(dst), LinkKind::SwitchToGpu, dst, ns));
  }
  // Rail-optimized: NCCL's PXN (NCCL 2.12+, on by default) moves data over NVLink to the
  // GPU of the source node on the destination's rail, which sends it rail-locally.
  if (p_.topology == Topology::RailOptimized && dims_.empty() &&
      nic_of(src) % p_.nics_per_node != nic_of(dst) % p_.nics_per_node) {
    const int64_t rail = nic_of(dst) % p_.nics_per_node;
    const int64_t proxy =
        ns * gpus_per_node_ + (rail * gpus_per_node_ + p_.nics_per_node - 1) / p_.nics_per_node;
    return route(src, proxy, out) && route(proxy, dst, out);
  }
  const int64_t nic_s = nic_of(src), nic_d = nic_of(dst);
  const int64_t leaf_s = leaf_of_nic(nic_s), leaf_d = leaf_of_nic(nic_d);
  if (!take(get(nic_up_, static_cast<size_t>(nic_s), LinkKind::NicToLeaf, nic_s, leaf_s)))
    return false;
  if (!dims_.empty()) {
    route_torus(ns, nd, out);
  } else if (leaf_s != leaf_d) {
    // D-mod-k: the spine is the destination's position under its leaf, modulo the spines.
    const int64_t position = p_.topology == Topology::RailOptimized
                                 ? (nic_d / p_.nics_per_node) % p_.nodes_per_leaf
                                 : nic_d % (p_.nodes_per_leaf * p_.nics_per_node);
    const uint64_t pick = p_.routing == Routing::DestinationModK
                              ? static_cast<uint64_t>(position)
                              : splitmix64(static_cast<uint64_t>(src) * 0x100000001B3ull ^
                                           static_cast<uint64_t>(dst));
    int64_t spine = static_cast<int64_t>(pick % static_cast<uint64_t>(spines_));
    // Around failed uplinks: another alive spine of the pair (only the failed path's flows
    // move).
    if (failed_uplinks_) spine = alive_spine(leaf_s, leaf_d, spine, pick);
    if (spine < 0) {
      failure_ = fmt::format("every spine between leaf {} and leaf {} failed", leaf_s, leaf_d);
      return false;
    }
    out.push_back(get(leaf_up_, static_cast<size_t>(leaf_s * spines_ + spine),
                      LinkKind::LeafToSpine, leaf_s, spine));
    out.push_back(get(spine_down_, static_cast<size_t>(leaf_d * spines_ + spine),
                      LinkKind::SpineToLeaf, spine, leaf_d));
  }
  return take(get(nic_down_, static_cast<size_t>(nic_d), LinkKind::LeafToNic, nic_d, leaf_d));
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
    case LinkKind::MeshShare:
      return fmt::format("gpu {} -> mesh links to {} peers", l.a, l.b - 1);
  }
  return "?";
}

}  // namespace rapid::des
