// `rapid list [KIND] [--paths]`: the names a job may give its model, hardware, network,
// training stack and serving stack (config_catalogue.hpp), one line each with key facts;
// without KIND the kinds with their counts.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace rapid {

class ListCommand {
 public:
  explicit ListCommand(CLI::App& app);
  bool parsed() const { return cmd_->parsed(); }
  /// Prints the list to stdout; throws InputError for an unknown KIND.
  int run() const;

 private:
  CLI::App* cmd_ = nullptr;
  std::string kind_;
  bool paths_ = false;
};

}  // namespace rapid
