// `rapid predict --from-chakra DIR --hardware H --network N` and
// `rapid predict JOB.yaml --from-chakra DIR [--scenario S] [--hardware-index H]`: one step of
// a Chakra trace directory (ours or another tool's) replayed on our cost models
// (trace/trace_replay.hpp; with a job on its system and scenario, trace/job_replay.hpp;
// docs/chakra.md "Replay").
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "apps/layout_options.hpp"

namespace rapid {

struct ChakraReplayOptions {
  std::optional<std::string> dir;  ///< --from-chakra
  std::optional<std::string> hardware, network;
  std::optional<std::string> dtype;  ///< default: the trace's metadata, else bf16
  std::string job;                   ///< predict's job file: the system and scenario
  std::optional<std::string> scenario;
};

void add_replay_options(CLI::App& predict, ChakraReplayOptions& o);
/// `layout`: predict's layout options; with --from-chakra only --hardware-index (with a job)
/// is accepted, the others are an InputError (the trace is the layout).
int run_replay(const ChakraReplayOptions& o, const LayoutOptions& layout);

}  // namespace rapid
