#include "config_resolve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "rapid/common/error.hpp"
#include "rapid/common/suggest.hpp"
#include "rapid/common/utf8.hpp"

namespace fs = std::filesystem;

namespace rapid::detail {

std::pair<YAML::Node, Source> resolve_config(const YamlMap& job, const YAML::Node& value,
                                             const std::string& key, const std::string& kind,
                                             const std::string& also, const std::string& anchor) {
  if (value.IsMap()) {
    Source src{fmt::format("<inline in {}>", job.file()), YAML::Dump(value)};
    return {value, src};
  }
  if (!value.IsScalar() || value.Scalar().empty())
    job.fail(key, "<not a name>",
             fmt::format("a name from configs/{}/, a path or a mapping", kind));
  const std::string ref = value.Scalar();
  std::string path;
  std::string tried;
  if (ref.find('/') != std::string::npos || ref.ends_with(".yaml")) {
    fs::path job_dir = fs::path(job.file()).parent_path();
    for (const fs::path& c : {job_dir / ref, fs::path(ref)}) {
      std::error_code ec;
      if (path.empty() && fs::is_regular_file(c, ec)) path = c.lexically_normal().string();
      tried += (tried.empty() ? "" : ", ") + c.string();
    }
  } else {
    const std::string& where = anchor.empty() ? job.file() : anchor;
    path = find_named_config(kind, ref, where);
    if (path.empty() && !also.empty()) path = find_named_config(also, ref, where);
    const fs::path here = fs::path(job.file()).parent_path();
    if (!also.empty() && !job.file().starts_with("<"))
      for (const fs::path& c : {here / (ref + ".yaml"), here / ".." / (ref + ".yaml")}) {
        std::error_code ec;
        if (path.empty() && fs::is_regular_file(c, ec)) path = c.lexically_normal().string();
      }
    tried = fmt::format("{}/{}.yaml{} under {}{}", kind, ref,
                        also.empty() ? "" : fmt::format(" and {}/{}.yaml", also, ref),
                        fmt::join(config_search_dirs(where), ", "),
                        also.empty() || job.file().starts_with("<")
                            ? ""
                            : fmt::format(", and {}.yaml beside {}", ref, job.file()));
  }
  if (path.empty()) {
    if (ref.find('/') != std::string::npos || ref.ends_with(".yaml"))
      job.fail(key, ref, fmt::format("an existing config (looked for {})", tried));
    // A name: the known ones (the nearest first when it looks like a typo of one), then
    // where they were looked for.
    const std::string& where = anchor.empty() ? job.file() : anchor;
    std::vector<std::string> known = known_configs(kind, where);
    if (!also.empty())
      for (const std::string& n : known_configs(also, where)) known.push_back(n);
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    job.fail(key, ref, unknown_name_expectation(ref, kind, known, tried));
  }
  if (!is_utf8(path))
    job.fail(key, "<not UTF-8>", "a config path in UTF-8 (it is stored in the result file)");
  std::string text = read_text_file(path);
  return {load_yaml_text(text, path), Source{path, text}};
}

std::string unknown_name_expectation(const std::string& name, const std::string& kind,
                                     const std::vector<std::string>& known,
                                     const std::string& looked_for, const std::string& what) {
  std::string out = fmt::format("{} in configs/{}/", what.empty() ? "a name" : what, kind);
  const std::string hint = did_you_mean(suggest(name, known));
  if (!hint.empty()) out += " (" + hint + ")";
  out += known.empty() ? "; none is known" : "; known: " + list_names(known, kMaxNamesListed);
  if (!looked_for.empty()) out += fmt::format(" (looked for {})", looked_for);
  return out + fmt::format("; `rapid list {}` shows them", kind.substr(0, kind.find('/')));
}

std::vector<std::string> known_configs(const std::string& kind, const std::string& anchor) {
  std::set<std::string> names;
  for (const std::string& dir : config_search_dirs(anchor)) {
    std::error_code ec;
    const fs::path d = fs::path(dir) / kind;
    if (!fs::is_directory(d, ec)) continue;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".yaml") names.insert(e.path().stem().string());
  }
  return {names.begin(), names.end()};
}

std::vector<ChainLink> load_base_chain(const std::string& kind, const std::string& what,
                                       const std::string& name, const std::string& anchor,
                                       const std::string& referrer, const std::string& key) {
  std::vector<ChainLink> chain;  // name -> base -> ..., reversed below
  std::string next = name, from = referrer, from_key = key;
  while (!next.empty()) {
    const std::string path = next.find('/') != std::string::npos || next.ends_with(".yaml")
                                 ? ""
                                 : find_named_config(kind, next, anchor);
    if (path.empty())
      throw InputError(from, from_key, next,
                       unknown_name_expectation(next, kind, known_configs(kind, anchor), "", what));
    for (const ChainLink& l : chain)
      if (l.path == path) throw InputError(from, "base", next, "a base chain without a cycle");
    YAML::Node node = load_yaml_file(path);
    chain.push_back({path, node});
    from = path;
    from_key = "base";
    const YAML::Node b = node.IsMap() ? node["base"] : YAML::Node();
    next = b && b.IsScalar() ? b.Scalar() : "";
  }
  // Root first, copied rather than swapped: assigning a YAML::Node writes through to the
  // node it refers to (yaml-cpp), so std::reverse would overwrite the files' contents.
  std::vector<ChainLink> root_first;
  root_first.reserve(chain.size());
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) root_first.push_back(*it);
  return root_first;
}

std::string chain_paths(const std::vector<ChainLink>& chain) {
  std::string paths;
  for (const ChainLink& l : chain) paths = paths.empty() ? l.path : l.path + " <- " + paths;
  return paths;
}

}  // namespace rapid::detail
