#include "rapid/trace/replay_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "rapid/des/comm_layouts.hpp"

namespace rapid::trace {

bool ReplayNetwork::reset(const NetworkSpec& net, double nvlink_Bps, int64_t num_gpus,
                          std::span<const LinkFault> faults, const des::LinkRef* most_loaded) {
  net_.clear();
  changed_.clear();
  res_of_link_.clear();
  link_of_res_.clear();
  no_route_.clear();
  started_ = 0;
  link_latency_s_ = net.link_latency_s;
  return fabric_.reset(net, nvlink_Bps, num_gpus, faults, most_loaded);
}

int32_t ReplayNetwork::resource(int32_t link) {
  if (res_of_link_.size() <= static_cast<size_t>(link))
    res_of_link_.resize(static_cast<size_t>(link) + 1, -1);
  int32_t& r = res_of_link_[static_cast<size_t>(link)];
  if (r < 0) {
    r = net_.add_resource(fabric_.link(link).capacity_Bps);
    link_of_res_.push_back(link);
  }
  return r;
}

int32_t ReplayNetwork::start(des::SimTime now, const CollectivePlan& plan,
                             const std::vector<int64_t>& members, int64_t src, int64_t dst,
                             uint64_t tag, des::SimTime* latency_ps) {
  int32_t bundles = 0, network_links = 0;
  uint64_t faults = 0;  // of the network links its flows cross
  for (int t = 0; t < plan.num_tiers; ++t) {
    const CollectiveTier& tier = plan.tiers[static_cast<size_t>(t)];
    src_.clear();
    dst_.clear();
    if (members.empty()) {
      if (src != dst) src_.push_back(src), dst_.push_back(dst);
    } else {
      des::pattern_flows(fabric_, tier.pattern, members, src_, dst_);
    }
    // Per link, the member flows crossing it (a bundle's multiplicity there).
    touched_.clear();
    for (size_t f = 0; f < src_.size(); ++f) {
      route_.clear();
      if (!fabric_.route(src_[f], dst_[f], route_)) {
        no_route_ = fmt::format("gpu {} -> gpu {}: {}", src_[f], dst_[f], fabric_.route_failure());
        return -1;
      }
      int32_t net_links = 0;
      for (int32_t l : route_) {
        const int32_t r = resource(l);
        if (count_.size() <= static_cast<size_t>(r)) count_.resize(static_cast<size_t>(r) + 1, 0);
        if (count_[static_cast<size_t>(r)]++ == 0) touched_.push_back(r);
        if (fabric_.link(l).network()) {
          ++net_links;
          faults |= fabric_.link(l).faults;
        }
      }
      network_links = std::max(network_links, net_links);
    }
    if (touched_.empty() || tier.flow_bytes <= 0) {
      for (int32_t r : touched_) count_[static_cast<size_t>(r)] = 0;
      continue;
    }
    std::sort(touched_.begin(), touched_.end());
    uses_.clear();
    for (int32_t r : touched_) {
      uses_.push_back(des::ResourceUse{r, count_[static_cast<size_t>(r)]});
      count_[static_cast<size_t>(r)] = 0;
    }
    net_.add(now, uses_, tier.flow_bytes, tag);
    ++bundles;
  }
  changed_.clear();
  if (bundles > 0) {
    net_.commit(now);
    changed_.assign(net_.changed().begin(), net_.changed().end());
  }
  started_ += static_cast<uint64_t>(bundles);
  // Latency: p x RC timeout per network step of the critical path, for the permanent
  // faults and the timed ones in effect at the start (des::Fabric, as the DES).
  const double loss_s = fabric_.permanent_loss_s(faults);
  const double timed_s = fabric_.timed_loss_s(faults, des::to_seconds(now));
  *latency_ps = des::to_ps(des::start_latency_s(plan, network_links, link_latency_s_, loss_s)) +
                (timed_s > 0 ? des::to_ps(plan.net_steps * timed_s) : 0);
  return bundles;
}

uint64_t ReplayNetwork::finish(des::SimTime now, int32_t b) {
  const uint64_t tag = net_.tag(b);
  net_.finish(now, b);
  changed_.assign(net_.changed().begin(), net_.changed().end());
  return tag;
}

void ReplayNetwork::fault_change(des::SimTime now, size_t k) {
  const std::vector<double>& times = fabric_.fault_times();
  changed_.clear();
  const double probe = k + 1 < times.size() ? 0.5 * (times[k] + times[k + 1]) : times[k] + 1.0;
  for (size_t r = 0; r < link_of_res_.size(); ++r) {
    const int32_t link = link_of_res_[r];
    if ((fabric_.link(link).faults & fabric_.timed_faults()) == 0) continue;
    const double cap = fabric_.capacity_at(link, probe);
    if (cap == net_.capacity(static_cast<int32_t>(r))) continue;
    net_.set_capacity(now, static_cast<int32_t>(r), cap);
    changed_.insert(changed_.end(), net_.changed().begin(), net_.changed().end());
  }
}

int32_t ReplayNetwork::peak_flows() const {
  int32_t peak = 0;
  for (int32_t r = 0; r < net_.num_resources(); ++r) peak = std::max(peak, net_.peak_flows(r));
  return peak;
}

int32_t ReplayNetwork::busiest_link() const {
  // des/simulator.cpp's rule on the link classes sorted by utilization: the first scale-out
  // one, else the first. Here every link is its own class. Exact ties the DES leaves in
  // the order its setup created the links, which a replay does not have; they go here to
  // the lowest (kind, a, b): a GPU's or NIC's up link before the down link, the lower GPU,
  // NIC or leaf first (docs/chakra.md sec 4).
  auto key = [&](int32_t l) {
    const des::LinkRef x = fabric_.link(l).ref();
    return std::tuple{static_cast<int>(x.kind), x.a, x.b};
  };
  int32_t pick = -1;
  double best = 0;
  for (int32_t r = 0; r < net_.num_resources(); ++r) {
    const double bytes = net_.carried_bytes(r);
    if (bytes <= 0) continue;
    const int32_t l = link_of_res_[static_cast<size_t>(r)];
    const double u = bytes / fabric_.link(l).capacity_Bps;
    const bool net = fabric_.link(l).network();
    const bool pick_net = pick >= 0 && fabric_.link(pick).network();
    if (pick < 0 || (net && !pick_net) ||
        (net == pick_net && (u > best || (u == best && key(l) < key(pick))))) {
      pick = l;
      best = u;
    }
  }
  return pick;
}

}  // namespace rapid::trace
