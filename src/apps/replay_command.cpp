#include "apps/replay_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "rapid/common/error.hpp"
#include "rapid/eval/report.hpp"
#include "rapid/eval/thermal_report.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "rapid/trace/job_replay.hpp"
#include "rapid/trace/trace_check.hpp"
#include "rapid/trace/trace_replay.hpp"

namespace rapid {

namespace {

/// A path, or a name under configs/<kind>/.
std::string config_path(const std::string& kind, const std::string& flag, const std::string& v) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(v, ec)) return v;
  const std::string found = find_named_config(kind, v, "");
  if (found.empty())
    throw InputError("<command line>", flag, v,
                     fmt::format("a file or a name under configs/{}/", kind));
  return found;
}

/// The trace is the layout: predict's layout options other than --hardware-index are refused.
void refuse_layout_options(const LayoutOptions& l) {
  const std::pair<const char*, bool> given[] = {
      {"--tp", l.tp.has_value()},
      {"--pp", l.pp.has_value()},
      {"--cp", l.cp.has_value()},
      {"--ep", l.ep.has_value()},
      {"--etp", l.etp.has_value()},
      {"--vpp", l.vpp.has_value()},
      {"--mbs", l.mbs.has_value()},
      {"--zero", l.zero.has_value()},
      {"--gpus", l.gpus.has_value()},
      {"--sp", l.sp.has_value()},
      {"--recompute", l.recompute.has_value()},
      {"--recompute-method", l.recompute_method.has_value()},
      {"--recompute-num-layers", l.recompute_layers.has_value()},
      {"--cpu-offload-layers", l.offload_layers.has_value()}};
  for (const auto& [flag, on] : given)
    if (on)
      throw InputError("<command line>", flag, "<given>",
                       "no layout option with --from-chakra (the trace is the layout)");
}

/// The replay's system without a job: the hardware and network files as given.
struct FileSystem {
  HardwareSpec hw;
  NetworkSpec net;
  std::unique_ptr<ComputeCost> compute;
  std::unique_ptr<CollectiveCost> collective;
};

void print_result(const trace::ReplayResult& r, double wall_s) {
  if (!r.no_route.empty())
    std::printf("step time   none: no route (%s)\n", r.no_route.c_str());
  else
    std::printf("step time   %.6f s (critical rank %lld)\n", r.step_time_s,
                static_cast<long long>(r.critical_rank));
  std::printf(
      "            %llu nodes, %llu events, %.2f s; compute nodes timed by our cost "
      "model %llu, by roofline (num_ops, tensor_size) %llu, by recorded duration %llu\n",
      static_cast<unsigned long long>(r.nodes), static_cast<unsigned long long>(r.events), wall_s,
      static_cast<unsigned long long>(r.by_model), static_cast<unsigned long long>(r.by_roofline),
      static_cast<unsigned long long>(r.by_duration));
  std::printf("network     %llu flow bundles, at most %d flows on one link at once\n",
              static_cast<unsigned long long>(r.bundles), r.peak_flows);
}

}  // namespace

void add_replay_options(CLI::App& predict, ChakraReplayOptions& o) {
  predict.add_option("--from-chakra", o.dir,
                     "replay a Chakra trace directory (PREFIX.RANK.et): on a job's system and "
                     "scenario (JOB.yaml: stragglers, link faults with most_loaded, the TDP cap, "
                     "the thermal model with DVFS), or on --hardware and --network");
  predict.add_option("--hardware", o.hardware, "with --from-chakra: hardware file or name");
  predict.add_option("--network", o.network, "with --from-chakra: network file or name");
  predict.add_option("--dtype", o.dtype,
                     "with --from-chakra: tensor dtype of roofline compute nodes (default: the "
                     "trace's, else bf16)");
}

int run_replay(const ChakraReplayOptions& o, const LayoutOptions& layout) {
  refuse_layout_options(layout);
  const bool job = !o.job.empty();
  if (job && (o.hardware || o.network || o.dtype))
    throw InputError("<command line>",
                     o.hardware  ? "--hardware"
                     : o.network ? "--network"
                                 : "--dtype",
                     o.hardware  ? *o.hardware
                     : o.network ? *o.network
                                 : *o.dtype,
                     "no --hardware, --network or --dtype with a job file (the job's, "
                     "--hardware-index picks a variant)");
  if (!job && (o.scenario || layout.hardware))
    throw InputError("<command line>", o.scenario ? "--scenario" : "--hardware-index",
                     o.scenario ? *o.scenario : std::to_string(*layout.hardware),
                     "a job file (rapid predict JOB.yaml --from-chakra DIR)");
  if (!job && (!o.hardware || !o.network))
    throw InputError("<command line>", o.hardware ? "--network" : "--hardware", "<none>",
                     "a job file, or --hardware H and --network N, with --from-chakra");
  // Every input is read and checked before the first line of output.
  std::optional<SweepSpec> spec;
  FileSystem files;
  size_t h = 0, s = 0;
  if (job) {
    spec.emplace(load_sweep_spec(o.job));
    if (spec->mode != JobMode::Training)
      throw InputError(o.job, "mode", "inference", "a training job (a trace is one training step)");
    h = static_cast<size_t>(layout.hardware.value_or(0));
    if (layout.hardware && (*layout.hardware < 0 || h >= spec->hardware.size()))
      throw InputError("<command line>", "--hardware-index", std::to_string(*layout.hardware),
                       fmt::format("an index below {}", spec->hardware.size()));
    if (o.scenario) s = static_cast<size_t>(resolve_scenario(*spec, *o.scenario));
  } else {
    files.hw = load_hardware_file(config_path("hardware", "--hardware", *o.hardware));
    const std::string net_file = config_path("networks", "--network", *o.network);
    files.net = parse_network(load_yaml_file(net_file), net_file);
  }
  const trace::TraceSet set = trace::scan_trace_dir(*o.dir);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<trace::RankTrace> ranks;
  int64_t world = 0;
  for (const auto& [rank, file] : set.files) {
    ranks.push_back(trace::read_rank_trace(rank, file));
    world = std::max(world, rank + 1);
  }
  trace::check_traces(set, ranks);  // inspect's checks, before anything is replayed
  std::unique_ptr<trace::JobReplay> on_job;
  trace::ReplayInputs in;
  if (job) {
    on_job = std::make_unique<trace::JobReplay>(*spec, h, s, world);
    in = on_job->inputs();
  } else {
    const std::string dt = o.dtype.value_or(ranks.front().et.meta.dtype);
    const std::optional<DType> dtype = dtype_from_name(dt);
    if (!dtype) throw InputError("<command line>", "--dtype", dt, "bf16, fp16, fp8 or fp32");
    files.compute = std::make_unique<ComputeCost>(files.hw, *dtype);
    files.collective = std::make_unique<CollectiveCost>(files.hw, files.net);
    in.compute = files.compute.get(), in.collective = files.collective.get();
    in.step_efficiency = files.hw.step_efficiency;
    in.network = &files.net;
  }
  const trace::ProcessGroups* groups = set.groups ? &*set.groups : nullptr;
  trace::JobReplayResult jr;
  if (job)
    jr = on_job->run(ranks, groups);
  else
    jr.replay = trace::replay_traces(ranks, groups, in);
  const trace::ReplayResult& r = jr.replay;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const HardwareSpec& hw = job ? on_job->hardware() : files.hw;
  const NetworkSpec& net = *in.network;
  std::printf("replay      %zu ranks of %s (%s.RANK.et) on %s, %s\n", ranks.size(), set.dir.c_str(),
              set.prefix.c_str(), hw.name.c_str(), net.name.c_str());
  if (job) {
    std::printf("system      %s: %s (%s), step efficiency %.4f\n", spec->name.c_str(),
                spec->training.framework.name.c_str(), dtype_name(spec->training.dtype),
                in.step_efficiency);
    if (!on_job->scenario_name().empty())
      std::printf("scenario    %s: %lld derated ranks, %zu link faults; not applied: %s\n",
                  on_job->scenario_name().c_str(), static_cast<long long>(on_job->derated_ranks()),
                  in.link_faults.size(),
                  on_job->left_out().empty()
                      ? "nothing"
                      : fmt::format("{}", fmt::join(on_job->left_out(), ", ")).c_str());
  }
  print_result(r, wall);
  if (!jr.most_loaded_link.empty())
    std::printf("faults      most_loaded faults on %s\n", jr.most_loaded_link.c_str());
  if (jr.thermal) {
    std::fputs(describe_thermal(*jr.thermal).c_str(), stdout);
    std::fputs(describe_thermal_line(jr.row).c_str(), stdout);
    if (jr.row.status == Status::Overheat)
      std::printf(
          "status      overheat: the hottest GPU is above its shutdown temperature (die %.0f C, "
          "HBM %.0f C)\n",
          on_job->hardware().thermal.die_shutdown_C, on_job->hardware().thermal.hbm_shutdown_C);
  }
  return 0;
}

}  // namespace rapid
