// The process groups of a trace (docs/chakra.md "Process groups"): a collective node's
// `pg_name` is the decimal id of its group, and `<prefix>.comm_groups.json` maps each id to
// its ranks, ASTRA-sim's --comm-group-configuration format (astra-sim/workload/Workload.cc
// initialize_comm_groups: keys parsed with std::stoi, values the NPU ids; "0" or an empty
// pg_name means all ranks, so our ids start at 1).
// A group of shape (size, stride) holds the ranks base + i * stride (Megatron rank order
// tp, cp, dp, pp; docs/des.md), so a rank's group is found without materializing others.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rapid/workload/op.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid::trace {

/// First rank of the group of shape `g` that `rank` belongs to.
inline int64_t group_base(int64_t rank, const GroupShape& g) {
  return rank - ((rank / g.stride) % g.size) * g.stride;
}
/// Id of that group: 1 + kind * world + base (unique per kind and base, numeric for ASTRA-sim).
inline int64_t group_id(CommGroup kind, int64_t base, int64_t world) {
  return 1 + static_cast<int64_t>(kind) * world + base;
}

class ProcessGroups {
 public:
  /// Records the group of `rank` of shape `g` and kind `kind`; returns its id.
  int64_t add(CommGroup kind, int64_t rank, const GroupShape& g, int64_t world);
  /// Records a group read from a file (throws InputError on an id given twice).
  void insert(int64_t id, std::vector<int64_t> ranks, const std::string& file);
  const std::vector<int64_t>* find(int64_t id) const;
  size_t size() const { return groups_.size(); }
  const std::map<int64_t, std::vector<int64_t>>& groups() const { return groups_; }

  /// Writes the JSON object {"id": [ranks...], ...} to `path` (throws InputError when it
  /// cannot be written).
  void write_json(const std::string& path) const;
  /// Reads such a file; throws InputError naming the file, key and value for anything else
  /// than an object of non-negative decimal ids to arrays of distinct ranks >= 0.
  static ProcessGroups read_json(const std::string& path);

 private:
  std::map<int64_t, std::vector<int64_t>> groups_;
};

}  // namespace rapid::trace
