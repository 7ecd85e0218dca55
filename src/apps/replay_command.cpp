#include "apps/replay_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "rapid/common/error.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
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

}  // namespace

void add_replay_options(CLI::App& predict, ChakraReplayOptions& o) {
  predict.add_option("--from-chakra", o.dir,
                     "replay a Chakra trace directory (PREFIX.RANK.et) instead of a job");
  predict.add_option("--hardware", o.hardware, "with --from-chakra: hardware file or name");
  predict.add_option("--network", o.network, "with --from-chakra: network file or name");
  predict.add_option("--dtype", o.dtype,
                     "with --from-chakra: tensor dtype of roofline compute nodes (default: the "
                     "trace's, else bf16)");
}

int run_replay(const ChakraReplayOptions& o) {
  if (!o.hardware || !o.network)
    throw InputError("<command line>", o.hardware ? "--network" : "--hardware", "<none>",
                     "--hardware H and --network N with --from-chakra");
  const HardwareSpec hw = load_hardware_file(config_path("hardware", "--hardware", *o.hardware));
  const std::string net_file = config_path("networks", "--network", *o.network);
  const NetworkSpec net = parse_network(load_yaml_file(net_file), net_file);
  const trace::TraceSet set = trace::scan_trace_dir(*o.dir);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<trace::RankTrace> ranks;
  for (const auto& [rank, file] : set.files)
    ranks.push_back({rank, file, trace::read_et_file(file)});
  const std::string dt = o.dtype.value_or(ranks.front().et.meta.dtype);
  const std::optional<DType> dtype = dtype_from_name(dt);
  if (!dtype) throw InputError("<command line>", "--dtype", dt, "bf16, fp16, fp8 or fp32");
  const ComputeCost compute(hw, *dtype);
  const CollectiveCost collective(hw, net);
  trace::ReplayInputs in;
  in.compute = &compute, in.collective = &collective, in.step_efficiency = hw.step_efficiency;
  in.network = &net;
  const trace::ReplayResult r =
      trace::replay_traces(ranks, set.groups ? &*set.groups : nullptr, in);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("replay      %zu ranks of %s (%s.RANK.et) on %s, %s\n", ranks.size(), set.dir.c_str(),
              set.prefix.c_str(), hw.name.c_str(), net.name.c_str());
  std::printf("step time   %.6f s (critical rank %lld)\n", r.step_time_s,
              static_cast<long long>(r.critical_rank));
  std::printf(
      "            %llu nodes, %llu events, %.2f s; compute nodes timed by our cost "
      "model %llu, by roofline (num_ops, tensor_size) %llu, by recorded duration %llu\n",
      static_cast<unsigned long long>(r.nodes), static_cast<unsigned long long>(r.events), wall,
      static_cast<unsigned long long>(r.by_model), static_cast<unsigned long long>(r.by_roofline),
      static_cast<unsigned long long>(r.by_duration));
  return 0;
}

}  // namespace rapid
