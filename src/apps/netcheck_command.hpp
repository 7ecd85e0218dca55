// `rapid netcheck --workload W --ranks N --bytes B --network FILE --hardware FILE -o DIR`
// (docs/ns3.md): writes one communication workload as the ns-3 reference harness reads it
// (DIR/topology.csv, DIR/flows.csv) and our flow network's completion time of every flow
// (DIR/ours.csv), and prints each collective's completion time and our wall time.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "apps/netcheck_case.hpp"
#include "apps/netcheck_replay.hpp"

namespace rapid {

class NetcheckCommand {
 public:
  explicit NetcheckCommand(CLI::App& app);
  bool parsed() const { return cmd_->parsed(); }
  int run() const;

 private:
  CLI::App* cmd_ = nullptr;
  NetcheckSpec spec_;
  FramingModel framing_;
  bool no_framing_ = false;
  std::string network_, hardware_, out_;
};

}  // namespace rapid
