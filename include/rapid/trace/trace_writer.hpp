// `rapid trace`: a workload's ranks written as Chakra ET files, one rank at a time (the
// memory held is one rank's nodes plus the process-group table), and the process groups
// as ASTRA-sim's comm-group JSON (docs/chakra.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "rapid/trace/rank_trace.hpp"

namespace rapid::trace {

struct TraceWriteSummary {
  int64_t ranks = 0;
  uint64_t nodes = 0, bytes = 0;
  std::array<uint64_t, kNumNodeTypes> by_type{};
  size_t groups = 0;
  std::string groups_file;
};

/// Writes ranks [first, last] of `in`'s workload to `dir`/`prefix`.<rank>.et and the groups
/// they use to `dir`/`prefix`.comm_groups.json. `meta` gives the metadata's job and layout
/// (rank and world size are filled in). Throws InputError for a range outside the job or a
/// directory that cannot be written; then no file of this call is left behind.
TraceWriteSummary write_trace(const TraceInputs& in, const TraceMetadata& meta,
                              const std::string& dir, const std::string& prefix, int64_t first,
                              int64_t last);

/// `dir`/`prefix`.comm_groups.json.
std::string comm_groups_path(const std::string& dir, const std::string& prefix);

}  // namespace rapid::trace
