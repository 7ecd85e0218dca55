// CommLayouts::finalize(): which layouts may be folded, link classes, symmetry of the
// (docs/des.md "Exact aggregation"); the symmetry check is comm_layouts_symmetry.cpp.
#include <algorithm>
#include <functional>
#include <numeric>

#include "layout_hash.hpp"
#include "rapid/des/comm_layouts.hpp"

namespace rapid::des {

void CommLayouts::finalize() {
  const auto nlinks = static_cast<size_t>(topo_->num_links());
  // Who uses each link: the instance of its blocking layouts, the stage of its DP
  // layouts, other asynchronous traffic (pipeline p2p, DP of several stages).
  auto combine = [](int32_t& slot, int32_t v) { slot = slot == -1 || slot == v ? v : -2; };
  link_owner_.assign(nlinks, -1);
  link_dp_.assign(nlinks, -1);
  link_async_.assign(nlinks, 0);
  for (const Layout& l : layouts_)
    for (int32_t k = 0; k < l.use_count; ++k) {
      const auto link = static_cast<size_t>(uses_[static_cast<size_t>(l.use_begin + k)].res);
      if (l.owner != -1) combine(link_owner_[link], l.owner);
      if (l.async && l.dp_stage >= 0) combine(link_dp_[link], l.dp_stage);
      if (l.async && l.dp_stage < 0) link_async_[link] = 1;
    }
  // Foldable: a blocking layout of one instance, alone on its links (quiet_foldable: or
  // with its own stage's DP traffic, which the simulator checks is idle for the pass).
  for (Layout& l : layouts_) {
    const bool own = l.owner >= 0 && !l.async && l.part_count == 1 &&
                     parts_[static_cast<size_t>(l.part_begin)] == l.owner;
    l.foldable = l.quiet_foldable = own;
    for (int32_t k = 0; k < l.use_count && own; ++k) {
      const auto link = static_cast<size_t>(uses_[static_cast<size_t>(l.use_begin + k)].res);
      const bool alone = link_owner_[link] == l.owner && !link_async_[link];
      l.foldable = l.foldable && alone && link_dp_[link] == -1;
      l.quiet_foldable = l.quiet_foldable && alone &&
                         (link_dp_[link] == -1 || link_dp_[link] == stage_of(l.owner));
    }
  }

  // Link signatures: the (layout, flows) pairs on each link, in layout order, + capacity.
  std::vector<int32_t> count(nlinks + 1, 0);
  for (const Layout& l : layouts_)
    for (int32_t k = 0; k < l.use_count; ++k)
      ++count[static_cast<size_t>(uses_[static_cast<size_t>(l.use_begin + k)].res) + 1];
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<std::pair<int32_t, int32_t>> sig(static_cast<size_t>(count.back()));
  std::vector<int32_t> fill(count.begin(), count.end() - 1);
  for (size_t li = 0; li < layouts_.size(); ++li) {
    const Layout& l = layouts_[li];
    for (int32_t k = 0; k < l.use_count; ++k) {
      const ResourceUse& u = uses_[static_cast<size_t>(l.use_begin + k)];
      sig[static_cast<size_t>(fill[static_cast<size_t>(u.res)]++)] = {static_cast<int32_t>(li),
                                                                      u.mult};
    }
  }
  std::vector<uint64_t> hash(nlinks, 0);
  std::vector<int32_t> order;
  for (size_t l = 0; l < nlinks; ++l) {
    if (count[l] == count[l + 1]) continue;  // unused by this point
    const Link& link = topo_->link(static_cast<int32_t>(l));
    uint64_t h = std::hash<double>{}(link.capacity_Bps);
    if (link.faults != 0) h = hash_step(h, link.faults);
    for (int32_t k = count[l]; k < count[l + 1]; ++k)
      h = hash_step(hash_step(h, static_cast<uint64_t>(sig[static_cast<size_t>(k)].first)),
                    static_cast<uint64_t>(sig[static_cast<size_t>(k)].second));
    hash[l] = h;
    order.push_back(static_cast<int32_t>(l));
  }
  auto same = [&](int32_t a, int32_t b) {
    const auto ua = static_cast<size_t>(a), ub = static_cast<size_t>(b);
    return hash[ua] == hash[ub] && topo_->link(a).capacity_Bps == topo_->link(b).capacity_Bps &&
           topo_->link(a).faults == topo_->link(b).faults &&
           std::equal(sig.begin() + count[ua], sig.begin() + count[ua + 1], sig.begin() + count[ub],
                      sig.begin() + count[ub + 1]);
  };
  // Group by hash (stable: ascending link id within a hash), then assign class ids in
  // the order of each class's smallest link.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return hash[static_cast<size_t>(a)] < hash[static_cast<size_t>(b)];
  });
  link_class_.assign(nlinks, -1);
  std::vector<int32_t> leader(nlinks, -1);
  for (size_t i = 0; i < order.size(); ++i) {
    const int32_t l = order[i];
    int32_t& lead = leader[static_cast<size_t>(l)];
    if (i > 0 && same(order[i - 1], l)) {
      lead = leader[static_cast<size_t>(order[i - 1])];
      continue;
    }
    // A hash collision between different signatures: compare with the earlier leaders.
    for (size_t j = i;
         j-- > 0 && hash[static_cast<size_t>(order[j])] == hash[static_cast<size_t>(l)];)
      if (leader[static_cast<size_t>(order[j])] == order[j] && same(order[j], l)) {
        lead = order[j];
        break;
      }
    if (lead < 0) lead = l;
  }
  class_cap_.clear();
  std::vector<int32_t> class_size;
  for (size_t l = 0; l < nlinks; ++l) {
    if (leader[l] < 0) continue;
    const auto lead = static_cast<size_t>(leader[l]);
    if (link_class_[lead] < 0) {
      link_class_[lead] = static_cast<int32_t>(class_cap_.size());
      class_cap_.push_back(topo_->link(static_cast<int32_t>(lead)).capacity_Bps);
      class_size.push_back(0);
    }
    link_class_[l] = link_class_[lead];
    ++class_size[static_cast<size_t>(link_class_[l])];
  }
  class_link_begin_.assign(class_cap_.size() + 1, 0);
  for (size_t c = 0; c < class_size.size(); ++c)
    class_link_begin_[c + 1] = class_link_begin_[c] + class_size[c];
  class_links_.assign(static_cast<size_t>(class_link_begin_.back()), 0);
  std::vector<int32_t> at(class_link_begin_.begin(), class_link_begin_.end() - 1);
  for (size_t l = 0; l < nlinks; ++l)
    if (link_class_[l] >= 0)
      class_links_[static_cast<size_t>(at[static_cast<size_t>(link_class_[l])]++)] =
          static_cast<int32_t>(l);

  // Layout uses -> class uses (links of one class in one layout share the multiplicity).
  std::vector<ResourceUse> merged;
  for (Layout& l : layouts_) {
    merged.clear();
    for (int32_t k = 0; k < l.use_count; ++k) {
      const ResourceUse& u = uses_[static_cast<size_t>(l.use_begin + k)];
      const int32_t c = link_class_[static_cast<size_t>(u.res)];
      if (std::none_of(merged.begin(), merged.end(),
                       [&](const ResourceUse& m) { return m.res == c; }))
        merged.push_back(ResourceUse{c, u.mult});
    }
    std::sort(merged.begin(), merged.end(),
              [](const ResourceUse& a, const ResourceUse& b) { return a.res < b.res; });
    std::copy(merged.begin(), merged.end(), uses_.begin() + l.use_begin);
    l.use_count = static_cast<int32_t>(merged.size());
  }

  check_symmetry();
}

}  // namespace rapid::des
