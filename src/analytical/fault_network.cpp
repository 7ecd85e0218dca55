#include "rapid/analytical/fault_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "rapid/spec/go_back_n.hpp"

namespace rapid {

FaultedNetwork apply_link_faults(const NetworkSpec& net, const std::vector<LinkFault>& faults,
                                 int64_t num_gpus, double gpu_nvlink_Bps) {
  FaultedNetwork out;
  out.network = net;
  out.network.faults.clear();
  const int64_t gpn = std::max<int64_t>(net.gpus_per_node, 1);
  const int64_t nodes = (num_gpus + gpn - 1) / gpn;
  const int64_t per_leaf = std::max<int64_t>(net.nodes_per_leaf, 1);
  const bool torus = net.topology == Topology::Torus2D || net.topology == Topology::Torus3D;
  const int64_t leaves = torus ? 0 : net.leaves(nodes);
  // Uplinks per leaf as the DES fabric builds them (NetworkSpec::leaf_uplinks).
  const auto [uplinks, uplink_Bps] = net.leaf_uplinks();
  const double nic_Bps = net.leaf_bandwidth_Bps * net.network_efficiency;
  const double rtt_s = kRoundTripLinks * net.link_latency_s;
  auto factor = [&](const LinkFault& f, double capacity_Bps) {
    return f.health * (f.loss_rate > 0 ? go_back_n(f.loss_rate, capacity_Bps, rtt_s).goodput : 1.0);
  };
  auto no_route = [&](const LinkFault& f, const char* why) {
    if (out.no_route) return;
    out.no_route = true;
    out.reason = fmt::format("{}: {}", describe_link_fault(f), why);
  };
  std::map<int64_t, std::pair<int64_t, double>> leaf_faults;  // leaf -> (failed, min factor)
  double loss_wait_s = 0;
  for (const LinkFault& f : faults) {
    const bool gpu_used = f.index >= 0 && f.index < num_gpus;
    switch (f.selector) {
      case LinkSelector::NicUp:
      case LinkSelector::NicDown:
      case LinkSelector::Nic:
      case LinkSelector::MostLoaded:
        if ((f.selector != LinkSelector::MostLoaded && !gpu_used) || nodes <= 1) break;
        if (f.failed) {
          no_route(f, "the GPU's only NIC link (docs/faults.md)");
          break;
        }
        out.nic_factor = std::min(out.nic_factor, factor(f, nic_Bps));
        loss_wait_s += f.loss_rate * rc_ack_timeout_s();
        break;
      case LinkSelector::LeafSpine: {
        // Only a job spanning leaf groups crosses the spines (rails of one group do not:
        // PXN keeps traffic rail-local).
        if (torus || nodes <= per_leaf || f.index >= leaves || f.index2 >= uplinks) break;
        auto& [failed, worst] = leaf_faults.try_emplace(f.index, 0, 1.0).first->second;
        if (f.failed) {
          ++failed;
        } else {
          worst = std::min(worst, factor(f, uplink_Bps));
          loss_wait_s += f.loss_rate * rc_ack_timeout_s();
        }
        break;
      }
      case LinkSelector::Nvlink:
        if (!gpu_used || gpn <= 1 || num_gpus <= 1) break;
        if (f.failed) {
          no_route(f, "the GPU's NVLink port: its node peers are unreachable");
          break;
        }
        out.nvlink_factor = std::min(out.nvlink_factor, f.health);
        break;
    }
  }
  for (const auto& [leaf, v] : leaf_faults) {
    const auto [failed, worst] = v;
    if (failed >= uplinks) {
      LinkFault f;
      f.selector = LinkSelector::LeafSpine;
      f.index = leaf;
      f.failed = true;
      no_route(f, "every uplink of the leaf failed");
      continue;
    }
    out.spine_factor = std::min(out.spine_factor, static_cast<double>(uplinks - failed) /
                                                      static_cast<double>(uplinks) * worst);
  }
  NetworkSpec& n = out.network;
  n.leaf_bandwidth_Bps *= out.nic_factor;
  n.oversubscription = std::max(1.0, net.oversubscription * out.nic_factor / out.spine_factor);
  n.network_step_latency_s += loss_wait_s;
  if (n.nvlink_bandwidth_Bps > 0)
    n.nvlink_bandwidth_Bps *= out.nvlink_factor;
  else if (gpu_nvlink_Bps > 0 && out.nvlink_factor < 1.0)
    n.nvlink_bandwidth_Bps = gpu_nvlink_Bps * out.nvlink_factor;
  return out;
}

}  // namespace rapid
