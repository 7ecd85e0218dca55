#include "rapid/trace/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "rapid/common/error.hpp"
#include "rapid/des/event_queue.hpp"
#include "rapid/trace/replay_network.hpp"
#include "replay_compute.hpp"

namespace rapid::trace {

namespace {

using des::SimTime;

// Event kinds: a node ends (target: node); a bundle drains (target: bundle, data: its
// version); a communication's last drain plus latency is reached (target: comm); a timed
// link fault starts or ends (target: its index in the fabric's fault_times()).
enum Kind : uint32_t { kNodeEnd = 0, kDrain = 1, kCommDone = 2, kFault = 3 };

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
      : ranks_(ranks), groups_(groups), in_(in), compute_(in, res_) {}

  ReplayResult run();

 private:
  struct Rendezvous {
    size_t needed = 0;
    std::vector<uint32_t> nodes;
  };
  struct Transfer {
    SimTime arrival = -1, posted = -1;
    int64_t recv = -1;
  };
  // A communication on the network: its nodes end `latency` after its last bundle drains.
  struct Comm {
    int32_t pending = 0;
    SimTime latency = 0;
    std::vector<uint32_t> nodes;
    Transfer* transfer = nullptr;  // a send's
  };

  const TraceNode& node(uint32_t g) const {
    return ranks_[pos_of_[g]].et.nodes[g - offset_[pos_of_[g]]];
  }
  const std::string& file(uint32_t g) const { return ranks_[pos_of_[g]].file; }
  [[noreturn]] void fail(uint32_t g, const std::string& value, const std::string& expected) const {
    const TraceNode& n = node(g);
    throw InputError(file(g), fmt::format("node {} ({})", n.id, n.name), value, expected);
  }
  void schedule(SimTime t, uint32_t g) { queue_.push(t, kNodeEnd, static_cast<int32_t>(g)); }
  void start(uint32_t g, SimTime now);
  GroupShape shape(uint32_t g, const std::vector<int64_t>* members) const;
  /// Starts the flows of communication node g (a collective of `members`, else a send).
  void start_comm(uint32_t g, CollectiveKind kind, const std::vector<int64_t>* members,
                  std::vector<uint32_t> nodes, Transfer* transfer);
  void push_changed();
  void comm_done(int32_t c);
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
  std::vector<Comm> comms_;
  std::vector<int32_t> free_comms_;
  ReplayNetwork net_;
  SimTime now_ = 0;
  des::EventQueue queue_;
  ReplayResult res_;
  ReplayCompute compute_;
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

GroupShape Replay::shape(uint32_t g, const std::vector<int64_t>* m) const {
  const TraceNode& n = node(g);
  const int64_t per_node = in_.network->gpus_per_node;
  if (n.rapid_group) {
    const RapidGroup& r = *n.rapid_group;
    return GroupShape{r.size, r.per_node, r.nodes, r.stride};
  }
  if (m) {  // the group's ranks: size, and the stride of an arithmetic set
    int64_t stride = m->size() > 1 ? (*m)[1] - (*m)[0] : 1;
    for (size_t i = 2; i < m->size(); ++i)
      if ((*m)[i] - (*m)[i - 1] != stride) stride = 1;
    return group_shape(static_cast<int64_t>(m->size()), std::max<int64_t>(stride, 1), per_node);
  }
  const int64_t d = std::abs(int64_t{*n.comm_dst} - *n.comm_src);  // a transfer
  return group_shape(2, std::max<int64_t>(d, 1), per_node);
}

void Replay::push_changed() {
  for (int32_t b : net_.changed()) queue_.push(net_.drain_time(b), kDrain, b, net_.version(b));
}

void Replay::start_comm(uint32_t g, CollectiveKind kind, const std::vector<int64_t>* m,
                        std::vector<uint32_t> nodes, Transfer* transfer) {
  const TraceNode& n = node(g);
  const GroupShape group = shape(g, m);
  // comm_size is each rank's input for an all-gather (ASTRA-sim's convention, as we write
  // it); our collective model takes the gathered output (docs/chakra.md "Collective sizes").
  const double bytes = n.rapid_bytes.value_or(
      static_cast<double>(n.comm_size.value_or(0)) *
      (kind == CollectiveKind::AllGather ? static_cast<double>(group.size) : 1.0));
  const CollectivePlan plan = in_.collective->plan(kind, bytes, group);
  int32_t c;
  if (free_comms_.empty()) {
    c = static_cast<int32_t>(comms_.size());
    comms_.emplace_back();
  } else {
    c = free_comms_.back();
    free_comms_.pop_back();
  }
  Comm& comm = comms_[static_cast<size_t>(c)];
  comm.nodes = std::move(nodes);
  comm.transfer = transfer;
  static const std::vector<int64_t> kNone;
  comm.pending = net_.start(now_, plan, m ? *m : kNone, m ? 0 : *n.comm_src, m ? 0 : *n.comm_dst,
                            static_cast<uint64_t>(c), &comm.latency);
  if (comm.pending < 0) {
    if (res_.no_route.empty()) res_.no_route = net_.no_route_reason();
    comm.pending = 0;  // it ends after its latency: the step's time is void anyway
  }
  if (comm.pending == 0) queue_.push(now_ + comm.latency, kCommDone, c);
  push_changed();
}

void Replay::comm_done(int32_t c) {
  Comm& comm = comms_[static_cast<size_t>(c)];
  for (uint32_t x : comm.nodes) schedule(now_, x);
  if (Transfer* tr = comm.transfer) {
    tr->arrival = now_;
    if (tr->recv >= 0) schedule(std::max(tr->posted, now_), static_cast<uint32_t>(tr->recv));
  }
  comm.nodes.clear();
  free_comms_.push_back(c);
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
    rv.nodes.push_back(g);
    if (rv.nodes.size() < rv.needed) return;
    start_comm(g, *kind, m, std::move(rv.nodes), nullptr);
    colls_.erase({n.pg_name.value_or(""), kth_[g]});
    return;
  }
  if (n.type == NodeType::CommSend || n.type == NodeType::CommRecv) {
    position(g, n.type == NodeType::CommSend ? *n.comm_dst : *n.comm_src);
    Transfer& tr = p2p_[{*n.comm_src, *n.comm_dst, *n.comm_tag, kth_[g]}];
    if (n.type == NodeType::CommSend) {
      start_comm(g, CollectiveKind::SendRecv, nullptr, {g}, &tr);
    } else {
      tr.posted = now;
      tr.recv = g;
      if (tr.arrival >= 0) schedule(std::max(now, tr.arrival), g);
    }
    return;
  }
  OpEnergy work;
  const SimTime d = compute_.time(n, ranks_[pos].rank, in_.record_power ? &work : nullptr);
  if (n.type == NodeType::Comp && !n.is_cpu_op) {
    const SimTime s = std::max(now, free_[pos]);
    free_[pos] = s + d;
    schedule(s + d, g);
    if (in_.record_power && d > 0) res_.power[pos].push_back({s, s + d, d, work});
  } else {
    schedule(now + d, g);
  }
}

ReplayResult Replay::run() {
  RAPID_ASSERT(in_.compute && in_.collective && in_.network, "a replay needs its models");
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
  if (in_.record_power) res_.power.assign(ranks_.size(), {});
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

  int64_t gpus = 0;
  for (int64_t r : all_ranks_) gpus = std::max(gpus, r + 1);
  if (!net_.reset(*in_.network, in_.collective->nvlink_Bps(), gpus, in_.link_faults,
                  in_.most_loaded ? &*in_.most_loaded : nullptr))
    throw InputError(in_.network->name, "torus_dims", "a grid smaller than the trace's nodes",
                     fmt::format("a grid with a router for each of the {} ranks' nodes", gpus));
  for (size_t k = 0; k < net_.fault_times().size(); ++k)
    queue_.push(des::to_ps(net_.fault_times()[k]), kFault, static_cast<int32_t>(k));
  std::vector<SimTime> ready(total, 0);
  for (uint32_t g = 0; g < total; ++g)
    if (pending_[g] == 0) start(g, 0);
  while (!queue_.empty()) {
    const des::Event e = queue_.pop();
    now_ = e.time;
    ++res_.events;
    if (e.kind == kDrain) {
      if (!net_.current(e.target, static_cast<uint32_t>(e.data))) continue;  // stale
      const auto c = static_cast<int32_t>(net_.finish(now_, e.target));
      push_changed();
      if (--comms_[static_cast<size_t>(c)].pending == 0)
        queue_.push(now_ + comms_[static_cast<size_t>(c)].latency, kCommDone, c);
      continue;
    }
    if (e.kind == kCommDone) {
      comm_done(e.target);
      continue;
    }
    if (e.kind == kFault) {
      net_.fault_change(now_, static_cast<size_t>(e.target));
      push_changed();
      continue;
    }
    const auto g = static_cast<uint32_t>(e.target);
    end_[g] = e.time;
    for (uint32_t c = child_begin_[g]; c < child_begin_[g + 1]; ++c) {
      const uint32_t x = children_[c];
      ready[x] = std::max(ready[x], e.time);
      if (--pending_[x] == 0) start(x, ready[x]);
    }
  }
  res_.bundles = net_.bundles_started();
  res_.peak_flows = net_.peak_flows();
  if (const int32_t l = net_.busiest_link(); l >= 0) {
    res_.busiest = net_.link(l).ref();
    res_.busiest_link = net_.link_name(l);
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
  res_.step_time_s = res_.no_route.empty() ? des::to_seconds(step) : 0.0;
  res_.nodes = total;
  return res_;
}

}  // namespace

ReplayResult replay_traces(const std::vector<RankTrace>& ranks, const ProcessGroups* groups,
                           const ReplayInputs& in) {
  return Replay(ranks, groups, in).run();
}

}  // namespace rapid::trace
