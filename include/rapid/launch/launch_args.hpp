// A training layout as a stack's own launch command (`rapid launch`, docs/launch.md): the
// flags of Megatron-LM's pretrain_gpt.py, the key=value overrides of NeMo 2.0's
// `nemo llm pretrain`, or the --section.key overrides of torchtitan's trainer. Each flag or
// key name is the stack's own, cited where it is set (src/launch/*_launch.cpp); what a stack
// cannot express is a warning line, never a silent drop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/parallel_config.hpp"

namespace rapid {

enum class LaunchStack : uint8_t { Megatron, Nemo, Torchtitan };
/// Names of LaunchStack values, indexed by value (`rapid launch --stack NAME`).
inline constexpr const char* kLaunchStackNames[] = {"megatron", "nemo", "torchtitan"};

/// The stack named `name`; InputError (file "<command line>", key --stack) listing the
/// stacks otherwise.
LaunchStack parse_launch_stack(const std::string& name);

/// One argument: a flag and its value (`--micro-batch-size 1`, `data.micro_batch_size=1`);
/// an empty value is a switch (`--sequence-parallel`).
struct LaunchArg {
  std::string name;
  std::string value;
};

/// What the launch command is built from: the model, the step's batch, the layout and the
/// GPUs per node of the network (the node count is gpus / gpus_per_node, rounded up).
struct LaunchInputs {
  ModelSpec model;
  int64_t global_batch_size = 0;  ///< sequences per step
  int64_t seq_length = 0;         ///< tokens per sequence
  ParallelConfig par;             ///< dp filled in
  int64_t gpus_per_node = 8;
};

/// Nodes and GPUs per node of a job: `gpus` on ceil(gpus / gpus_per_node) nodes, each
/// starting min(gpus, gpus_per_node) processes.
struct LaunchNodes {
  int64_t nodes = 1;
  int64_t per_node = 1;
};
LaunchNodes launch_nodes(int64_t gpus, int64_t gpus_per_node);

/// One stack's command for a layout.
struct LaunchArgs {
  LaunchStack stack = LaunchStack::Megatron;
  /// Where the names come from: repository, path and commit (a '#' line).
  std::vector<std::string> sources;
  /// Environment, launcher and program before the arguments ("torchrun ... pretrain_gpt.py").
  std::string program;
  std::vector<LaunchArg> args;
  /// Between a name and its value: ' ' (flags) or '=' (NeMo's overrides).
  char separator = ' ';
  std::string suffix;                 ///< after the arguments (NeMo's `-y`)
  std::vector<std::string> warnings;  ///< layout features the stack cannot express
  std::vector<std::string> notes;     ///< what the user still has to supply

  /// The argument named `name`, or nullptr.
  const LaunchArg* find(std::string_view name) const;
};

LaunchArgs megatron_launch(const LaunchInputs& in);
LaunchArgs nemo_launch(const LaunchInputs& in);
LaunchArgs torchtitan_launch(const LaunchInputs& in);
/// The command of `stack` (one of the three above).
LaunchArgs launch_args(LaunchStack stack, const LaunchInputs& in);

/// The command as text: `header` lines and the sources, warnings and notes as '#' lines,
/// then the command, one argument per line joined by " \\\n    " (a shell line).
std::string render_launch(const LaunchArgs& c, const std::vector<std::string>& header);

}  // namespace rapid
