// CommLayouts::check_symmetry(): may one replica stand for all (docs/des.md "Replica
// equivalence")?
//
// After finalize() merged links into classes, a flow is summarised by the sequence of
// classes its route crosses: links of one class carry the same load at every instant, so
// two flows with the same class sequence see the same network whatever links (spines,
// leaves) they actually take. The replicas are equivalent when
//  - every layout whose flows stay inside a replica (TP/CP/EP groups of one replica,
//    pipeline transfers) has, for every replica, the same multiset of class sequences:
//    each replica's own traffic meets the same sharing;
//  - every layout whose flows join replicas (a DP ring, an EP group spanning replicas) has
//    that for every group copy: a copy is one collective every replica waits for, which in
//    full mode is its own bundle, so the copies must move at the same rate; its hops may
//    go through different spines and leaves (replica 1 -> 2 across the spine, 0 -> 1 under
//    one leaf), which no per-replica comparison would accept.
// When that fails, the comparison is repeated without *redundant* links: a link whose
// full-mode bundles (a replica's collective or transfer; a DP group copy) all cross one
// other link Y too, with at least the same member flows there, and whose capacity is at
// least Y's, can never be a tighter constraint than Y (its load is at most Y's at every
// instant), so the max-min rates are those of the network without it (Bertsekas &
// Gallager, "Data Networks", 2nd ed., sec. 6.5.2: the fair allocation is unique and a
// constraint that never binds does not change it). On a rail-optimized fat tree the spine
// uplink that one replica's pipeline transfer shares with a DP ring hop is such a link
// (the NIC the transfer leaves by carries the same ring copy), while another replica's
// transfer has its spine uplink alone.
// The classes encode who else uses a link, so a DP hop on one replica's pipeline link that
// does bind shows up in that replica's pipeline layout. With a link fault on any used link
// the joining layouts are compared per replica as well, and nothing is left out as
// redundant (the stricter rule): a fault breaks the equivalence of the replicas whose flows
// cross it.
#include <fmt/format.h>

#include <algorithm>

#include "layout_hash.hpp"
#include "rapid/des/comm_layouts.hpp"

namespace rapid::des {

namespace {

// A full-mode bundle: layout << 32 | replica or group copy.
uint64_t bundle_key(size_t layout, int32_t group) {
  return static_cast<uint64_t>(layout) << 32 | static_cast<uint32_t>(group);
}

}  // namespace

int32_t CommLayouts::group_of(const Layout& l, const FlowPath& fp, bool faulted) {
  return l.joins_replicas && !faulted ? fp.copy : fp.replica;
}

void CommLayouts::find_redundant_links() {
  const auto nlinks = static_cast<size_t>(topo_->num_links());
  // Per link its bundles with their member flows, sorted (CSR: sym_begin_, sym_bundles_).
  std::vector<std::pair<int32_t, uint64_t>>& on = sym_pairs_;
  on.clear();
  for (size_t li = 0; li < layouts_.size(); ++li) {
    const Layout& l = layouts_[li];
    for (int32_t f = l.path_begin; f < l.path_begin + l.path_count; ++f) {
      const FlowPath& fp = flow_paths_[static_cast<size_t>(f)];
      for (int32_t k = fp.begin; k < fp.begin + fp.count; ++k)
        on.push_back({path_links_[static_cast<size_t>(k)], bundle_key(li, group_of(l, fp, false))});
    }
  }
  std::sort(on.begin(), on.end());
  sym_begin_.assign(nlinks + 1, 0);
  sym_bundles_.clear();
  for (size_t i = 0; i < on.size();) {
    size_t j = i;
    while (j < on.size() && on[j] == on[i]) ++j;
    sym_bundles_.push_back({on[i].second, static_cast<int32_t>(j - i)});
    ++sym_begin_[static_cast<size_t>(on[i].first) + 1];
    i = j;
  }
  for (size_t l = 0; l < nlinks; ++l) sym_begin_[l + 1] += sym_begin_[l];
  auto list = [&](int32_t link) {
    const auto b = static_cast<size_t>(sym_begin_[static_cast<size_t>(link)]);
    const auto e = static_cast<size_t>(sym_begin_[static_cast<size_t>(link) + 1]);
    return std::span<const std::pair<uint64_t, int32_t>>(sym_bundles_.data() + b, e - b);
  };
  // X is redundant beside Y when X's bundles are a sub-multiset of Y's and C_X >= C_Y; of
  // two equal links the higher id is left out. Candidates Y: the links of the routes that
  // cross X (one route per bundle suffices: Y must carry every bundle of X).
  redundant_.assign(nlinks, 0);
  auto covers = [&](int32_t y, int32_t x) {
    const auto lx = list(x), ly = list(y);
    if (ly.size() < lx.size()) return false;
    const double cx = topo_->link(x).capacity_Bps, cy = topo_->link(y).capacity_Bps;
    if (cx < cy) return false;
    size_t j = 0;
    for (const auto& [key, mult] : lx) {
      while (j < ly.size() && ly[j].first < key) ++j;
      if (j == ly.size() || ly[j].first != key || ly[j].second < mult) return false;
    }
    return ly.size() > lx.size() || cx > cy || y < x ||
           !std::equal(lx.begin(), lx.end(), ly.begin());
  };
  for (size_t li = 0; li < layouts_.size(); ++li) {
    const Layout& l = layouts_[li];
    for (int32_t f = l.path_begin; f < l.path_begin + l.path_count; ++f) {
      const FlowPath& fp = flow_paths_[static_cast<size_t>(f)];
      for (int32_t k = fp.begin; k < fp.begin + fp.count; ++k) {
        const int32_t x = path_links_[static_cast<size_t>(k)];
        if (redundant_[static_cast<size_t>(x)]) continue;
        for (int32_t q = fp.begin; q < fp.begin + fp.count; ++q) {
          const int32_t y = path_links_[static_cast<size_t>(q)];
          if (y != x && covers(y, x)) {
            redundant_[static_cast<size_t>(x)] = 1;
            break;
          }
        }
      }
    }
  }
}

int32_t CommLayouts::first_asymmetric_layout(bool faulted, bool skip_redundant, int32_t* group) {
  std::vector<std::pair<int32_t, uint64_t>>& flows = sym_pairs_;
  for (size_t li = 0; li < layouts_.size(); ++li) {
    const Layout& l = layouts_[li];
    if (l.path_count == 0) continue;
    flows.clear();
    for (int32_t f = l.path_begin; f < l.path_begin + l.path_count; ++f) {
      const FlowPath& fp = flow_paths_[static_cast<size_t>(f)];
      uint64_t h = 0x811C9DC5u;
      for (int32_t k = fp.begin; k < fp.begin + fp.count; ++k) {
        const auto link = static_cast<size_t>(path_links_[static_cast<size_t>(k)]);
        if (!skip_redundant || !redundant_[link])
          h = hash_step(h, static_cast<uint64_t>(link_class_[link]));
      }
      flows.push_back({group_of(l, fp, faulted), h});
    }
    std::sort(flows.begin(), flows.end());
    // The first group's run of hashes, then every other group's against it.
    size_t first_end = 0;
    while (first_end < flows.size() && flows[first_end].first == flows[0].first) ++first_end;
    int32_t groups = 1;
    for (size_t b = first_end; b < flows.size(); ++groups) {
      size_t e = b;
      while (e < flows.size() && flows[e].first == flows[b].first) ++e;
      const bool same =
          e - b == first_end &&
          std::equal(flows.begin() + static_cast<std::ptrdiff_t>(b),
                     flows.begin() + static_cast<std::ptrdiff_t>(e), flows.begin(),
                     [](const auto& x, const auto& y) { return x.second == y.second; });
      if (!same) {
        *group = flows[b].first;
        return static_cast<int32_t>(li);
      }
      b = e;
    }
    // Per replica, every replica must send (one without flows differs too).
    if (!(l.joins_replicas && !faulted) && groups != dp_) {
      *group = groups;
      return static_cast<int32_t>(li);
    }
  }
  return -1;
}

void CommLayouts::check_symmetry() {
  if (!check_symmetry_ || dp_ == 1) return;
  bool faulted = false;
  for (int32_t c = 0; c < num_classes() && !faulted; ++c)
    faulted = topo_->link(class_links(c).front()).faults != 0;
  int32_t group = 0;
  int32_t li = first_asymmetric_layout(faulted, false, &group);
  if (li >= 0 && !faulted) {
    find_redundant_links();
    li = first_asymmetric_layout(faulted, true, &group);
  }
  if (li < 0) return;
  const Layout& l = layouts_[static_cast<size_t>(li)];
  const char* what = l.joins_replicas && !faulted ? "group copy" : "replica";
  symmetric_ = false;
  asymmetry_ = fmt::format("{} {} and {} 0 send over different links (layout {}: {} flows)", what,
                           group, what, li, l.flows);
  // A fault on the layout's routes is the likely cause: name it.
  uint64_t faults = 0;
  const FlowPath& a = flow_paths_[static_cast<size_t>(l.path_begin)];
  const FlowPath& z = flow_paths_[static_cast<size_t>(l.path_begin + l.path_count - 1)];
  for (int32_t k = a.begin; k < z.begin + z.count; ++k)
    faults |= topo_->link(path_links_[static_cast<size_t>(k)]).faults;
  if (faults != 0) asymmetry_ += fmt::format("; link fault: {}", topo_->fault_names(faults));
}

}  // namespace rapid::des
