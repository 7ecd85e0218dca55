// Overrides on a YAML mapping, as hardware variants write them (docs/variants.md):
//   overrides:
//     l2_size: 128MiB                  # a new value, in the file's own units
//     hbm_bandwidth: {scale: 4}        # the base's value times 4 (its unit kept)
//     thermal: {hbm_keep: 0.6}         # nested mappings merge key by key
// and the difference between two mappings, to record what a variant changed.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

namespace rapid {

/// A deep copy of `base` with `overrides` applied (neither is modified). Keys of
/// `overrides` may be new; a `{scale: F}` value multiplies the base's scalar (a number
/// with an optional unit, "2039GB/s" -> "8156GB/s" for F = 4). Throws InputError naming
/// `file`, the key path under `key_prefix` (e.g. "overrides.hbm_bandwidth"), the value and
/// what was expected, for a scale without a base value to scale or a factor outside
/// (0, 1e6].
YAML::Node apply_overrides(const YAML::Node& base, const YAML::Node& overrides,
                           const std::string& file, const std::string& key_prefix);

/// The keys of `changed` whose values differ from `base` (new keys included; nested
/// mappings compared key by key), as a mapping; empty when they are alike.
YAML::Node changed_keys(const YAML::Node& base, const YAML::Node& changed);

/// `node` as one line of YAML flow text ("{hbm_bandwidth: 8156GB/s}"); "" for an empty or
/// null node.
std::string flow_text(const YAML::Node& node);

/// Sets `value` at a dotted key path of `map` ("tensor_peak.bf16"), creating mappings.
void set_dotted(YAML::Node map, const std::string& dotted_key, const YAML::Node& value);

}  // namespace rapid
