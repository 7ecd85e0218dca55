// `rapid launch JOB --stack megatron|nemo|torchtitan [layout options]`: the layout (the job's
// baseline, or its single-valued search, with the options applied) as the stack's own launch
// command on stdout, '#' lines naming the layout, the sources of the flag names and what the
// stack cannot express (docs/launch.md).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "apps/layout_options.hpp"

namespace rapid {

class LaunchCommand {
 public:
  explicit LaunchCommand(CLI::App& app);
  bool parsed() const { return cmd_->parsed(); }
  int run() const;

 private:
  CLI::App* cmd_ = nullptr;
  std::string job_, stack_;
  LayoutOptions layout_;
};

}  // namespace rapid
