#include "rapid/trace/process_groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rapid/common/error.hpp"

namespace rapid::trace {

int64_t ProcessGroups::add(CommGroup kind, int64_t rank, const GroupShape& g, int64_t world) {
  const int64_t base = group_base(rank, g);
  const int64_t id = group_id(kind, base, world);
  auto [it, fresh] = groups_.try_emplace(id);
  if (fresh)
    for (int64_t i = 0; i < g.size; ++i) it->second.push_back(base + i * g.stride);
  return id;
}

void ProcessGroups::insert(int64_t id, std::vector<int64_t> ranks, const std::string& file) {
  if (!groups_.emplace(id, std::move(ranks)).second)
    throw InputError(file, std::to_string(id), "given twice", "one entry per group id");
}

const std::vector<int64_t>* ProcessGroups::find(int64_t id) const {
  const auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

void ProcessGroups::write_json(const std::string& path) const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [id, ranks] : groups_) j[std::to_string(id)] = ranks;
  std::ofstream out(path);
  out << j.dump() << '\n';
  if (!out) throw InputError(path, "-o", path, "a writable file");
}

ProcessGroups ProcessGroups::read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "file", path, "a readable process-group JSON file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, "JSON", e.what(), "a JSON object of group ids to rank arrays");
  }
  if (!j.is_object())
    throw InputError(path, "<root>", j.type_name(), "an object of group ids to rank arrays");
  ProcessGroups pg;
  for (const auto& [key, value] : j.items()) {
    if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(path, key, key, "a decimal group id (ASTRA-sim parses it with std::stoi)");
    if (!value.is_array()) throw InputError(path, key, value.dump(), "an array of ranks");
    std::vector<int64_t> ranks;
    for (const auto& r : value) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0)
        throw InputError(path, key, r.dump(), "ranks: integers >= 0");
      ranks.push_back(r.get<int64_t>());
    }
    std::vector<int64_t> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw InputError(path, key, value.dump(), "distinct ranks");
    pg.insert(std::stoll(key), std::move(ranks), path);
  }
  return pg;
}

}  // namespace rapid::trace
