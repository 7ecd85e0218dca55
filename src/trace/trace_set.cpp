#include "rapid/trace/trace_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "rapid/common/error.hpp"

namespace rapid::trace {

TraceSet scan_trace_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(dir, "--from-chakra", dir, "a directory of Chakra ET files");
  TraceSet t;
  t.dir = dir;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".et") continue;
    const std::string stem = e.path().stem().string();  // prefix.rank
    const size_t dot = stem.rfind('.');
    const std::string rank = dot == std::string::npos ? "" : stem.substr(dot + 1);
    if (rank.empty() || rank.size() > 9 ||
        rank.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(e.path().string(), "file name", name,
                       "PREFIX.RANK.et with a decimal rank (ASTRA-sim's {prefix}.{npu_id}.et)");
    const std::string prefix = stem.substr(0, dot);
    if (!t.prefix.empty() && prefix != t.prefix)
      throw InputError(e.path().string(), "file name", name,
                       fmt::format("the prefix of the directory's other files, {}", t.prefix));
    t.prefix = prefix;
    t.files.emplace_back(std::stoll(rank), e.path().string());
  }
  if (t.files.empty()) throw InputError(dir, "files", "no .et file", "PREFIX.RANK.et files");
  std::sort(t.files.begin(), t.files.end());
  for (size_t i = 1; i < t.files.size(); ++i)
    if (t.files[i].first == t.files[i - 1].first)
      throw InputError(t.files[i].second, "rank", std::to_string(t.files[i].first),
                       "one file per rank (also " + t.files[i - 1].second + ")");
  const fs::path groups = fs::path(dir) / (t.prefix + ".comm_groups.json");
  if (fs::exists(groups, ec)) {
    t.groups_file = groups.string();
    t.groups = ProcessGroups::read_json(t.groups_file);
  }
  return t;
}

RankTrace read_rank_trace(int64_t rank, const std::string& file) {
  RankTrace t{rank, file, read_et_file(file)};
  const auto self = static_cast<int32_t>(rank);
  for (TraceNode& n : t.et.nodes) {
    if (n.type == NodeType::CommSend && !n.comm_src) n.comm_src = self;
    if (n.type == NodeType::CommRecv && !n.comm_dst) n.comm_dst = self;
  }
  return t;
}

}  // namespace rapid::trace
