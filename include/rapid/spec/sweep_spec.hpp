// A job file (jobs/*.yaml): the three inputs (application = model, system = hardware
// variants + network, execution = the search space of parallel layouts) plus the training
// settings and an optional baseline layout to compare against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rapid/spec/hardware_spec.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/interval_spec.hpp"
#include "rapid/spec/model_spec.hpp"
#include "rapid/spec/network_spec.hpp"
#include "rapid/spec/nonideal_spec.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/serving_spec.hpp"
#include "rapid/spec/training_spec.hpp"

namespace rapid {

/// Candidate values of each knob. dp is derived: dp = gpus / (tp * pp * cp).
struct SearchSpace {
  std::vector<int64_t> num_gpus;
  std::vector<int64_t> tp{1, 2, 4, 8};
  std::vector<int64_t> pp{1, 2, 4, 8};
  std::vector<int64_t> cp{1};
  std::vector<int64_t> ep{1};
  std::vector<int64_t> etp{1};
  std::vector<int64_t> vpp{1};
  std::vector<int64_t> mbs{1, 2, 4};
  std::vector<Recompute> recompute{Recompute::None, Recompute::Selective, Recompute::Full};
  /// Full recompute's methods and layer counts (recompute_method, recompute_num_layers).
  std::vector<RecomputeMethod> recompute_method{RecomputeMethod::Uniform};
  std::vector<int64_t> recompute_layers{1};
  std::vector<int64_t> offload_layers{0};  ///< cpu_offload_layers
  std::vector<bool> sp{false, true};
  std::vector<int64_t> zero_stage{0, 1, 2, 3};
  bool allow_tp_across_nodes = false;  ///< tp may exceed gpus_per_node (TP over the network)
  bool allow_uneven_pp = false;        ///< pp need not divide num_layers
  /// Candidate points (the product of every axis's values, before the legality filter)
  /// the enumerator may walk; more is an input error decided before any enumeration
  /// (`rapid-sweep --max-points` raises it).
  double max_candidates = 1e9;
};

/// Where a config came from and its YAML text (kept for the HDF5 provenance).
struct Source {
  std::string path;  ///< file path, or "<inline in JOB>"
  std::string yaml;  ///< the text as given
};

/// The job's optional `simulation:` mapping (docs/des.md): how `rapid-sweep --fidelity
/// auto|des` runs the discrete-event simulator.
struct SimulationSpec {
  int64_t des_top_k = 4;  ///< auto: the DES on the best K points per (GPU count, hardware)
  bool des_full = false;  ///< `replicas: all`: simulate every DP replica (default auto)
};

/// What the job predicts: training steps, or serving (docs/inference.md).
enum class JobMode : uint8_t { Training, Inference };
inline constexpr const char* kJobModeNames[] = {"training", "inference"};

struct SweepSpec {
  /// The network hardware entry `h` runs on (the job's unless a variant changes it).
  const NetworkSpec& network_of(size_t h) const {
    return h < variants.size() ? variants[h].network : network;
  }

  std::string name;
  JobMode mode = JobMode::Training;
  Source job;
  ModelSpec model;
  Source model_source;
  std::vector<HardwareSpec> hardware;  ///< hardware variants, swept as a dimension
  std::vector<Source> hardware_sources;
  /// What each hardware entry is (same index): its base, the fields it overrides and the
  /// network it runs on (the job's, with a variant's network overrides).
  std::vector<HardwareVariant> variants;
  NetworkSpec network;
  Source network_source;
  TrainingSpec training;
  SearchSpace search;
  std::optional<ParallelConfig> baseline;  ///< dp filled in from the first GPU count
  SimulationSpec simulation;
  /// mode: inference: the serving stack, the request mix and the loads swept (`serving:`).
  ServingSpec serving;
  /// Non-ideal conditions swept as a dimension (at least one: "ideal", all off).
  std::vector<NonIdealSpec> scenarios;
  /// Prediction intervals of each hardware entry (same index; docs/validation.md
  /// "Prediction intervals") and the file they come from (path empty: none found).
  std::vector<IntervalBand> intervals;
  Source intervals_source;
};

/// Directories searched for configs referenced by name ("llama3-70b" ->
/// DIR/models/llama3-70b.yaml): RAPID_CONFIG_DIR, <job dir>/../configs, <job dir>/configs,
/// ./configs, the installed <prefix>/share/rapid-sweep/configs (found from the program's own
/// path: common/install_dirs.hpp), then the source tree's configs/ (compiled in).
std::vector<std::string> config_search_dirs(const std::string& job_path);

/// Path of configs/<kind>/<name>.yaml found in config_search_dirs(job_path), or "" when no
/// directory has it. `kind` is "models", "hardware", "networks" or "frameworks"; `name` may
/// end in .yaml.
std::string find_named_config(const std::string& kind, const std::string& name,
                              const std::string& job_path);

/// Loads and validates a job file. Throws InputError naming the file (the job file or the
/// referenced config), the key, the value and what was expected, for: unknown keys, missing
/// model/hardware/network/gpus/global_batch_size, unresolvable config names, GPU counts not
/// divisible by any layout, a baseline that is not a legal point.
SweepSpec load_sweep_spec(const std::string& job_path);
/// The same from the job's text as given (a result file's `job_yaml`); `job_path` names it
/// and anchors the search for the configs it names, as the file at that path would.
SweepSpec load_sweep_spec_text(const std::string& job_path, const std::string& yaml);

}  // namespace rapid
