// `rapid trace JOB [layout options] -o DIR [--ranks A-B] [--prefix P]`: the layout's
// per-rank Chakra ET files and process groups (docs/chakra.md); `rapid trace inspect DIR`:
// counts per rank and the graph checks (a broken trace exits 2 naming file, node, problem).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "apps/layout_options.hpp"

namespace rapid {

class TraceCommand {
 public:
  explicit TraceCommand(CLI::App& app);
  bool parsed() const { return cmd_->parsed(); }
  int run() const;

 private:
  CLI::App* cmd_ = nullptr;
  CLI::App* inspect_ = nullptr;
  std::string job_, out_, ranks_, prefix_ = "rapid", inspect_dir_;
  LayoutOptions layout_;
};

}  // namespace rapid
