#include "rapid/trace/trace_writer.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/trace/et_file.hpp"

namespace rapid::trace {

std::string comm_groups_path(const std::string& dir, const std::string& prefix) {
  return (std::filesystem::path(dir) / (prefix + ".comm_groups.json")).string();
}

TraceWriteSummary write_trace(const TraceInputs& in, const TraceMetadata& meta,
                              const std::string& dir, const std::string& prefix, int64_t first,
                              int64_t last) {
  RankTraceBuilder builder(in);
  const int64_t world = builder.world_size();
  if (first < 0 || last < first || last >= world)
    throw InputError("<command line>", "--ranks", fmt::format("{}-{}", first, last),
                     fmt::format("ranks within 0-{} (the layout's GPUs)", world - 1));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError("<command line>", "-o", dir, "a directory that can be created");
  std::vector<std::string> written;
  auto cleanup = [&] {
    for (const std::string& f : written) std::filesystem::remove(f, ec);
  };
  TraceWriteSummary sum;
  try {
    ProcessGroups groups;
    std::vector<TraceNode> nodes;
    TraceMetadata m = meta;
    m.world_size = world;
    m.gpus_per_node = in.gpus_per_node;
    for (int64_t r = first; r <= last; ++r) {
      builder.build(r, nodes, groups);
      m.rank = r;
      const std::string path = et_path(dir, prefix, r);
      EtWriter out(path, m);
      for (const TraceNode& n : nodes) {
        out.write(n);
        ++sum.by_type[static_cast<size_t>(n.type)];
      }
      out.close();
      written.push_back(path);
      sum.nodes += nodes.size();
      sum.bytes += out.bytes_written();
    }
    sum.groups_file = comm_groups_path(dir, prefix);
    groups.write_json(sum.groups_file);
    written.push_back(sum.groups_file);
    sum.groups = groups.size();
  } catch (...) {
    cleanup();
    throw;
  }
  sum.ranks = last - first + 1;
  return sum;
}

}  // namespace rapid::trace
