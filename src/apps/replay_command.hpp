// `rapid predict --from-chakra DIR --hardware H --network N`: one step of a Chakra trace
// directory (ours or another tool's) replayed on our cost models (trace/trace_replay.hpp,
// docs/chakra.md "Replay").
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace rapid {

struct ChakraReplayOptions {
  std::optional<std::string> dir;  ///< --from-chakra
  std::optional<std::string> hardware, network;
  std::optional<std::string> dtype;  ///< default: the trace's metadata, else bf16
};

void add_replay_options(CLI::App& predict, ChakraReplayOptions& o);
int run_replay(const ChakraReplayOptions& o);

}  // namespace rapid
