#include "rapid/cost/calibration_yaml.hpp"

#include <fmt/format.h>

#include <sstream>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

std::string format_param_value(const CalibrationParam& p, double value) {
  return p.is_time ? fmt::format("{:.6g}us", value * 1e6) : fmt::format("{:.6g}", value);
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

size_t indent_of(const std::string& line) {
  const size_t i = line.find_first_not_of(' ');
  return i == std::string::npos ? line.size() : i;
}

bool is_content(const std::string& line) {
  const size_t i = indent_of(line);
  return i < line.size() && line[i] != '#';
}

// "key: value  # comment" at `indent` -> key, value and the comment's column (npos: none).
bool split_key_line(const std::string& line, size_t indent, std::string& key, std::string& value,
                    size_t& comment_col) {
  if (indent_of(line) != indent || !is_content(line)) return false;
  const size_t colon = line.find(':', indent);
  if (colon == std::string::npos) return false;
  key = line.substr(indent, colon - indent);
  comment_col = line.find(" #", colon);
  if (comment_col != std::string::npos) ++comment_col;
  const size_t end = comment_col == std::string::npos ? line.size() : comment_col;
  value = line.substr(colon + 1, end - colon - 1);
  value.erase(0, value.find_first_not_of(' '));
  value.erase(value.find_last_not_of(' ') + 1);
  return true;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

std::string rewrite_yaml_block(const std::string& text, const std::string& section,
                               const std::vector<std::pair<std::string, std::string>>& values,
                               const std::string& origin) {
  std::vector<std::string> lines = lines_of(text);
  // The block: [begin, end) with its keys at `indent`.
  size_t begin = 0, end = lines.size(), indent = 0;
  if (!section.empty()) {
    size_t head = lines.size();
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string key, value;
      size_t comment = 0;
      if (split_key_line(lines[i], 0, key, value, comment) && key == section) {
        if (!value.empty())
          throw InputError(origin, section, value,
                           "a block mapping (one key per line) that calibrate can rewrite");
        head = i;
        break;
      }
    }
    if (head == lines.size()) {  // no such section: add it at the end
      lines.push_back(section + ":");
      for (const auto& [k, v] : values)
        lines.push_back(fmt::format("  {}: {}  # calibrated", k, v));
      return join(lines);
    }
    begin = head + 1;
    end = begin;
    while (end < lines.size() && (!is_content(lines[end]) || indent_of(lines[end]) > 0)) ++end;
    indent = 2;
    for (size_t i = begin; i < end; ++i)
      if (is_content(lines[i])) {
        indent = indent_of(lines[i]);
        break;
      }
  }
  size_t last = begin == 0 ? lines.size() : begin;  // insert new keys after this line
  for (size_t i = begin; i < end; ++i)
    if (is_content(lines[i])) last = i + 1;
  std::vector<std::string> added;
  for (const auto& [k, v] : values) {
    bool found = false;
    for (size_t i = begin; i < end && !found; ++i) {
      std::string key, old;
      size_t comment = std::string::npos;
      if (!split_key_line(lines[i], indent, key, old, comment) || key != k) continue;
      std::string line = fmt::format("{}{}: {}", std::string(indent, ' '), k, v);
      const size_t col = comment == std::string::npos ? 0 : comment;
      line += std::string(col > line.size() ? col - line.size() : 2, ' ');
      lines[i] = line + "# calibrated, was " + old;
      found = true;
    }
    if (!found)
      added.push_back(fmt::format("{}{}: {}  # calibrated", std::string(indent, ' '), k, v));
  }
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(last), added.begin(), added.end());
  return join(lines);
}

namespace {

std::string rewrite_params(const std::string& original, const std::string& origin,
                           const CalibrationResult& r, ParamFile file, const std::string& section,
                           const std::string& comment) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const FittedParam& f : r.fitted)
    if (f.param->file == file)
      values.emplace_back(f.param->name, format_param_value(*f.param, f.after));
  std::string text =
      values.empty() ? original : rewrite_yaml_block(original, section, values, origin);
  if (!text.empty() && text.back() != '\n') text += '\n';
  return "# " + comment + "\n" + text;
}

}  // namespace

std::string calibrated_hardware_yaml(const std::string& original, const std::string& origin,
                                     const CalibrationResult& r, const std::string& comment) {
  return rewrite_params(original, origin, r, ParamFile::Hardware, "efficiency", comment);
}

std::string calibrated_network_yaml(const std::string& original, const std::string& origin,
                                    const CalibrationResult& r, const std::string& comment) {
  // The job-snippet form `network: {...}` keeps its keys one level down.
  const YAML::Node n = load_yaml_text(original, origin);
  const bool wrapped = n.IsMap() && n.size() == 1 && n["network"] && n["network"].IsMap();
  return rewrite_params(original, origin, r, ParamFile::Network, wrapped ? "network" : "", comment);
}

}  // namespace rapid
