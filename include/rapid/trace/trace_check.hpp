// `rapid trace inspect DIR`: each rank's counts and the graph checks (docs/chakra.md
// "Inspect"). Ranks are read one at a time; across ranks only the point-to-point and
// collective signatures are kept. A broken trace throws InputError naming the file, the
// node id and name, and the problem:
//  - per rank: node ids unique, durations within the replay's clock (kMaxRankMicros), every
//  ctrl/data dependency present, no cycle, a send's
//    comm_src / a recv's comm_dst is the rank itself, communication nodes carry their size
//    (and type, tag, peer), a collective's pg_name is a group of the group file that holds
//    the rank;
//  - across ranks: every send has a recv on its destination with the same source, tag and
//    size (k-th send of a (src, dst, tag) to the k-th recv), and the k-th collective of a
//    group has the same type and size on every member in the trace. Peers whose files are
//    not in the directory (`--ranks`) are counted as unchecked, not errors.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "rapid/trace/trace_set.hpp"

namespace rapid::trace {

struct RankStats {
  int64_t rank = 0;
  std::array<uint64_t, kNumNodeTypes> by_type{};
  double flops = 0;         ///< num_ops of compute nodes
  double tensor_bytes = 0;  ///< tensor_size of compute nodes
  double comm_bytes = 0;    ///< comm_size of communication nodes
  double duration_s = 0;    ///< duration_micros of every node, summed
};

struct InspectReport {
  std::vector<RankStats> ranks;
  uint64_t p2p_checked = 0, p2p_unchecked = 0;
  uint64_t collectives_checked = 0, collectives_unchecked = 0;
};

/// Checks one rank's graph (the per-rank list above); fills `stats`.
void check_rank(const RankTrace& t, const ProcessGroups* groups, RankStats& stats);

/// Matches sends with recvs and collectives across the ranks added.
class CrossRankCheck {
 public:
  explicit CrossRankCheck(const TraceSet& set);
  void add(const RankTrace& t);
  /// Throws for the first unmatched send or recv, or a collective that differs.
  void finish(InspectReport& r) const;

 private:
  struct Site {
    int32_t file = 0;
    uint64_t node = 0;
    int64_t size = 0;
    int64_t type = 0;
    std::string name;
  };
  using P2PKey = std::tuple<int64_t, int64_t, int64_t>;  // src, dst, tag
  const TraceSet& set_;
  std::vector<bool> present_;       // by rank
  std::vector<int64_t> all_ranks_;  // the files' ranks: the default group's members
  std::map<P2PKey, std::vector<Site>> sends_, recvs_;
  std::map<std::pair<std::string, int64_t>, std::vector<Site>> colls_;  // (pg, rank)
  bool present(int64_t rank) const;
};

/// Reads every file of `dir` (read_rank_trace, one at a time) and runs both checks.
InspectReport inspect_trace(const std::string& dir);

/// Both checks on ranks already read: what `rapid predict --from-chakra` runs before it
/// replays, so a trace it takes is one `rapid trace inspect` takes, with the same message
/// for each fault.
InspectReport check_traces(const TraceSet& set, const std::vector<RankTrace>& ranks);

/// The most microseconds one rank's nodes may last in all: 2^62 ps (the replay's clock
/// counts integer picoseconds in an int64; half its range, the rest left to waits).
inline constexpr double kMaxRankMicros = 4611686018427.387904;

/// The report as text (`rapid trace inspect`).
std::string describe_inspect(const TraceSet& set, const InspectReport& r);

}  // namespace rapid::trace
