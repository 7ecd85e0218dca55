// What a job may name: the config files of each kind found in the config directories
// (config_search_dirs), one entry per name with its key facts (`rapid list KIND`).
#pragma once

#include <string>
#include <vector>

namespace rapid {

/// A kind of config a job names by name.
struct ConfigKind {
  const char* name;  ///< as `rapid list` takes it: models, hardware, networks, ...
  const char* dir;   ///< its directory under configs/
  const char* what;  ///< one line saying what it is
};

/// models, hardware, networks, frameworks, serving: in that order.
const std::vector<ConfigKind>& config_kinds();

/// The kind named `name` (config_kinds()), or nullptr.
const ConfigKind* find_config_kind(const std::string& name);

/// One name of a kind, as the job loader resolves it.
struct CatalogueEntry {
  std::string name;
  std::string path;   ///< the file the name resolves to (the first directory holding it)
  std::string facts;  ///< one line of key facts, or "(unreadable: REASON)"
  bool readable = true;
};

/// Every configs/<kind.dir>/NAME.yaml found from `anchor` (config_search_dirs; "" for the
/// working directory), sorted by name, each with the key facts of the file the name
/// resolves to: models their parameters, layers, hidden size, heads and experts; hardware
/// its BF16 dense peak, HBM capacity and bandwidth and SMs (the variants of
/// configs/hardware/variants too, with their base); networks their GPUs per node and
/// scale-up and scale-out bandwidth; training and serving stacks their base and
/// description. A file that does not load is listed with the reason.
std::vector<CatalogueEntry> list_configs(const ConfigKind& kind, const std::string& anchor);

/// The file's `description:`, else its first comment line ("" when none).
std::string config_description(const std::string& path);

}  // namespace rapid
