#include "rapid/trace/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <unordered_map>

#include "rapid/common/error.hpp"
#include "rapid/des/event_queue.hpp"

namespace rapid::trace {

namespace {

using des::SimTime;

std::optional<CollectiveKind> collective_kind(int64_t comm_type) {
  switch (static_cast<CommType>(comm_type)) {
    case CommType::AllReduce:
      return CollectiveKind::AllReduce;
    case CommType::AllGather:
      return CollectiveKind::AllGather;
    case CommType::ReduceScatter:
    case CommType::ReduceScatterBlock:
      return CollectiveKind::ReduceScatter;
    case CommType::AllToAll:
      return CollectiveKind::AllToAll;
    default:
      return std::nullopt;  // REDUCE, GATHER, SCATTER, BROADCAST, BARRIER: recorded
  }
}

class Replay {
 public:
  Replay(const std::vector<RankTrace>& ranks, const ProcessGroups* groups, const ReplayInputs& in)
      : ranks_(ranks), groups_(groups), in_(in) {}

  ReplayResult run();

 private:
  struct Rendezvous {
    size_t needed = 0;
    SimTime start = 0;
    std::vector<uint32_t> nodes;
  };
  struct Transfer {
    SimTime arrival = -1, posted = -1;
    int64_t recv = -1;
  };

  const TraceNode& node(uint32_t g) const {
    return ranks_[pos_of_[g]].et.nodes[g - offset_[pos_of_[g]]];
  }
  const std::string& file(uint32_t g) const { return ranks_[pos_of_[g]].file; }
  [[noreturn]] void fail(uint32_t g, const std::string& value, const std::string& expected) const {
    const TraceNode& n = node(g);
    throw InputError(file(g), fmt::format("node {} ({})", n.id, n.name), value, expected);
  }
  void schedule(SimTime t, uint32_t g) { queue_.push({t, seq_++, g}); }
  void start(uint32_t g, SimTime now);
  SimTime compute_ps(uint32_t g);
  SimTime comm_ps(uint32_t g, CollectiveKind kind, const std::vector<int64_t>* members);
  const std::vector<int64_t>* members(uint32_t g);
  size_t position(uint32_t g, int64_t rank) const;

  const std::vector<RankTrace>& ranks_;
  const ProcessGroups* groups_;
  const ReplayInputs& in_;
  std::vector<uint32_t> offset_, pos_of_;
  std::unordered_map<int64_t, size_t> pos_;  // rank -> position in ranks_
  std::vector<uint32_t> pending_, child_begin_, children_;
  std::vector<SimTime> end_;
  std::vector<uint32_t> kth_;  // the node's index among its rank's same-key comm nodes
  std::vector<SimTime> free_;  // compute stream of each rank
  std::map<std::pair<std::string, uint32_t>, Rendezvous> colls_;
  std::map<std::tuple<int64_t, int64_t, int64_t, uint32_t>, Transfer> p2p_;
  std::vector<int64_t> all_ranks_;
  struct Ev {
    SimTime t;
    uint64_t seq;
    uint32_t g;
    bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> queue_;
  uint64_t seq_ = 0;
  ReplayResult res_;
};

size_t Replay::position(uint32_t g, int64_t rank) const {
  const auto it = pos_.find(rank);
  if (it == pos_.end())
    fail(g, fmt::format("peer rank {}", rank),
         "a rank whose file is in the trace (a replay needs every rank of the job)");
  return it->second;
}

const std::vector<int64_t>* Replay::members(uint32_t g) {
  const TraceNode& n = node(g);
  const std::string pg = n.pg_name.value_or("");
  if (pg.empty() || pg == "0") return &all_ranks_;
  const bool numeric = pg.size() < 19 && pg.find_first_not_of("0123456789") == std::string::npos;
  const std::vector<int64_t>* m = groups_ && numeric ? groups_->find(std::stoll(pg)) : nullptr;
  if (!m) fail(g, "pg_name " + pg, "a group of the trace's comm-group JSON file");
  for (int64_t r : *m) position(g, r);
  return m;
}

SimTime Replay::compute_ps(uint32_t g) {
  const TraceNode& n = node(g);
  const size_t pos = pos_of_[g];
  const double slow = pos < in_.slowdown.size() ? in_.slowdown[pos] : 1.0;
  if (n.type != NodeType::Comp || n.is_cpu_op) {
    ++res_.by_duration;
    return static_cast<SimTime>(n.duration_micros) * 1'000'000;
  }
  if (n.rapid_op) {
    ++res_.by_model;
    const RapidOp& r = *n.rapid_op;
    if (r.kind == RapidOpKind::Optimizer)
      return des::to_ps(in_.compute->memory_time(r.bytes) * slow);
    Op op;
    op.name = n.name.c_str();
    op.kind = static_cast<OpKind>(r.kind);
    op.m = r.m, op.n = r.n, op.k = r.k, op.batch = r.batch;
    op.causal = r.causal, op.fp8 = r.fp8, op.gqa_group = static_cast<uint16_t>(r.gqa_group);
    op.flops = r.flops, op.bytes = r.bytes;
    return des::to_ps(in_.compute->time(op) / in_.step_efficiency * slow);
  }
  if (n.num_ops || n.tensor_size) {
    ++res_.by_roofline;
    const double flops = static_cast<double>(n.num_ops.value_or(0));
    const double bytes = static_cast<double>(n.tensor_size.value_or(0));
    const double t = std::max(flops / in_.compute->peak_FLOPs(), in_.compute->memory_time(bytes));
    return des::to_ps(t / in_.step_efficiency * slow);
  }
  ++res_.by_duration;
  return static_cast<SimTime>(n.duration_micros) * 1'000'000;
}

SimTime Replay::comm_ps(uint32_t g, CollectiveKind kind, const std::vector<int64_t>* m) {
  const TraceNode& n = node(g);
  const double bytes = n.rapid_bytes.value_or(static_cast<double>(n.comm_size.value_or(0)));
  GroupShape shape;
  if (n.rapid_group) {
    const RapidGroup& r = *n.rapid_group;
    shape = GroupShape{r.size, r.per_node, r.nodes, r.stride};
  } else if (m) {  // the group's ranks: size, and the stride of an arithmetic set
    std::vector<int64_t> s = *m;
    std::sort(s.begin(), s.end());
    int64_t stride = s.size() > 1 ? s[1] - s[0] : 1;
    for (size_t i = 2; i < s.size(); ++i)
      if (s[i] - s[i - 1] != stride) stride = 1;
    shape = group_shape(static_cast<int64_t>(s.size()), std::max<int64_t>(stride, 1),
                        in_.gpus_per_node);
  } else {  // a transfer between two ranks
    const int64_t d = std::abs(int64_t{*n.comm_dst} - *n.comm_src);
    shape = group_shape(2, std::max<int64_t>(d, 1), in_.gpus_per_node);
  }
  // As the DES: the plan's latency, then the tiers' bytes drained (rounded up).
  const CollectivePlan plan = in_.collective->plan(kind, bytes, shape);
  SimTime drain = 0;
  for (int t = 0; t < plan.num_tiers; ++t)
    drain = std::max(drain, des::to_ps_ceil(plan.tiers[static_cast<size_t>(t)].time_s()));
  return des::to_ps(plan.latency_s) + drain;
}

void Replay::start(uint32_t g, SimTime now) {
  const TraceNode& n = node(g);
  const size_t pos = pos_of_[g];
  if (n.type == NodeType::CommColl) {
    const auto kind = collective_kind(*n.comm_type);
    if (!kind) {
      schedule(now + static_cast<SimTime>(n.duration_micros) * 1'000'000, g);
      return;
    }
    const std::vector<int64_t>* m = members(g);
    Rendezvous& rv = colls_[{n.pg_name.value_or(""), kth_[g]}];
    if (rv.nodes.empty()) rv.needed = m->size();
    rv.start = std::max(rv.start, now);
    rv.nodes.push_back(g);
    if (rv.nodes.size() < rv.needed) return;
    const SimTime end = rv.start + comm_ps(g, *kind, m);
    for (uint32_t x : rv.nodes) schedule(end, x);
    return;
  }
  if (n.type == NodeType::CommSend || n.type == NodeType::CommRecv) {
    position(g, n.type == NodeType::CommSend ? *n.comm_dst : *n.comm_src);
    Transfer& tr = p2p_[{*n.comm_src, *n.comm_dst, *n.comm_tag, kth_[g]}];
    if (n.type == NodeType::CommSend) {
      const SimTime end = now + comm_ps(g, CollectiveKind::SendRecv, nullptr);
      schedule(end, g);
      tr.arrival = end;
      if (tr.recv >= 0) schedule(std::max(tr.posted, end), static_cast<uint32_t>(tr.recv));
    } else {
      tr.posted = now;
      tr.recv = g;
      if (tr.arrival >= 0) schedule(std::max(now, tr.arrival), g);
    }
    return;
  }
  const SimTime d = compute_ps(g);
  if (n.type == NodeType::Comp && !n.is_cpu_op) {
    const SimTime s = std::max(now, free_[pos]);
    free_[pos] = s + d;
    schedule(s + d, g);
  } else {
    schedule(now + d, g);
  }
}

ReplayResult Replay::run() {
  RAPID_ASSERT(in_.compute && in_.collective, "a replay needs its cost models");
  uint32_t total = 0;
  for (size_t p = 0; p < ranks_.size(); ++p) {
    offset_.push_back(total);
    if (!pos_.emplace(ranks_[p].rank, p).second)
      throw InputError(ranks_[p].file, "rank", std::to_string(ranks_[p].rank), "one file per rank");
    all_ranks_.push_back(ranks_[p].rank);
    total += static_cast<uint32_t>(ranks_[p].et.nodes.size());
  }
  pos_of_.resize(total);
  pending_.assign(total, 0);
  end_.assign(total, -1);
  kth_.assign(total, 0);
  free_.assign(ranks_.size(), 0);
  std::vector<std::vector<uint32_t>> kids(total);
  for (size_t p = 0; p < ranks_.size(); ++p) {
    const auto& nodes = ranks_[p].et.nodes;
    std::unordered_map<uint64_t, uint32_t> local;
    std::map<std::string, uint32_t> coll_seen;
    std::map<std::tuple<int64_t, int64_t, int64_t>, uint32_t> p2p_seen;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      pos_of_[offset_[p] + i] = static_cast<uint32_t>(p);
      local.emplace(nodes[i].id, offset_[p] + i);
    }
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      const uint32_t g = offset_[p] + i;
      const TraceNode& n = nodes[i];
      for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
        for (uint64_t d : *deps) {
          const auto it = local.find(d);
          if (it == local.end())
            fail(g, fmt::format("dependency on node {}", d), "dependencies on nodes of the file");
          kids[it->second].push_back(g);
          ++pending_[g];
        }
      if (n.type == NodeType::CommColl) {
        if (!n.comm_type || !n.comm_size)
          fail(g, "no comm_type or comm_size", "both on a collective");
        kth_[g] = coll_seen[n.pg_name.value_or("")]++;
      } else if (n.type == NodeType::CommSend || n.type == NodeType::CommRecv) {
        if (!n.comm_src || !n.comm_dst || !n.comm_tag || !n.comm_size)
          fail(g, "a send/recv without comm_src, comm_dst, comm_tag or comm_size", "all four");
        kth_[g] = p2p_seen[{*n.comm_src, *n.comm_dst, *n.comm_tag}]++;
      }
    }
  }
  child_begin_.assign(total + 1, 0);
  for (uint32_t g = 0; g < total; ++g)
    child_begin_[g + 1] = child_begin_[g] + static_cast<uint32_t>(kids[g].size());
  children_.reserve(child_begin_[total]);
  for (auto& k : kids) children_.insert(children_.end(), k.begin(), k.end());
  kids.clear();

  std::vector<SimTime> ready(total, 0);
  for (uint32_t g = 0; g < total; ++g)
    if (pending_[g] == 0) start(g, 0);
  while (!queue_.empty()) {
    const Ev e = queue_.top();
    queue_.pop();
    ++res_.events;
    end_[e.g] = e.t;
    for (uint32_t c = child_begin_[e.g]; c < child_begin_[e.g + 1]; ++c) {
      const uint32_t x = children_[c];
      ready[x] = std::max(ready[x], e.t);
      if (--pending_[x] == 0) start(x, ready[x]);
    }
  }
  res_.rank_end_s.assign(ranks_.size(), 0);
  SimTime step = 0;
  for (uint32_t g = 0; g < total; ++g) {
    if (end_[g] < 0)
      fail(g, "never starts (a dependency, its collective's peers or its send never complete)",
           "a trace whose every node can run");
    const size_t p = pos_of_[g];
    res_.rank_end_s[p] = std::max(res_.rank_end_s[p], des::to_seconds(end_[g]));
    if (end_[g] > step) step = end_[g], res_.critical_rank = ranks_[p].rank;
  }
  res_.step_time_s = des::to_seconds(step);
  res_.nodes = total;
  return res_;
}

}  // namespace

ReplayResult replay_traces(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                           const ReplayInputs& in) {
  return Replay(ranks, groups, in).run();
}

}  // namespace rapid::trace
