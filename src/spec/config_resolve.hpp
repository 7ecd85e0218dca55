// Where a config a job (or a variant file) names comes from: a name under
// configs/<kind>/, a path, or an inline mapping. Shared by the job loader and the hardware
// variant loader.
#pragma once

#include <string>
#include <utility>

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
