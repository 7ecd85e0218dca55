#include "csv_table.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <sstream>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream ss(line);
  while (std::getline(ss, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}
}  // namespace

CsvTable::CsvTable(const std::string& path) : path_(path) {
  std::string text = read_text_file(path);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte order mark
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, "<header>", "", "a CSV header row");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> header = split(line);
  for (size_t i = 0; i < header.size(); ++i) index_[header[i]] = i;
  size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields = split(line);
    if (fields.size() != header.size())
      throw InputError(path, fmt::format("line {}", n), line,
                       fmt::format("{} comma-separated fields", header.size()));
    rows_.push_back(std::move(fields));
  }
}

const std::string& CsvTable::text(size_t row, const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end()) throw InputError(path_, column, "<missing column>", "this column");
  return rows_.at(row)[it->second];
}

double CsvTable::number(size_t row, const std::string& column) const {
  const std::string& s = text(row, column);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    throw InputError(path_, fmt::format("{} (row {})", column, row + 2), s, "a number");
  return v;
}

int64_t CsvTable::integer(size_t row, const std::string& column) const {
  double v = number(row, column);
  if (v != std::floor(v))
    throw InputError(path_, fmt::format("{} (row {})", column, row + 2), text(row, column),
                     "an integer");
  return static_cast<int64_t>(v);
}

}  // namespace rapid
