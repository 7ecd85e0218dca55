#include "apps/list_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "rapid/common/error.hpp"
#include "rapid/common/suggest.hpp"
#include "rapid/spec/config_catalogue.hpp"

namespace rapid {

ListCommand::ListCommand(CLI::App& app) {
  std::string kinds;
  for (const ConfigKind& k : config_kinds())
    kinds += (kinds.empty() ? "" : ", ") + std::string(k.name);
  cmd_ = app.add_subcommand("list",
                            "the models, hardware, networks, frameworks (training stacks) and "
                            "serving stacks a job may name, one line each with key facts");
  cmd_->add_option("kind", kind_, "what to list: " + kinds + " (none: the kinds and their counts)");
  cmd_->add_flag("--paths", paths_, "the file each name resolves to instead of its facts");
}

int ListCommand::run() const {
  if (kind_.empty()) {  // the kinds, with how many of each
    for (const ConfigKind& k : config_kinds())
      std::printf("%-11s %3zu  %s\n", k.name, list_configs(k, "").size(), k.what);
    return 0;
  }
  const ConfigKind* kind = find_config_kind(kind_);
  if (kind == nullptr) {
    std::vector<std::string> names;
    for (const ConfigKind& k : config_kinds()) names.push_back(k.name);
    const std::string hint = did_you_mean(suggest(kind_, names));
    throw InputError("<command line>", "kind", kind_,
                     "one of " + list_names(names) + (hint.empty() ? "" : " (" + hint + ")"));
  }
  const std::vector<CatalogueEntry> entries = list_configs(*kind, "");
  size_t width = 0;
  for (const CatalogueEntry& e : entries) width = std::max(width, e.name.size());
  for (const CatalogueEntry& e : entries)
    std::fputs(fmt::format("{:<{}}  {}\n", e.name, width, paths_ ? e.path : e.facts).c_str(),
               stdout);
  return 0;
}

}  // namespace rapid
