#include "rapid/spec/yaml_reader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "rapid/common/error.hpp"
#include "rapid/common/suggest.hpp"
#include "yaml_prepass.hpp"

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

namespace {

/// Where `text` breaks YAML 1.2's character set (c-printable, as UTF-8: tab, LF, CR, 0x20-0x7E,
/// U+0085, U+00A0 up to U+10FFFF without surrogates, U+FFFE and U+FFFF): the byte offset of
/// the first bad character, or npos. Texts go into the HDF5 file as UTF-8 strings.
size_t first_non_printable(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) return i;
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(text.substr(i));
    if (n == 0) return i;
    uint32_t cp = c & (0x3F >> (n - 1));
    for (size_t k = 1; k < n; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    if ((cp < 0xA0 && cp != 0x85) || cp == 0xFFFE || cp == 0xFFFF) return i;
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& origin) {
  if (const size_t bad = first_non_printable(text); bad != std::string::npos) {
    const auto line =
        std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    const size_t bol = bad == 0 ? std::string::npos : text.rfind('\n', bad - 1);
    const size_t column = bol == std::string::npos ? bad : bad - bol - 1;
    throw InputError(origin, "<file>",
                     fmt::format("byte 0x{:02X}", static_cast<unsigned char>(text[bad])),
                     "UTF-8 text without control characters (YAML 1.2)", static_cast<int>(line),
                     static_cast<int>(column));
  }
  try {
    {
      // Every document, before any node is built: values counted, keys given twice and a
      // second document refused (yaml_prepass.hpp).
      std::istringstream in(text);
      YAML::Parser parser(in);
      YamlPrePass pass(origin);
      while (parser.HandleNextDocument(pass)) {
      }
    }
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw InputError(origin, "<yaml>", "lists or mappings nested too deep",
                     "YAML nested at most a few hundred levels (yaml-cpp's limit)", e.mark.line,
                     e.mark.column);
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
              "a key given once (duplicate key)");
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
  // Far beyond any machine, and products of such values would pass the double range (an
  // `ok` row with an infinite or NaN time).
  if (*v > dimension_max(d))
    fail(key, n.Scalar(),
         fmt::format("at most {:g} {}: {}", dimension_max(d), dimension_base_unit(d),
                     dimension_units(d)));
  return *v;
}

double YamlMap::quantity_or(const std::string& key, Dimension d, double fallback) const {
  return has(key) ? quantity(key, d) : fallback;
}

namespace {

/// `text` as a plain decimal integer: an optional '-', then 0 or digits not starting with 0.
/// yaml-cpp's own conversion follows YAML 1.1 and C streams: 010 is octal 8, 016 is 14, 0x10
/// is 16, +8 is 8; a GPU count or a batch size is written in decimal.
std::optional<int64_t> decimal_integer(const std::string& text) {
  const size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == digits || (text[digits] == '0' && text.size() > digits + 1)) return {};
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return {};
  return v;
}

/// What an integer key expects of `text`: when yaml-cpp would read it as an integer in
/// another notation, or it is digits with a leading zero, that notation is named.
std::string integer_expected(const YAML::Node& n, int64_t min, int64_t max) {
  const std::string& text = n.Scalar();
  int64_t v = 0;
  const bool digits = !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
  if (YAML::convert<int64_t>::decode(n, v) || digits)
    return fmt::format(
        "a decimal integer without leading zeros between {} and {} (no octal, hex or '+')", min,
        max);
  return fmt::format("an integer between {} and {}", min, max);
}

}  // namespace

int64_t YamlMap::integer(const std::string& key, int64_t min, int64_t max) const {
  YAML::Node n = child(key);
  if (!n.IsScalar())
    fail(key, scalar_text(n), fmt::format("an integer between {} and {}", min, max));
  const std::optional<int64_t> v = decimal_integer(n.Scalar());
  if (!v) fail(key, n.Scalar(), integer_expected(n, min, max));
  if (*v < min || *v > max)
    fail(key, n.Scalar(), fmt::format("an integer between {} and {}", min, max));
  return *v;
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

std::string YamlMap::string(const std::string& key) const {
  YAML::Node n = child(key);
  if (!n.IsScalar()) fail(key, scalar_text(n), "a string");
  if (!is_utf8(n.Scalar())) fail(key, "<not UTF-8>", "UTF-8 text");
  if (n.Scalar().size() > kMaxStringBytes)
    fail(key, fmt::format("{} bytes", n.Scalar().size()),
         fmt::format("a string of at most {} bytes", kMaxStringBytes));
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
    if (!item.IsScalar()) fail_at(item, key_path(key), scalar_text(item), expected);
    const std::optional<int64_t> v = decimal_integer(item.Scalar());
    if (!v)
      fail_at(item, key_path(key), item.Scalar(),
              integer_expected(item, min, max) + " or a non-empty list of them");
    if (*v < min || *v > max) fail_at(item, key_path(key), item.Scalar(), expected);
    out.push_back(*v);
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
    if (read_->count(k)) continue;
    // The keys asked for are the ones this mapping takes: the nearest is the likely typo.
    const std::string hint =
        did_you_mean(suggest(k, {read_->begin(), read_->end()}), path_.empty() ? "" : path_ + ".");
    fail_at(kv.first, key_path(k), k,
            hint.empty() ? "a known key (unknown key)" : "a known key (unknown key; " + hint + ")");
  }
}

}  // namespace rapid
