// Where a config a job (or a variant file) names comes from: a name under
// configs/<kind>/, a path, or an inline mapping. Shared by the job loader and the hardware
// variant loader.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid::detail {

/// Resolves `value` of key `key` of `from`: a mapping (inline), a path (with a '/' or a
/// .yaml ending; relative to `from`'s file, then to the working directory) or a name found
/// under configs/<kind>/ (then configs/<also>/ when `also` is given) of the config
/// directories of `anchor` (the job; default `from`'s file), then, when `also` is given,
/// beside `from`'s file and in its parent directory (a variant's base next to it). Returns
/// the node and where it came from; throws InputError naming `from`'s file, the key and
/// what was tried.
std::pair<YAML::Node, Source> resolve_config(const YamlMap& from, const YAML::Node& value,
                                             const std::string& key, const std::string& kind,
                                             const std::string& also = "",
                                             const std::string& anchor = "");

}  // namespace rapid::detail

namespace rapid::detail {

/// Names of the files configs/<kind>/*.yaml in the config directories of `anchor`, sorted.
std::vector<std::string> known_configs(const std::string& kind, const std::string& anchor);

/// Names listed in an unknown name's message before "and N more".
inline constexpr size_t kMaxNamesListed = 16;

/// What an unknown config name was expected to be: "WHAT in configs/KIND/ (did you mean
/// X?); known: a, b, ... (looked for LOOKED_FOR); `rapid list` shows them" (WHAT "a name"
/// when empty; no "looked for" when LOOKED_FOR is empty).
std::string unknown_name_expectation(const std::string& name, const std::string& kind,
                                     const std::vector<std::string>& known,
                                     const std::string& looked_for, const std::string& what = "");

/// One file of a `base:` chain.
struct ChainLink {
  std::string path;
  YAML::Node node;
};

/// Stack file configs/<kind>/NAME.yaml (found from `anchor`) and its `base:` chain, root
/// first. Throws InputError naming `referrer`/`key` (or the file naming a missing base) and
/// listing the known names when a file is not found ("`what` in configs/<kind>/ (known:
/// ...)"), and the file whose `base:` closes a cycle.
std::vector<ChainLink> load_base_chain(const std::string& kind, const std::string& what,
                                       const std::string& name, const std::string& anchor,
                                       const std::string& referrer, const std::string& key);

/// "root.yaml <- child.yaml <- file.yaml": where a chain's values came from.
std::string chain_paths(const std::vector<ChainLink>& chain);

}  // namespace rapid::detail
