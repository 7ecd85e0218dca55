// The one CSV reader of rapid-sweep: published reference tables (data/reference), their
// run settings and `rapid calibrate` measurement files. RFC 4180 fields: comma-separated,
// optionally double-quoted (a quoted field may hold commas, newlines and "" for a quote);
// unquoted fields are trimmed of spaces and tabs. A UTF-8 byte order mark, CRLF line ends,
// blank lines and lines whose first character is '#' (comments) are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rapid {

/// A field's text as a finite number, an integer (up to 9e15) or a boolean ("True"/"true"/
/// "1", "False"/"false"/"0"); nullopt when it is not one.
std::optional<double> parse_number(std::string_view text);
std::optional<int64_t> parse_integer(std::string_view text);
std::optional<bool> parse_boolean(std::string_view text);

class CsvTable {
 public:
  /// Reads `path`. Throws InputError naming the file, line and column when it cannot be
  /// read, has no header, a quote is not closed, a row has another field count than the
  /// header, or two header columns share a name.
  explicit CsvTable(const std::string& path);
  /// Parses `text`; `origin` names it in errors.
  static CsvTable from_text(const std::string& text, const std::string& origin);

  size_t rows() const { return rows_.size(); }
  const std::string& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  bool has_column(const std::string& name) const { return index_.count(name) > 0; }

  /// Field text; throws InputError naming the file and column when the column is missing.
  const std::string& text(size_t row, const std::string& column) const;
  /// A finite number / an integer; throws InputError naming file, line, column and value.
  double number(size_t row, const std::string& column) const;
  int64_t integer(size_t row, const std::string& column) const;
  /// "True"/"true"/"1" or "False"/"false"/"0".
  bool boolean(size_t row, const std::string& column) const;

  /// Line of the file on which `row` starts (1-based; the header is on line_of_header()).
  int line(size_t row) const { return lines_[row]; }
  int line_of_header() const { return header_line_; }

  /// Throws InputError about the field of `row` in `column`: file, line, column, value.
  [[noreturn]] void fail(size_t row, const std::string& column, const std::string& value,
                         const std::string& expected) const;

 private:
  CsvTable() = default;
  void parse(const std::string& text);

  std::string path_;
  std::vector<std::string> header_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
  int header_line_ = 0;
};

}  // namespace rapid
