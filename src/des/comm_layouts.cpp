#include "rapid/des/comm_layouts.hpp"
#include "rapid/common/eval_context.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid::des {

namespace {

// Runs of consecutive members on the same node: [begin, end) offsets into `members`.
void node_runs(const Fabric& t, const std::vector<int64_t>& members,
               std::vector<std::pair<size_t, size_t>>& runs) {
  runs.clear();
  for (size_t i = 0; i < members.size(); ++i) {
    if (i == 0 || t.node_of(members[i]) != t.node_of(members[i - 1])) runs.push_back({i, i});
    runs.back().second = i + 1;
  }
}

}  // namespace

void pattern_flows(const Fabric& topo, FlowPattern pattern, const std::vector<int64_t>& m,
                   std::vector<int64_t>& src, std::vector<int64_t>& dst) {
  struct RunsSite;  // this call's buffer, in the thread's evaluation context
  std::vector<std::pair<size_t, size_t>>& runs =
      EvalContext::current().buffer<RunsSite, std::vector<std::pair<size_t, size_t>>>();
  node_runs(topo, m, runs);
  auto flow = [&](int64_t a, int64_t b) {
    if (a == b) return;
    src.push_back(a);
    dst.push_back(b);
  };
  switch (pattern) {
    case FlowPattern::IntraRing:
      for (auto [b, e] : runs)
        if (e - b >= 2)
          for (size_t j = b; j < e; ++j) flow(m[j], m[j + 1 < e ? j + 1 : b]);
      break;
    case FlowPattern::InterRing:
      if (runs.size() >= 2)
        for (size_t r = 0; r < runs.size(); ++r) {
          const auto [b, e] = runs[r];
          const auto [nb, ne] = runs[(r + 1) % runs.size()];
          for (size_t j = b; j < e; ++j) flow(m[j], m[nb + (j - b) % (ne - nb)]);
        }
      break;
    case FlowPattern::IntraChain:
      for (auto [b, e] : runs)
        for (size_t j = b; j + 1 < e; ++j) {
          flow(m[j], m[j + 1]);
          flow(m[j + 1], m[j]);
        }
      break;
    case FlowPattern::IntraPairs:
      for (auto [b, e] : runs)
        for (size_t i = b; i < e; ++i)
          for (size_t j = b; j < e; ++j) flow(m[i], m[j]);
      break;
    case FlowPattern::InterPairs:
      for (size_t i = 0; i < m.size(); ++i)
        for (size_t j = 0; j < m.size(); ++j)
          if (topo.node_of(m[i]) != topo.node_of(m[j])) flow(m[i], m[j]);
      break;
    case FlowPattern::Peer:  // send/recv inside a group (CP ring attention): the ring
      for (size_t j = 0; j < m.size(); ++j) flow(m[j], m[(j + 1) % m.size()]);
      break;
  }
}

double extra_route_latency_s(const CollectivePlan& plan, int32_t network_links,
                             double link_latency_s) {
  const int assumed = plan.crosses_spine ? 4 : 2;
  return plan.net_steps * std::max(0, network_links - assumed) * link_latency_s;
}

void CommLayouts::reset(Fabric* topo, int64_t tpcp, int64_t dp, int64_t pp, bool one_replica,
                        bool check_symmetry) {
  topo_ = topo;
  tpcp_ = tpcp;
  dp_ = dp;
  pp_ = pp;
  one_replica_ = one_replica;
  check_symmetry_ = check_symmetry;
  symmetric_ = true;
  asymmetry_.clear();
  no_route_.clear();
  layouts_.clear();
  uses_.clear();
  parts_.clear();
  flow_paths_.clear();
  path_links_.clear();
  bases_.clear();
  class_cap_.clear();
  class_links_.clear();
  class_link_begin_.clear();
  gpu_mark_.assign(static_cast<size_t>(tpcp * dp * pp), 0);
  mark_epoch_ = 0;
}

bool CommLayouts::collective(const GroupShape& g, FlowPattern pattern, int32_t inst, bool blocking,
                             bool split, std::vector<int32_t>& out, int32_t dp_stage) {
  // The group copies the instance's GPUs belong to, as their first members.
  const size_t bases_begin = bases_.size();
  ++mark_epoch_;
  const int64_t stage = stage_of(inst);
  const int64_t r0 = one_replica_ ? 0 : replica_of(inst), r1 = one_replica_ ? dp_ : r0 + 1;
  const int64_t size = std::max<int64_t>(g.size, 1), stride = std::max<int64_t>(g.stride, 1);
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t inner = 0; inner < tpcp_; ++inner) {
      const int64_t gpu = inner + tpcp_ * (r + dp_ * stage);
      const int64_t base = gpu - ((gpu / stride) % size) * stride;
      uint32_t& mark = gpu_mark_[static_cast<size_t>(base)];
      if (mark == mark_epoch_) continue;
      mark = mark_epoch_;
      bases_.push_back(base);
    }
  const size_t nbases = bases_.size() - bases_begin;
  const size_t copies = split ? nbases : 1;
  bool any = false;
  for (size_t c = 0; c < copies; ++c) {
    Layout key;
    key.size = size;
    key.stride = stride;
    key.pattern = pattern;
    key.split = split;
    key.copy = static_cast<int32_t>(c);
    key.inst = inst;
    // Existing layout with the same flows: same key and same group copies.
    const size_t kb = bases_begin + (split ? c : 0), kn = split ? 1 : nbases;
    int32_t found = -1;
    for (size_t i = 0; i < layouts_.size() && found < 0; ++i) {
      const Layout& l = layouts_[i];
      if (l.pattern != pattern || l.size != size || l.stride != stride || l.split != split ||
          l.dst_stage != -1)
        continue;
      if (static_cast<size_t>(l.base_count) != kn ||
          !std::equal(bases_.begin() + l.base_begin, bases_.begin() + l.base_begin + l.base_count,
                      bases_.begin() + static_cast<std::ptrdiff_t>(kb)))
        continue;
      found = static_cast<int32_t>(i);
    }
    if (found >= 0) {
      Layout& l = layouts_[static_cast<size_t>(found)];
      if (blocking)
        l.owner = l.owner == -1 || l.owner == inst ? inst : -2;
      else
        l.async = true;
      if (dp_stage >= 0) l.dp_stage = l.dp_stage == -1 || l.dp_stage == dp_stage ? dp_stage : -2;
      if (l.flows > 0) {
        out.push_back(found);
        any = true;
      }
      continue;
    }
    key.dp_stage = dp_stage;
    key.base_begin = static_cast<int32_t>(kb);
    key.base_count = static_cast<int32_t>(kn);
    src_.clear();
    dst_.clear();
    copy_.clear();
    for (size_t b = kb; b < kb + kn; ++b) {
      members_.clear();
      for (int64_t i = 0; i < size; ++i) members_.push_back(bases_[b] + i * stride);
      pattern_flows(*topo_, pattern, members_, src_, dst_);
      copy_.resize(src_.size(), static_cast<int32_t>(b - kb));
    }
    const int32_t id = build(key, src_, dst_, blocking);
    if (layouts_[static_cast<size_t>(id)].flows > 0) {
      out.push_back(id);
      any = true;
    }
  }
  return any;
}

int32_t CommLayouts::p2p(int32_t inst, int64_t dst_stage) {
  const int64_t stage = stage_of(inst);
  if (dst_stage == stage) return -1;
  for (size_t i = 0; i < layouts_.size(); ++i)
    if (layouts_[i].pattern == FlowPattern::Peer && layouts_[i].dst_stage == dst_stage &&
        layouts_[i].inst == inst)
      return static_cast<int32_t>(i);
  src_.clear();
  dst_.clear();
  copy_.clear();
  const int64_t r0 = one_replica_ ? 0 : replica_of(inst), r1 = one_replica_ ? dp_ : r0 + 1;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t inner = 0; inner < tpcp_; ++inner) {
      src_.push_back(inner + tpcp_ * (r + dp_ * stage));
      dst_.push_back(inner + tpcp_ * (r + dp_ * dst_stage));
      copy_.push_back(static_cast<int32_t>(r));
    }
  Layout key;
  key.pattern = FlowPattern::Peer;
  key.dst_stage = dst_stage;
  key.inst = inst;
  return build(key, src_, dst_, false);
}

int64_t CommLayouts::mesh_members(const Layout& key, int64_t gpu) const {
  if (!topo_->full_mesh()) return 0;
  if (key.dst_stage != -1) return 2;  // pipeline send/recv: the two stages' GPUs
  // The members of `gpu`'s group copy on its node (the bases of collective()).
  const int64_t size = std::max<int64_t>(key.size, 1), stride = std::max<int64_t>(key.stride, 1);
  const int64_t base = gpu - ((gpu / stride) % size) * stride;
  int64_t members = 0;
  for (int64_t i = 0; i < size; ++i)
    members += topo_->node_of(base + i * stride) == topo_->node_of(gpu) ? 1 : 0;
  return members;
}

int32_t CommLayouts::build(Layout key, const std::vector<int64_t>& src,
                           const std::vector<int64_t>& dst, bool blocking) {
  RAPID_ASSERT(class_cap_.empty(), "layouts are requested before finalize()");
  key.owner = blocking ? key.inst : -1;
  key.async = !blocking;
  key.use_begin = static_cast<int32_t>(uses_.size());
  key.part_begin = static_cast<int32_t>(parts_.size());
  key.path_begin = static_cast<int32_t>(flow_paths_.size());
  key.flows = static_cast<int32_t>(src.size());
  touched_.clear();
  const size_t first_part = parts_.size();
  for (size_t f = 0; f < src.size(); ++f) {
    route_.clear();
    if (!topo_->route(src[f], dst[f], route_, mesh_members(key, src[f]))) {
      if (no_route_.empty())
        no_route_ = fmt::format("gpu {} -> gpu {}: {}", src[f], dst[f], topo_->route_failure());
      continue;
    }
    if (link_count_.size() < static_cast<size_t>(topo_->num_links()))
      link_count_.resize(static_cast<size_t>(topo_->num_links()), 0);
    int32_t net = 0;
    for (int32_t l : route_) {
      if (link_count_[static_cast<size_t>(l)]++ == 0) touched_.push_back(l);
      net += topo_->link(l).network() ? 1 : 0;
    }
    key.network_links = std::max(key.network_links, net);
    parts_.push_back(instance_of_gpu(src[f]));
    parts_.push_back(instance_of_gpu(dst[f]));
    const auto replica = static_cast<int32_t>((src[f] / tpcp_) % dp_);
    key.joins_replicas = key.joins_replicas || replica != (dst[f] / tpcp_) % dp_;
    if (check_symmetry_) {
      flow_paths_.push_back(FlowPath{replica, copy_[f], static_cast<int32_t>(path_links_.size()),
                                     static_cast<int32_t>(route_.size())});
      path_links_.insert(path_links_.end(), route_.begin(), route_.end());
    }
  }
  std::sort(parts_.begin() + static_cast<std::ptrdiff_t>(first_part), parts_.end());
  parts_.erase(std::unique(parts_.begin() + static_cast<std::ptrdiff_t>(first_part), parts_.end()),
               parts_.end());
  key.part_count = static_cast<int32_t>(parts_.size() - first_part);
  key.path_count = static_cast<int32_t>(flow_paths_.size()) - key.path_begin;
  std::sort(touched_.begin(), touched_.end());
  for (int32_t l : touched_) {
    uses_.push_back(ResourceUse{l, link_count_[static_cast<size_t>(l)]});
    link_count_[static_cast<size_t>(l)] = 0;
  }
  key.use_count = static_cast<int32_t>(uses_.size()) - key.use_begin;
  layouts_.push_back(key);
  return static_cast<int32_t>(layouts_.size()) - 1;
}

std::span<const ResourceUse> CommLayouts::uses(int32_t layout) const {
  const Layout& l = layouts_[static_cast<size_t>(layout)];
  return {uses_.data() + l.use_begin, static_cast<size_t>(l.use_count)};
}

std::span<const int32_t> CommLayouts::participants(int32_t layout) const {
  const Layout& l = layouts_[static_cast<size_t>(layout)];
  return {parts_.data() + l.part_begin, static_cast<size_t>(l.part_count)};
}

std::span<const int32_t> CommLayouts::class_links(int32_t c) const {
  const auto b = static_cast<size_t>(class_link_begin_[static_cast<size_t>(c)]);
  const auto e = static_cast<size_t>(class_link_begin_[static_cast<size_t>(c) + 1]);
  return {class_links_.data() + b, e - b};
}

}  // namespace rapid::des
