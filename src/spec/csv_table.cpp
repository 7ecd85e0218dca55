#include "rapid/spec/csv_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// One record starting at text[pos]: its fields, with `pos` moved past its line end.
// Returns false (and sets `open_quote`) when a quoted field runs to the end of the text.
bool read_record(const std::string& text, size_t& pos, int& line, std::vector<std::string>& fields,
                 bool& open_quote) {
  fields.clear();
  std::string field;
  bool quoted = false;  // the current field was quoted
  while (true) {
    if (pos >= text.size() || text[pos] == '\n' || text[pos] == '\r') {
      fields.push_back(quoted ? field : trim(field));
      if (pos < text.size() && text[pos] == '\r') ++pos;
      if (pos < text.size() && text[pos] == '\n') ++pos;
      ++line;
      return true;
    }
    const char c = text[pos];
    if (c == ',') {
      fields.push_back(quoted ? field : trim(field));
      field.clear();
      quoted = false;
      ++pos;
    } else if (c == '"' && trim(field).empty() && !quoted) {
      // A quoted field: up to the closing quote, "" standing for one quote.
      field.clear();
      quoted = true;
      ++pos;
      while (true) {
        if (pos >= text.size()) {
          open_quote = true;
          return false;
        }
        if (text[pos] == '"') {
          if (pos + 1 < text.size() && text[pos + 1] == '"') {
            field += '"';
            pos += 2;
            continue;
          }
          ++pos;
          break;
        }
        if (text[pos] == '\n') ++line;
        field += text[pos++];
      }
      while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    } else {
      field += c;
      ++pos;
    }
  }
}

}  // namespace

CsvTable::CsvTable(const std::string& path) : path_(path) {
  parse(read_text_file(path));
}

CsvTable CsvTable::from_text(const std::string& text, const std::string& origin) {
  CsvTable t;
  t.path_ = origin;
  t.parse(text);
  return t;
}

void CsvTable::parse(const std::string& input) {
  const size_t start = input.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // UTF-8 byte order mark
  size_t pos = start;
  int line = 1;
  std::vector<std::string> fields;
  while (pos < input.size()) {
    const int first_line = line;
    // Blank lines and comments.
    const size_t eol = input.find_first_of("\r\n", pos);
    const std::string raw = trim(input.substr(pos, eol == std::string::npos ? eol : eol - pos));
    if (raw.empty() || raw[0] == '#') {
      pos = eol == std::string::npos ? input.size() : eol;
      if (pos < input.size() && input[pos] == '\r') ++pos;
      if (pos < input.size() && input[pos] == '\n') ++pos;
      ++line;
      continue;
    }
    bool open_quote = false;
    if (!read_record(input, pos, line, fields, open_quote))
      throw InputError(path_, fmt::format("line {}", first_line), raw.substr(0, 60),
                       "a closing double quote", first_line - 1);
    if (header_.empty()) {
      header_ = fields;
      header_line_ = first_line;
      for (size_t i = 0; i < header_.size(); ++i)
        if (!index_.emplace(header_[i], i).second)
          throw InputError(path_, fmt::format("column {}", i + 1), header_[i],
                           "column names used once", first_line - 1, static_cast<int>(i));
      continue;
    }
    if (fields.size() != header_.size())
      throw InputError(path_, fmt::format("line {}", first_line), raw.substr(0, 60),
                       fmt::format("{} comma-separated fields (the header's), got {}",
                                   header_.size(), fields.size()),
                       first_line - 1, static_cast<int>(std::min(fields.size(), header_.size())));
    rows_.push_back(fields);
    lines_.push_back(first_line);
  }
  if (header_.empty()) throw InputError(path_, "<header>", "", "a CSV header row and rows");
}

void CsvTable::fail(size_t row, const std::string& column, const std::string& value,
                    const std::string& expected) const {
  auto it = index_.find(column);
  const int col = it == index_.end() ? -1 : static_cast<int>(it->second);
  throw InputError(path_, column, value, expected, row < lines_.size() ? lines_[row] - 1 : -1, col);
}

const std::string& CsvTable::text(size_t row, const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end())
    throw InputError(path_, column, "<missing column>", "this column in the header",
                     header_line_ - 1);
  return rows_.at(row)[it->second];
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

std::optional<int64_t> parse_integer(std::string_view s) {
  const auto v = parse_number(s);
  if (!v || *v != std::floor(*v) || std::abs(*v) > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<bool> parse_boolean(std::string_view s) {
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  return std::nullopt;
}

double CsvTable::number(size_t row, const std::string& column) const {
  const auto v = parse_number(text(row, column));
  if (!v) fail(row, column, text(row, column), "a finite number");
  return *v;
}

int64_t CsvTable::integer(size_t row, const std::string& column) const {
  const auto v = parse_integer(text(row, column));
  if (!v) fail(row, column, text(row, column), "an integer");
  return *v;
}

bool CsvTable::boolean(size_t row, const std::string& column) const {
  const auto v = parse_boolean(text(row, column));
  if (!v) fail(row, column, text(row, column), "True or False");
  return *v;
}

}  // namespace rapid
