#include "apps/launch_command.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "rapid/common/error.hpp"
#include "rapid/launch/launch_args.hpp"

namespace rapid {

LaunchCommand::LaunchCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("launch",
                            "print a layout as Megatron-LM, NeMo or torchtitan launch arguments");
  cmd_->add_option("job", job_, "job YAML file (a training job)");
  cmd_->add_option("--stack", stack_, "megatron, nemo or torchtitan")->required();
  add_layout_options(*cmd_, layout_);
}

int LaunchCommand::run() const {
  const LaunchStack stack = parse_launch_stack(stack_);  // before the job: a typo fails alone
  if (job_.empty()) throw InputError("<command line>", "job", "<none>", "a job YAML file");
  const SweepSpec spec = load_sweep_spec(job_);
  if (spec.mode != JobMode::Training)
    throw InputError(job_, "mode", "inference",
                     "a training job (launch arguments are for training layouts)");
  std::string origin;
  const Point p = resolve_layout(spec, layout_, &origin);
  LaunchInputs in;
  in.model = spec.model;
  in.global_batch_size = spec.training.global_batch_size;
  in.seq_length = spec.training.seq_length;
  in.par = p.par;
  in.gpus_per_node = spec.network_of(static_cast<size_t>(p.hardware)).gpus_per_node;
  const LaunchArgs c = launch_args(stack, in);
  const LaunchNodes nodes = launch_nodes(p.par.num_gpus(), in.gpus_per_node);
  const std::vector<std::string> header = {
      fmt::format("rapid launch --stack {}: {}, {} GPUs ({} nodes x {}), {} x {} tokens per step",
                  kLaunchStackNames[static_cast<int>(stack)], spec.name, p.par.num_gpus(),
                  nodes.nodes, nodes.per_node, in.global_batch_size, in.seq_length),
      fmt::format("layout {}: {}", p.par.describe(), origin)};
  std::fputs(render_launch(c, header).c_str(), stdout);
  return 0;
}

}  // namespace rapid
