#include "rapid/spec/yaml_reader.hpp"

#include <filesystem>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "rapid/common/error.hpp"

namespace rapid {

std::string read_text_file(const std::string& path) {
  // Only regular files of a bounded size: a FIFO would block, a device never end.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw InputError(path, "<file>", path, "a regular file (not a directory, FIFO or device)");
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes)
    throw InputError(path, "<file>", fmt::format("{} bytes", size),
                     fmt::format("a file of at most {} MiB", kMaxInputFileBytes >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "<file>", path, "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

YAML::Node load_yaml_text(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(origin, "<yaml>", e.msg, "valid YAML", e.mark.line, e.mark.column);
  }
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_text(read_text_file(path), path);
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)),
      file_(std::move(file)),
      path_(std::move(path)),
      read_(std::make_unique<std::set<std::string>>()) {
  if (!node_.IsMap()) {
    std::string key = path_.empty() ? "<top level>" : path_;
    fail_at(node_, key, node_.IsScalar() ? node_.Scalar() : "<not a mapping>", "a mapping");
  }
  // yaml-cpp keeps the first of repeated keys silently; a repeated key is a typo.
  std::set<std::string> seen;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar())
      fail_at(kv.first, path_.empty() ? "<key>" : path_ + ".<key>", "<not a scalar>",
              "plain keys (strings)");
    if (!seen.insert(kv.first.Scalar()).second)
      fail_at(kv.first, key_path(kv.first.Scalar()), kv.first.Scalar(),
              "each key once (duplicate key)");
  }
}

YamlMap::~YamlMap() = default;
YamlMap::YamlMap(YamlMap&&) noexcept = default;

std::string YamlMap::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool YamlMap::has(const std::string& key) const {
  read_->insert(key);
  return static_cast<bool>(node_[key]);
}

std::vector<std::string> YamlMap::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(kv.first.Scalar());
  return out;
}

YAML::Node YamlMap::child(const std::string& key) const {
  read_->insert(key);
  YAML::Node n = node_[key];
  if (!n) fail(key, "<missing>", "this key to be present");
  if (n.IsNull()) fail(key, "<empty>", "a value");
  return n;
}

std::string YamlMap::scalar_text(const YAML::Node& n) const {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) return "<list>";
  if (n.IsMap()) return "<mapping>";
  return "<empty>";
}

void YamlMap::fail_at(const YAML::Node& at, const std::string& key, const std::string& value,
                      const std::string& expected) const {
  YAML::Mark m = at.Mark();
  throw InputError(file_, key, value, expected, m.is_null() ? -1 : m.line,
                   m.is_null() ? -1 : m.column);
}

void YamlMap::fail(const std::string& key, const std::string& value,
                   const std::string& expected) const {
  YAML::Node at = node_[key];
  fail_at(at ? at : node_, key_path(key), value, expected);
}

double YamlMap::quantity(const std::string& key, Dimension d) const {
  YAML::Node n = child(key);
  if (!n.IsScalar()) fail(key, scalar_text(n), dimension_units(d));
  auto v = parse_quantity(n.Scalar(), d);
  if (!v) fail(key, n.Scalar(), dimension_units(d));
  if (*v < 0) fail(key, n.Scalar(), std::string("a non-negative value: ") + dimension_units(d));
  return *v;
}

double YamlMap::quantity_or(const std::string& key, Dimension d, double fallback) const {
  return has(key) ? quantity(key, d) : fallback;
}

int64_t YamlMap::integer(const std::string& key, int64_t min, int64_t max) const {
  YAML::Node n = child(key);
  std::string expected = fmt::format("an integer between {} and {}", min, max);
  if (!n.IsScalar()) fail(key, scalar_text(n), expected);
  int64_t v = 0;
  if (!YAML::convert<int64_t>::decode(n, v) || v < min || v > max) fail(key, n.Scalar(), expected);
  return v;
}

int64_t YamlMap::integer_or(const std::string& key, int64_t fallback, int64_t min,
                            int64_t max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

double YamlMap::number_or(const std::string& key, double fallback, double min, double max) const {
  if (!has(key)) return fallback;
  YAML::Node n = child(key);
  std::string expected = fmt::format("a number in [{}, {}]", min, max);
  if (!n.IsScalar()) fail(key, scalar_text(n), expected);
  auto v = parse_quantity(n.Scalar(), Dimension::Ratio);
  if (!v || *v < min || *v > max) fail(key, n.Scalar(), expected);
  return *v;
}

namespace {

/// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
/// U+10FFFF): names go into the HDF5 file as UTF-8 strings readers must decode.
bool is_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || (n > 0 && i + static_cast<size_t>(n) >= s.size())) return false;  // truncated
    uint32_t cp = n == 0 ? c : c & (0x3F >> n);
    for (int k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((b >> 6) != 0x2) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<size_t>(n) + 1;
  }
  return true;
}

}  // namespace

std::string YamlMap::string(const std::string& key) const {
  YAML::Node n = child(key);
  if (!n.IsScalar()) fail(key, scalar_text(n), "a string");
  if (!is_utf8(n.Scalar())) fail(key, "<not UTF-8>", "UTF-8 text");
  return n.Scalar();
}

std::string YamlMap::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

bool YamlMap::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  YAML::Node n = child(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
    fail(key, scalar_text(n), "true or false");
  return v;
}

namespace {
std::string join_choices(const std::vector<std::string>& choices) {
  std::string out = "one of";
  for (size_t i = 0; i < choices.size(); ++i) out += (i ? ", " : " ") + choices[i];
  return out;
}
int find_choice(const std::string& s, const std::vector<std::string>& choices) {
  for (size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == s) return static_cast<int>(i);
  return -1;
}
}  // namespace

int YamlMap::choice(const std::string& key, const std::vector<std::string>& choices) const {
  std::string s = string(key);
  int i = find_choice(s, choices);
  if (i < 0) fail(key, s, join_choices(choices));
  return i;
}

int YamlMap::choice_or(const std::string& key, const std::vector<std::string>& choices,
                       int fallback) const {
  return has(key) ? choice(key, choices) : fallback;
}

std::vector<int64_t> YamlMap::integer_list_or(const std::string& key, std::vector<int64_t> fallback,
                                              int64_t min, int64_t max) const {
  if (!has(key)) return fallback;
  YAML::Node n = child(key);
  std::string expected =
      fmt::format("an integer between {} and {} or a non-empty list of them", min, max);
  std::vector<int64_t> out;
  auto take = [&](const YAML::Node& item) {
    int64_t v = 0;
    if (!item.IsScalar() || !YAML::convert<int64_t>::decode(item, v) || v < min || v > max)
      fail_at(item, key_path(key), scalar_text(item), expected);
    out.push_back(v);
  };
  if (n.IsSequence()) {
    for (const auto& item : n) take(item);
  } else {
    take(n);
  }
  if (out.empty()) fail(key, "[]", expected);
  return out;
}

std::vector<int> YamlMap::choice_list_or(const std::string& key,
                                         const std::vector<std::string>& choices,
                                         std::vector<int> fallback) const {
  if (!has(key)) return fallback;
  YAML::Node n = child(key);
  std::string expected = join_choices(choices) + " (or a list of them)";
  std::vector<int> out;
  auto take = [&](const YAML::Node& item) {
    int i = item.IsScalar() ? find_choice(item.Scalar(), choices) : -1;
    if (i < 0) fail_at(item, key_path(key), scalar_text(item), expected);
    out.push_back(i);
  };
  if (n.IsSequence()) {
    for (const auto& item : n) take(item);
  } else {
    take(n);
  }
  if (out.empty()) fail(key, "[]", expected);
  return out;
}

std::vector<bool> YamlMap::boolean_list_or(const std::string& key,
                                           std::vector<bool> fallback) const {
  if (!has(key)) return fallback;
  YAML::Node n = child(key);
  std::vector<bool> out;
  auto take = [&](const YAML::Node& item) {
    bool v = false;
    if (!item.IsScalar() || !YAML::convert<bool>::decode(item, v))
      fail_at(item, key_path(key), scalar_text(item), "true/false or a list of them");
    out.push_back(v);
  };
  if (n.IsSequence()) {
    for (const auto& item : n) take(item);
  } else {
    take(n);
  }
  if (out.empty()) fail(key, "[]", "true/false or a list of them");
  return out;
}

YamlMap YamlMap::map(const std::string& key) const {
  return YamlMap(child(key), file_, key_path(key));
}

YAML::Node YamlMap::node(const std::string& key) const {
  return child(key);
}

void YamlMap::finish() const {
  for (const auto& kv : node_) {
    std::string k = kv.first.Scalar();
    if (!read_->count(k)) fail_at(kv.first, key_path(k), k, "a known key (unknown key)");
  }
}

}  // namespace rapid
