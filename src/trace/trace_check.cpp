#include "rapid/trace/trace_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "rapid/common/error.hpp"

namespace rapid::trace {

namespace {

[[noreturn]] void broken(const std::string& file, const TraceNode& n, const std::string& value,
                         const std::string& expected) {
  throw InputError(file, fmt::format("node {} ({})", n.id, n.name), value, expected);
}

void require_comm(const std::string& file, const TraceNode& n, int64_t rank) {
  if (!n.comm_size)
    broken(file, n, "no comm_size", "comm_size (int64 bytes) on a communication node");
  if (n.type == NodeType::CommColl) {
    if (!n.comm_type) broken(file, n, "no comm_type", "comm_type (int64 CollectiveCommType)");
    return;
  }
  if (!n.comm_src || !n.comm_dst || !n.comm_tag)
    broken(file, n, "a send/recv without comm_src, comm_dst or comm_tag",
           "all three (int32) on a point-to-point node");
  const bool send = n.type == NodeType::CommSend;
  const int32_t self = send ? *n.comm_src : *n.comm_dst;
  if (self != rank)
    broken(file, n, fmt::format("{} {}", send ? "comm_src" : "comm_dst", self),
           fmt::format("this file's rank {}", rank));
}

}  // namespace

void check_rank(const RankTrace& t, const ProcessGroups* groups, RankStats& st) {
  const auto& nodes = t.et.nodes;
  st = RankStats{};
  st.rank = t.rank;
  double micros = 0;  // the rank's durations so far
  std::unordered_map<uint64_t, uint32_t> index;
  index.reserve(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (!index.emplace(nodes[i].id, i).second)
      broken(t.file, nodes[i], "a node id given twice", "unique node ids");
  // Kahn's algorithm over the dependencies: what is left has a cycle.
  std::vector<uint32_t> pending(nodes.size(), 0);
  std::vector<std::vector<uint32_t>> children(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const TraceNode& n = nodes[i];
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
      for (uint64_t d : *deps) {
        const auto it = index.find(d);
        if (it == index.end())
          broken(t.file, n, fmt::format("dependency on node {}", d),
                 "dependencies on nodes of the same file (node " + std::to_string(d) +
                     " does not exist)");
        children[it->second].push_back(i);
        ++pending[i];
      }
    ++st.by_type[static_cast<size_t>(n.type)];
    micros += static_cast<double>(n.duration_micros);
    if (micros > kMaxRankMicros)
      broken(
          t.file, n, fmt::format("duration_micros {}", n.duration_micros),
          fmt::format("durations summing to at most {:.4g} us per rank (2^62 ps: the replay's "
                      "clock counts integer picoseconds){}",
                      kMaxRankMicros,
                      micros > static_cast<double>(n.duration_micros)
                          ? fmt::format("; the rank's nodes up to this one last {:.4g} us", micros)
                          : ""));
    st.duration_s = micros * 1e-6;
    if (n.type == NodeType::Comp) {
      if (n.num_ops) st.flops += static_cast<double>(*n.num_ops);
      if (n.tensor_size) st.tensor_bytes += static_cast<double>(*n.tensor_size);
    }
    if (n.is_comm()) {
      require_comm(t.file, n, t.rank);
      st.comm_bytes += static_cast<double>(*n.comm_size);
    }
    if (n.type == NodeType::CommColl && groups && n.pg_name && !n.pg_name->empty() &&
        *n.pg_name != "0") {
      const bool numeric =
          n.pg_name->size() < 19 && n.pg_name->find_first_not_of("0123456789") == std::string::npos;
      const std::vector<int64_t>* g = numeric ? groups->find(std::stoll(*n.pg_name)) : nullptr;
      if (!g) broken(t.file, n, "pg_name " + *n.pg_name, "a group id of the comm-group JSON file");
      if (std::find(g->begin(), g->end(), t.rank) == g->end())
        broken(t.file, n, "pg_name " + *n.pg_name,
               fmt::format("a group holding this file's rank {}", t.rank));
    }
  }
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  size_t done = 0;
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    ++done;
    for (uint32_t c : children[i])
      if (--pending[c] == 0) ready.push_back(c);
  }
  if (done != nodes.size()) {
    const auto it = std::find_if(pending.begin(), pending.end(), [](uint32_t p) { return p > 0; });
    broken(t.file, nodes[static_cast<size_t>(it - pending.begin())], "on a dependency cycle",
           "an acyclic graph");
  }
}

CrossRankCheck::CrossRankCheck(const TraceSet& set) : set_(set) {
  const int64_t top = set.files.empty() ? 0 : set.files.back().first + 1;
  present_.assign(static_cast<size_t>(top), false);
  for (const auto& f : set.files) present_[static_cast<size_t>(f.first)] = true;
}

bool CrossRankCheck::present(int64_t rank) const {
  return rank >= 0 && rank < static_cast<int64_t>(present_.size()) &&
         present_[static_cast<size_t>(rank)];
}

void CrossRankCheck::add(const RankTrace& t) {
  const auto file =
      static_cast<int32_t>(std::find_if(set_.files.begin(), set_.files.end(),
                                        [&](const auto& f) { return f.first == t.rank; }) -
                           set_.files.begin());
  for (const TraceNode& n : t.et.nodes) {
    if (!n.is_comm()) continue;
    Site s{file, n.id, *n.comm_size, n.comm_type.value_or(-1), n.name};
    if (n.type == NodeType::CommSend)
      sends_[{*n.comm_src, *n.comm_dst, *n.comm_tag}].push_back(std::move(s));
    else if (n.type == NodeType::CommRecv)
      recvs_[{*n.comm_src, *n.comm_dst, *n.comm_tag}].push_back(std::move(s));
    else
      colls_[{n.pg_name.value_or(""), t.rank}].push_back(std::move(s));
  }
}

void CrossRankCheck::finish(InspectReport& r) const {
  auto path = [&](const Site& s) { return set_.files[static_cast<size_t>(s.file)].second; };
  auto where = [&](const Site& s) { return fmt::format("node {} ({})", s.node, s.name); };
  auto match = [&](const std::map<P2PKey, std::vector<Site>>& mine,
                   const std::map<P2PKey, std::vector<Site>>& theirs, bool send) {
    for (const auto& [key, sites] : mine) {
      const auto [src, dst, tag] = key;
      const int64_t peer = send ? dst : src;
      if (!present(peer)) {
        r.p2p_unchecked += sites.size();
        continue;
      }
      const auto it = theirs.find(key);
      const size_t have = it == theirs.end() ? 0 : it->second.size();
      for (size_t k = 0; k < sites.size(); ++k) {
        const Site& s = sites[k];
        if (k >= have)
          throw InputError(path(s), where(s),
                           fmt::format("{} {} -> {} tag {} without its {}", send ? "send" : "recv",
                                       src, dst, tag, send ? "recv" : "send"),
                           fmt::format("a matching COMM_{}_NODE on rank {} (same source, "
                                       "destination, tag; {} there, {} here)",
                                       send ? "RECV" : "SEND", peer, have, sites.size()));
        const Site& o = it->second[k];
        if (o.size != s.size)
          throw InputError(path(s), where(s), fmt::format("comm_size {}", s.size),
                           fmt::format("the size of its peer, {} {} of {}: {}", where(o),
                                       send ? "recv" : "send", path(o), o.size));
        if (send) ++r.p2p_checked;
      }
    }
  };
  match(sends_, recvs_, true);
  match(recvs_, sends_, false);
  // Collectives: the k-th of a group on every member present; the default group is every
  // rank of the directory (ASTRA-sim's reading of a missing pg_name).
  std::vector<int64_t> every_rank;
  for (const auto& f : set_.files) every_rank.push_back(f.first);
  for (const auto& [key, sites] : colls_) {
    const auto& [pg, rank] = key;
    const std::vector<int64_t>* members = nullptr;
    if (pg.empty() || pg == "0")
      members = &every_rank;
    else if (set_.groups)
      members = set_.groups->find(std::stoll(pg));
    if (!members) {  // a named group without a group file: its members are unknown
      r.collectives_unchecked += sites.size();
      continue;
    }
    for (int64_t m : *members) {
      if (m == rank || !present(m)) continue;
      const auto it = colls_.find({pg, m});
      const size_t have = it == colls_.end() ? 0 : it->second.size();
      for (size_t k = 0; k < sites.size(); ++k) {
        const Site& s = sites[k];
        if (k >= have)
          throw InputError(path(s), where(s),
                           fmt::format("collective {} of group {} missing on rank {}", k, pg, m),
                           fmt::format("as many collectives of group {} on every member ({} "
                                       "there, {} here)",
                                       pg, have, sites.size()));
        const Site& o = it->second[k];
        if (o.size != s.size || o.type != s.type)
          throw InputError(path(s), where(s),
                           fmt::format("comm_type {} comm_size {}", s.type, s.size),
                           fmt::format("the same on every member of group {}: rank {} {} has "
                                       "comm_type {} comm_size {}",
                                       pg, m, where(o), o.type, o.size));
      }
    }
    r.collectives_checked += sites.size();
  }
}

InspectReport inspect_trace(const std::string& dir) {
  const TraceSet set = scan_trace_dir(dir);
  InspectReport r;
  CrossRankCheck cross(set);
  for (const auto& [rank, file] : set.files) {
    const RankTrace t = read_rank_trace(rank, file);
    check_rank(t, set.groups ? &*set.groups : nullptr, r.ranks.emplace_back());
    cross.add(t);
  }
  cross.finish(r);
  return r;
}

InspectReport check_traces(const TraceSet& set, const std::vector<RankTrace>& ranks) {
  InspectReport r;
  CrossRankCheck cross(set);
  for (const RankTrace& t : ranks) {
    check_rank(t, set.groups ? &*set.groups : nullptr, r.ranks.emplace_back());
    cross.add(t);
  }
  cross.finish(r);
  return r;
}

std::string describe_inspect(const TraceSet& set, const InspectReport& r) {
  std::string out = fmt::format(
      "trace       {} ranks in {} ({}.RANK.et){}\n", r.ranks.size(), set.dir, set.prefix,
      set.groups ? fmt::format(", {} process groups in {}", set.groups->size(), set.groups_file)
                 : ", no comm-group file");
  out += fmt::format("{:>6} {:>9} {:>9} {:>9} {:>9} {:>12} {:>12} {:>12}\n", "rank", "COMP", "COLL",
                     "SEND", "RECV", "TFLOP", "GB touched", "GB comm");
  RankStats total;
  for (const RankStats& s : r.ranks) {
    out += fmt::format("{:>6} {:>9} {:>9} {:>9} {:>9} {:>12.3f} {:>12.3f} {:>12.3f}\n", s.rank,
                       s.by_type[4], s.by_type[7], s.by_type[5], s.by_type[6], s.flops / 1e12,
                       s.tensor_bytes / 1e9, s.comm_bytes / 1e9);
    for (int i = 0; i < kNumNodeTypes; ++i)
      total.by_type[static_cast<size_t>(i)] += s.by_type[static_cast<size_t>(i)];
    total.flops += s.flops, total.tensor_bytes += s.tensor_bytes, total.comm_bytes += s.comm_bytes;
  }
  out += fmt::format("{:>6} {:>9} {:>9} {:>9} {:>9} {:>12.3f} {:>12.3f} {:>12.3f}\n", "total",
                     total.by_type[4], total.by_type[7], total.by_type[5], total.by_type[6],
                     total.flops / 1e12, total.tensor_bytes / 1e9, total.comm_bytes / 1e9);
  out += fmt::format(
      "checks      ok: acyclic, dependencies present; {} sends matched with their recvs ({} with "
      "a peer outside the trace); {} collectives alike on their groups ({} unchecked)\n",
      r.p2p_checked, r.p2p_unchecked, r.collectives_checked, r.collectives_unchecked);
  return out;
}

}  // namespace rapid::trace
