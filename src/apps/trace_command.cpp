#include "apps/trace_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "rapid/analytical/analytical_evaluator.hpp"
#include "rapid/common/error.hpp"
#include "rapid/common/version.hpp"
#include "rapid/trace/trace_check.hpp"
#include "rapid/trace/trace_writer.hpp"

namespace rapid {

namespace {

/// "A-B" or "A" -> [A, B]; `world` for an empty range (every rank).
std::pair<int64_t, int64_t> parse_ranks(const std::string& s, int64_t world) {
  if (s.empty()) return {0, world - 1};
  const size_t dash = s.find('-');
  const std::string a = s.substr(0, dash), b = dash == std::string::npos ? a : s.substr(dash + 1);
  auto number = [&](const std::string& x) {
    if (x.empty() || x.size() > 9 || x.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("<command line>", "--ranks", s, "FIRST-LAST or RANK (decimal ranks)");
    return std::stoll(x);
  };
  return {number(a), number(b)};
}

}  // namespace

TraceCommand::TraceCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("trace",
                            "write a layout's per-rank Chakra execution traces (or inspect them)");
  cmd_->require_subcommand(0, 1);
  cmd_->add_option("job", job_, "job YAML file");
  add_layout_options(*cmd_, layout_);
  cmd_->add_option("-o,--output", out_, "directory for PREFIX.RANK.et and PREFIX.comm_groups.json");
  cmd_->add_option("--ranks", ranks_, "ranks to write, FIRST-LAST (default: all)");
  cmd_->add_option("--prefix", prefix_, "file name prefix (default rapid)");
  inspect_ = cmd_->add_subcommand("inspect", "read a trace directory back and check its graph");
  inspect_->add_option("dir", inspect_dir_, "directory of PREFIX.RANK.et files")->required();
}

int TraceCommand::run() const {
  if (inspect_->parsed()) {
    const trace::TraceSet set = trace::scan_trace_dir(inspect_dir_);
    const trace::InspectReport r = trace::inspect_trace(inspect_dir_);
    std::fputs(trace::describe_inspect(set, r).c_str(), stdout);
    return 0;
  }
  if (job_.empty()) throw InputError("<command line>", "job", "<none>", "a job YAML file");
  if (out_.empty()) throw InputError("<command line>", "-o", "<none>", "an output directory");
  const SweepSpec spec = load_sweep_spec(job_);
  if (spec.mode != JobMode::Training)
    throw InputError(job_, "mode", "inference", "a training job (a trace is one training step)");
  std::string origin;
  const Point p = resolve_layout(spec, layout_, &origin);
  const HardwareSpec& hw = spec.hardware[static_cast<size_t>(p.hardware)];
  const NetworkSpec& net = spec.network_of(static_cast<size_t>(p.hardware));
  // The step as the model runs it on this GPU (the overlaps it credits there, stack_training).
  const TrainingSpec training = stack_training(hw, spec.training);
  const AnalyticalEvaluator eval(spec.model, training, hw, net);
  Workload w;
  build_workload(spec.model, training, net, p.par, w);
  trace::TraceInputs in{&w,
                        &spec.model,
                        &training,
                        &eval.compute_cost(),
                        &eval.collective_cost(),
                        eval.step_efficiency(),
                        net.gpus_per_node};
  const int64_t world = int64_t{p.par.tp} * p.par.cp * p.par.dp * p.par.pp;
  const auto [first, last] = parse_ranks(ranks_, world);
  trace::TraceMetadata meta;
  meta.producer = fmt::format("rapid-sweep {} ({})", version(), git_revision());
  meta.job = spec.name;
  meta.layout = p.par.describe();
  meta.dtype = dtype_name(spec.training.dtype);
  const auto t0 = std::chrono::steady_clock::now();
  const trace::TraceWriteSummary s = trace::write_trace(in, meta, out_, prefix_, first, last);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("trace       %s, %s: ranks %lld-%lld of %lld written to %s/%s.RANK.et\n",
              spec.name.c_str(), meta.layout.c_str(), static_cast<long long>(first),
              static_cast<long long>(last), static_cast<long long>(world), out_.c_str(),
              prefix_.c_str());
  std::printf("layout      %s: %s\n", meta.layout.c_str(), origin.c_str());
  std::printf(
      "            %llu nodes (%llu COMP, %llu COLL, %llu SEND, %llu RECV), %.1f MB, "
      "%zu process groups in %s\n",
      static_cast<unsigned long long>(s.nodes), static_cast<unsigned long long>(s.by_type[4]),
      static_cast<unsigned long long>(s.by_type[7]), static_cast<unsigned long long>(s.by_type[5]),
      static_cast<unsigned long long>(s.by_type[6]), static_cast<double>(s.bytes) / 1e6, s.groups,
      s.groups_file.c_str());
  std::printf("            %.2f s, %.0f nodes/s\n", wall, static_cast<double>(s.nodes) / wall);
  return 0;
}

}  // namespace rapid
