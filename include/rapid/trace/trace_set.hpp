// A directory of Chakra ET files, `<prefix>.<rank>.et` (one prefix), and the optional
// process-group JSON `<prefix>.comm_groups.json` (docs/chakra.md "Files").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rapid/trace/et_file.hpp"
#include "rapid/trace/process_groups.hpp"

namespace rapid::trace {

struct TraceSet {
  std::string dir, prefix;
  std::vector<std::pair<int64_t, std::string>> files;  ///< (rank, path), by rank
  std::optional<ProcessGroups> groups;                 ///< the comm-group JSON, when present
  std::string groups_file;
};

/// Finds the files of `dir`. Throws InputError for a directory without .et files, files of
/// more than one prefix, a rank that is not a decimal number, or a malformed group file.
TraceSet scan_trace_dir(const std::string& dir);

/// One rank's trace as read.
struct RankTrace {
  int64_t rank = 0;
  std::string file;
  EtFile et;
};

/// Reads `file` as rank `rank`'s trace with the defaults ASTRA-sim's feeder gives missing
/// attributes: a send without `comm_src` is sent by the file's rank, a recv without
/// `comm_dst` received by it (feeder_v3 Workload::issue_comm; docs/chakra.md "Reading").
/// Every command reads a trace through here, so all see the same trace.
RankTrace read_rank_trace(int64_t rank, const std::string& file);

}  // namespace rapid::trace
