// Hardware variants (docs/variants.md): a GPU architect's "what if" on a base hardware
// file. A variant file (configs/hardware/variants/NAME.yaml) names its base (a hardware
// file or another variant) and the fields it overrides, on the GPU and on the job's
// network:
//   name: a100-c-3d-hbm
//   base: a100-sxm4-80gb
//   overrides:
//     hbm_bandwidth: {scale: 4}
//     network: {leaf_bandwidth: {scale: 2}}
// A job lists variants among its `hardware:` entries (by name, path or inline with
// `base:`), and a `hardware_grid:` expands a base over a grid of field values.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/network_spec.hpp"

namespace rapid {

class YamlMap;

/// One entry of the job's hardware axis, before it is parsed: the hardware mapping with
/// the variant's overrides applied, and what the variant changes.
struct ResolvedHardware {
  YAML::Node node;        ///< parse_hardware's input (name set to the variant's)
  std::string file;       ///< the file errors name (the variant's, else the hardware's)
  std::string path;       ///< where it came from (Source::path)
  std::string text;       ///< its file text and its bases' (provenance, resume key)
  std::string base;       ///< name of the plain hardware file at the root of its bases
  YAML::Node base_node;   ///< that file's mapping
  std::string base_path;  ///< and where it came from
  bool is_base = true;    ///< a plain hardware file, no overrides
  /// The network overrides of each variant along the chain, base first, with the file
  /// that gives them.
  struct NetworkOverride {
    std::string file;
    YAML::Node node;
  };
  std::vector<NetworkOverride> network_overrides;
};

/// What a hardware entry of a sweep is (kept beside SweepSpec::hardware, same index).
struct HardwareVariant {
  std::string base;       ///< the root hardware file's name (the entry's own for a base)
  std::string overrides;  ///< fields that differ from the base, one-line YAML ("" for a base)
  bool is_base = true;
  NetworkSpec network;  ///< the job's network with the variant's network overrides
};

/// Resolves one `hardware:` entry of job `job`: a hardware file or a variant (a name
/// found under configs/hardware/ then configs/hardware/variants/, a path, or an inline
/// mapping; a mapping with `base:` is a variant, chains of variants allowed).
ResolvedHardware resolve_hardware(const YamlMap& job, const YAML::Node& entry,
                                  const std::string& key);

/// The variants a `hardware_grid:` mapping (or a list of them) expands into: its base
/// with every combination of its axes' values (docs/variants.md).
std::vector<ResolvedHardware> expand_hardware_grid(const YamlMap& job, const YAML::Node& grid);

/// Parses a resolved entry. A variant that changes the SM count or clock but none of the
/// peaks gets peaks that follow them (peak = SMs x FLOP per clock per SM x clock: A100 and
/// H100 whitepapers), and an L2 bandwidth that follows the clock (bytes per clock x clock),
/// unless it sets that too (docs/variants.md). `root`: the parsed root base when the caller
/// has it (a grid's variants share one), else parsed here.
HardwareSpec parse_resolved(const ResolvedHardware& r, const HardwareSpec* root = nullptr);

/// The hardware of a file given by path (`rapid op --hardware`): a plain hardware file or a
/// variant file (its bases found as a job's would be, relative to it and in the configs).
HardwareSpec load_hardware_file(const std::string& path);

/// The variant's record: the job's network (`job_network`, parsed from the mapping
/// `net_node` of `net_file`) with the variant's network overrides, and the fields it changes.
HardwareVariant make_variant(const ResolvedHardware& r, const YAML::Node& net_node,
                             const std::string& net_file, const NetworkSpec& job_network);

}  // namespace rapid
