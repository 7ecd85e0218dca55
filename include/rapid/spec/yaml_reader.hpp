// Reading validated values out of a YAML mapping with errors that name the file, the key
// (as a dotted path), the value and what was expected. Every key read is recorded so that
// finish() can reject keys nobody asked for (a typo must not be silently ignored).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rapid/common/utf8.hpp"  // is_utf8
#include "rapid/spec/units.hpp"

namespace rapid {

/// Parses a YAML file. Throws InputError (key "<file>") when it is missing or not YAML.
YAML::Node load_yaml_file(const std::string& path);

/// Largest number of values (scalars, lists, mappings) in one YAML text.
inline constexpr uint64_t kMaxYamlValues = 100000;

/// Parses YAML text; `origin` names it in errors. Throws InputError on a syntax error, on
/// text that is not UTF-8 or holds control characters, on nesting deeper than yaml-cpp
/// allows, on more than kMaxYamlValues values, on a key given twice in one mapping and on a
/// second document (every input is one document; src/spec/yaml_prepass.hpp).
YAML::Node load_yaml_text(const std::string& text, const std::string& origin);

/// Largest input file read (a job, model, hardware, network or stack file, a CSV table).
inline constexpr uint64_t kMaxInputFileBytes = 16ull << 20;

/// Reads text of a whole file; throws InputError naming `path` when it cannot be read, is
/// not a regular file (a FIFO, a device, a directory) or is larger than kMaxInputFileBytes.
std::string read_text_file(const std::string& path);

/// A YAML mapping plus where it came from. Accessors throw InputError.
class YamlMap {
 public:
  /// `node` must be a mapping (else InputError naming `path`). `file` is the file name used
  /// in messages; `path` is the dotted key prefix ("" at the top level).
  YamlMap(YAML::Node node, std::string file, std::string path = "");
  ~YamlMap();
  YamlMap(YamlMap&&) noexcept;

  bool has(const std::string& key) const;
  /// The mapping's keys in file order (none is marked read).
  std::vector<std::string> keys() const;

  /// Quantity in SI base units (see units.hpp), from 0 to dimension_max(d). Required / with
  /// default.
  double quantity(const std::string& key, Dimension d) const;
  double quantity_or(const std::string& key, Dimension d, double fallback) const;

  /// Largest integer any key takes unless it says otherwise (keeps products of shapes
  /// far from int64 overflow).
  static constexpr int64_t kMaxInteger = 1'000'000'000;

  /// Integer in [min, max], written in plain decimal: an optional '-', no leading zero
  /// (yaml-cpp would read 010 as octal 8), no '+', no 0x or 0o (the same in integer_list_or).
  int64_t integer(const std::string& key, int64_t min = 1, int64_t max = kMaxInteger) const;
  int64_t integer_or(const std::string& key, int64_t fallback, int64_t min = 1,
                     int64_t max = kMaxInteger) const;

  /// Positive real without unit (ratios, efficiencies).
  double number_or(const std::string& key, double fallback, double min, double max) const;

  /// Longest string a key takes (names, choices).
  static constexpr size_t kMaxStringBytes = 4096;

  /// UTF-8 text of at most kMaxStringBytes.
  std::string string(const std::string& key) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  bool boolean_or(const std::string& key, bool fallback) const;

  /// One of `choices` (case-sensitive); returns its position in `choices`.
  int choice(const std::string& key, const std::vector<std::string>& choices) const;
  int choice_or(const std::string& key, const std::vector<std::string>& choices,
                int fallback) const;

  /// A scalar or a list of integers >= min.
  std::vector<int64_t> integer_list_or(const std::string& key, std::vector<int64_t> fallback,
                                       int64_t min = 1, int64_t max = kMaxInteger) const;
  /// A scalar or a list of choices (positions in `choices`).
  std::vector<int> choice_list_or(const std::string& key, const std::vector<std::string>& choices,
                                  std::vector<int> fallback) const;
  /// A scalar or a list of booleans.
  std::vector<bool> boolean_list_or(const std::string& key, std::vector<bool> fallback) const;

  /// Nested mapping.
  YamlMap map(const std::string& key) const;
  /// The raw node (marks the key as read).
  YAML::Node node(const std::string& key) const;

  /// Throws InputError for the first key of the mapping that no accessor asked for.
  void finish() const;

  /// Throws InputError about `key` of this mapping.
  [[noreturn]] void fail(const std::string& key, const std::string& value,
                         const std::string& expected) const;

  const std::string& file() const { return file_; }
  std::string key_path(const std::string& key) const;

 private:
  YAML::Node child(const std::string& key) const;
  std::string scalar_text(const YAML::Node& n) const;
  [[noreturn]] void fail_at(const YAML::Node& at, const std::string& key, const std::string& value,
                            const std::string& expected) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::unique_ptr<std::set<std::string>> read_;
};

}  // namespace rapid
