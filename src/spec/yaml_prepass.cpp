#include "yaml_prepass.hpp"

#include <fmt/format.h>

#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {
std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
}  // namespace

void YamlPrePass::OnDocumentStart(const YAML::Mark& m) {
  // yaml-cpp's Load reads the first document and drops the rest without a word.
  if (++documents_ > 1)
    throw InputError(
        origin_, "<file>", fmt::format("a second YAML document at line {}", m.line + 1),
        "one YAML document per file (a '---' after the first starts another)", m.line, m.column);
  stack_.clear();
}

void YamlPrePass::OnDocumentEnd() {
  if (duplicate_) throw *duplicate_;
}

void YamlPrePass::node(const YAML::Mark& m, const std::string* scalar, bool collection, bool map) {
  // Counted before any node is built: yaml-cpp keeps about 500 bytes per node, a 16 MiB list
  // of small numbers would take gigabytes.
  if (++values_ > kMaxYamlValues)
    throw InputError(
        origin_, "<file>", fmt::format("more than {} values", kMaxYamlValues),
        fmt::format("a YAML file of at most {} values (scalars, lists, mappings)", kMaxYamlValues),
        m.line, m.column);
  std::string path;
  bool key = false;
  if (!stack_.empty()) {
    Frame& f = stack_.back();
    if (!f.map) {
      path = fmt::format("{}[{}]", f.path, f.index++);
    } else if (f.at_key) {
      key = true;
      f.at_key = false;
      // A list, a mapping, an alias or an empty key: not a plain key (YamlMap refuses it).
      f.key = scalar ? *scalar : "<key>";
      if (scalar) check_key(m, f, *scalar);
    } else {
      f.at_key = true;
      path = join(f.path, f.key);
    }
  }
  if (collection) {
    Frame f;
    f.map = map;
    f.path = key ? join(stack_.back().path, "<key>") : std::move(path);
    stack_.push_back(std::move(f));
  }
}

void YamlPrePass::check_key(const YAML::Mark& m, Frame& f, const std::string& key) {
  const auto [it, fresh] = f.keys.emplace(key, m);
  if (fresh || duplicate_) return;
  duplicate_.emplace(
      origin_, join(f.path, key), key,
      fmt::format("a key given once (duplicate key; first given at line {})", it->second.line + 1),
      m.line, m.column);
}

}  // namespace rapid
