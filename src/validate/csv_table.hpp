// A small reader for the reference CSV files (header row, comma-separated, no quoting).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace rapid {

class CsvTable {
 public:
  /// Reads `path`. Throws InputError when it cannot be read, is empty, or a row has a
  /// different number of fields than the header.
  explicit CsvTable(const std::string& path);

  size_t rows() const { return rows_.size(); }
  const std::string& path() const { return path_; }
  bool has_column(const std::string& name) const { return index_.count(name) > 0; }

  /// Field text; throws InputError naming the file, row and column when missing.
  const std::string& text(size_t row, const std::string& column) const;
  double number(size_t row, const std::string& column) const;
  int64_t integer(size_t row, const std::string& column) const;

 private:
  std::string path_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace rapid
