#include "rapid/spec/sweep_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>

#include "config_resolve.hpp"
#include "rapid/common/error.hpp"
#include "rapid/common/install_dirs.hpp"
#include "rapid/common/suggest.hpp"
#include "rapid/spec/hardware_variant.hpp"
#include "rapid/spec/legality.hpp"
#include "rapid/spec/yaml_reader.hpp"

#ifndef RAPID_SOURCE_DIR
#define RAPID_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace rapid {

std::vector<std::string> config_search_dirs(const std::string& job_path) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("RAPID_CONFIG_DIR"); env && *env) dirs.emplace_back(env);
  fs::path job_dir = fs::path(job_path).parent_path();
  if (job_dir.empty()) job_dir = ".";
  dirs.push_back((job_dir / ".." / "configs").lexically_normal().string());
  dirs.push_back((job_dir / "configs").lexically_normal().string());
  dirs.emplace_back("configs");
  // An installed program's own configs (<prefix>/share/rapid-sweep/configs, found from its
  // path), before the source tree it was built from; a program in its build tree has none.
  if (const std::string data = installed_data_dir(); !data.empty())
    dirs.push_back((fs::path(data) / "configs").string());
  dirs.push_back((fs::path(RAPID_SOURCE_DIR) / "configs").string());
  return dirs;
}

std::string find_named_config(const std::string& kind, const std::string& name,
                              const std::string& job_path) {
  // Names may hold dots ("nemo-24.09", "llama3.1-70b"): only a .yaml ending is a file name.
  const std::string file = name.ends_with(".yaml") ? name : name + ".yaml";
  for (const auto& dir : config_search_dirs(job_path)) {
    fs::path c = fs::path(dir) / kind / file;
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal().string();
  }
  return "";
}

namespace {

using detail::resolve_config;

// Largest parallel degree, GPU count or micro-batch size a job may name (2^24 = 16M GPUs).
constexpr int64_t kMaxDegree = int64_t{1} << 24;

/// Stragglers must name GPUs of the job (its largest GPU count); a straggler's degraded
/// NIC becomes a fault on each of its GPUs' NIC links (docs/faults.md), so that both
/// evaluators see it where they see link faults.
void check_stragglers(SweepSpec& spec, bool listed) {
  const int64_t gpus = *std::max_element(spec.search.num_gpus.begin(), spec.search.num_gpus.end());
  const int64_t per_node = spec.network.gpus_per_node;
  for (size_t i = 0; i < spec.scenarios.size(); ++i) {
    NonIdealSpec& sc = spec.scenarios[i];
    for (size_t k = 0; k < sc.stragglers.size(); ++k) {
      const StragglerSpec& s = sc.stragglers[k];
      const auto [first, count] = s.gpus(per_node, spec.network.nodes_per_leaf);
      if (first >= gpus)
        throw InputError(spec.job.path,
                         listed ? fmt::format("scenarios[{}].stragglers[{}]", i, k)
                                : fmt::format("nonideal.stragglers[{}]", k),
                         std::to_string(s.index),
                         fmt::format("a GPU, node or rack of the job (it has {} GPUs, {} per node)",
                                     gpus, per_node));
      if (s.nic_health >= 1.0) continue;
      for (int64_t g = first; g < std::min(gpus, first + count); ++g) {
        LinkFault f;
        f.selector = LinkSelector::Nic;
        f.index = g;
        f.health = s.nic_health;
        sc.link_faults.push_back(f);
      }
    }
  }
}

/// Each list's values once, in increasing order (a repeated value must not repeat points).
void sort_unique(std::initializer_list<std::vector<int64_t>*> lists) {
  for (std::vector<int64_t>* list : lists) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
}

SearchSpace parse_search(const YamlMap& s, int64_t gpus_per_node) {
  SearchSpace sp;
  std::vector<int64_t> tp_default;
  for (int64_t t = 1; t <= gpus_per_node; t *= 2) tp_default.push_back(t);
  sp.tp = s.integer_list_or("tp", tp_default, 1, kMaxDegree);
  sp.pp = s.integer_list_or("pp", sp.pp, 1, kMaxDegree);
  sp.cp = s.integer_list_or("cp", sp.cp, 1, kMaxDegree);
  sp.ep = s.integer_list_or("ep", sp.ep, 1, kMaxDegree);
  sp.etp = s.integer_list_or("etp", sp.etp, 1, kMaxDegree);
  sp.vpp = s.integer_list_or("vpp", sp.vpp, 1, kMaxDegree);
  sp.mbs = s.integer_list_or("mbs", sp.mbs, 1, kMaxDegree);
  std::vector<int> rc =
      s.choice_list_or("recompute", {"none", "selective", "full", "op"}, {0, 1, 2});
  sp.recompute.clear();
  for (int r : rc) sp.recompute.push_back(static_cast<Recompute>(r));
  sp.sp = s.boolean_list_or("sp", sp.sp);
  sp.recompute_method.clear();
  for (int m : s.choice_list_or("recompute_method", {"uniform", "block", "every"}, {0}))
    sp.recompute_method.push_back(static_cast<RecomputeMethod>(m));
  sp.recompute_layers = s.integer_list_or("recompute_num_layers", sp.recompute_layers, 1, 100000);
  sp.offload_layers = s.integer_list_or("cpu_offload_layers", sp.offload_layers, 0, 100000);
  sp.zero_stage = s.integer_list_or("zero_stage", sp.zero_stage, 0, 3);
  // Each value once, in increasing order (a repeated value must not repeat points).
  sort_unique({&sp.tp, &sp.pp, &sp.cp, &sp.ep, &sp.etp, &sp.vpp, &sp.mbs, &sp.zero_stage,
               &sp.recompute_layers, &sp.offload_layers});
  std::sort(sp.recompute.begin(), sp.recompute.end());
  sp.recompute.erase(std::unique(sp.recompute.begin(), sp.recompute.end()), sp.recompute.end());
  std::sort(sp.recompute_method.begin(), sp.recompute_method.end());
  sp.recompute_method.erase(std::unique(sp.recompute_method.begin(), sp.recompute_method.end()),
                            sp.recompute_method.end());
  std::sort(sp.sp.begin(), sp.sp.end());
  sp.sp.erase(std::unique(sp.sp.begin(), sp.sp.end()), sp.sp.end());
  sp.allow_tp_across_nodes = s.boolean_or("allow_tp_across_nodes", false);
  sp.allow_uneven_pp = s.boolean_or("allow_uneven_pp", false);
  s.finish();
  return sp;
}

/// `search:` of a serving job (mode: inference): tp, pp and ep are swept (dp = replicas =
/// gpus / (tp * pp)); every training knob keeps its single neutral value.
SearchSpace parse_serving_search(const YamlMap& s, int64_t gpus_per_node) {
  const std::vector<std::string> known = {"tp", "pp", "ep", "allow_tp_across_nodes"};
  for (const std::string& key : s.keys())
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      const std::string hint = did_you_mean(suggest(key, known), s.key_path(""));
      s.fail(key, key,
             "tp, pp, ep or allow_tp_across_nodes (a mode: inference job sweeps no training "
             "knob" +
                 (hint.empty() ? "" : "; " + hint) + ")");
    }
  SearchSpace sp;
  std::vector<int64_t> tp_default;
  for (int64_t t = 1; t <= gpus_per_node; t *= 2) tp_default.push_back(t);
  sp.tp = s.integer_list_or("tp", tp_default, 1, kMaxDegree);
  sp.pp = s.integer_list_or("pp", {1}, 1, kMaxDegree);
  sp.ep = s.integer_list_or("ep", {1}, 1, kMaxDegree);
  sort_unique({&sp.tp, &sp.pp, &sp.ep});
  sp.cp = sp.etp = sp.vpp = sp.mbs = {1};
  sp.recompute = {Recompute::None};
  sp.recompute_method = {RecomputeMethod::Uniform};
  sp.recompute_layers = {1};
  sp.offload_layers = {0};
  sp.sp = {false};
  sp.zero_stage = {0};
  sp.allow_tp_across_nodes = s.boolean_or("allow_tp_across_nodes", false);
  s.finish();
  return sp;
}

ParallelConfig parse_baseline(const YamlMap& b, const SweepSpec& spec) {
  ParallelConfig c;
  c.tp = static_cast<int32_t>(b.integer_or("tp", 1, 1, kMaxDegree));
  c.pp = static_cast<int32_t>(b.integer_or("pp", 1, 1, kMaxDegree));
  c.cp = static_cast<int32_t>(b.integer_or("cp", 1, 1, kMaxDegree));
  c.ep = static_cast<int32_t>(b.integer_or("ep", 1, 1, kMaxDegree));
  c.etp = static_cast<int32_t>(b.integer_or("etp", 1, 1, kMaxDegree));
  c.vpp = static_cast<int32_t>(b.integer_or("vpp", 1, 1, kMaxDegree));
  c.mbs = static_cast<int32_t>(b.integer_or("mbs", 1, 1, kMaxDegree));
  c.sp = b.boolean_or("sp", false);
  c.zero_stage = static_cast<int8_t>(b.integer_or("zero_stage", 0, 0, 3));
  c.recompute =
      static_cast<Recompute>(b.choice_or("recompute", {"none", "selective", "full", "op"}, 0));
  if (c.recompute == Recompute::Full) {
    c.recompute_method = static_cast<RecomputeMethod>(
        b.choice_or("recompute_method", {"uniform", "block", "every"}, 0));
    c.recompute_layers = static_cast<int32_t>(b.integer_or("recompute_num_layers", 1, 1, 100000));
  }
  c.offload_layers = static_cast<int32_t>(b.integer_or("cpu_offload_layers", 0, 0, 100000));
  int64_t gpus = b.integer_or("gpus", spec.search.num_gpus.front(), 1, kMaxDegree);
  const int64_t dp = data_parallel_degree(gpus, c.tp, c.pp, c.cp);
  if (dp == 0)
    b.fail("tp", std::to_string(c.tp),
           fmt::format("tp*pp*cp = {}*{}*{} to divide the GPU count {}", c.tp, c.pp, c.cp, gpus));
  c.dp = static_cast<int32_t>(dp);
  if (b.has("dp") && b.integer("dp") != c.dp)
    b.fail("dp", std::to_string(b.integer("dp")), fmt::format("gpus/(tp*pp*cp) = {}", c.dp));
  b.finish();
  return c;
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& job_path) {
  // The path names the job in the result file (UTF-8 strings) and is its default name.
  if (!is_utf8(job_path))
    throw InputError("<command line>", "job", "<not UTF-8>",
                     "a job path in UTF-8 (it is stored in the result file)");
  return load_sweep_spec_text(job_path, read_text_file(job_path));
}

SweepSpec load_sweep_spec_text(const std::string& job_path, const std::string& yaml) {
  SweepSpec spec;
  spec.job = Source{job_path, yaml};
  YamlMap job(load_yaml_text(spec.job.yaml, job_path), job_path);
  spec.name = job.string_or("name", fs::path(job_path).stem().string());
  job.has("description");

  spec.mode = static_cast<JobMode>(job.choice_or("mode", {"training", "inference"}, 0));
  const bool serving = spec.mode == JobMode::Inference;
  auto [model_node, model_src] = resolve_config(job, job.node("model"), "model", "models");
  spec.model = parse_model(model_node, model_src.path);
  spec.model_source = model_src;

  // The hardware axis: the job's hardware files and variants, then its grid's variants
  // (docs/variants.md); each is parsed once, here.
  YAML::Node hw = job.node("hardware");
  std::vector<YAML::Node> hw_items;
  if (hw.IsSequence()) {
    for (const auto& item : hw) hw_items.push_back(item);
    if (hw_items.empty()) job.fail("hardware", "[]", "at least one hardware config");
  } else {
    hw_items.push_back(hw);
  }
  std::vector<ResolvedHardware> resolved;
  for (const auto& item : hw_items) resolved.push_back(resolve_hardware(job, item, "hardware"));
  if (job.has("hardware_grid"))
    for (ResolvedHardware& r : expand_hardware_grid(job, job.node("hardware_grid")))
      resolved.push_back(std::move(r));
  std::map<std::string, HardwareSpec> roots;  // each root base parsed once (grids share one)
  for (const ResolvedHardware& r : resolved) {
    const HardwareSpec* root = nullptr;
    if (!r.is_base) {
      auto it = roots.find(r.base_path);
      if (it == roots.end())
        it = roots.emplace(r.base_path, parse_hardware(r.base_node, r.base_path)).first;
      root = &it->second;
    }
    spec.hardware.push_back(parse_resolved(r, root));
    spec.hardware_sources.push_back(Source{r.path, r.text});
    const std::string& factors_from = spec.hardware.back().stack_factors_from;
    if (!factors_from.empty() && find_named_config("hardware", factors_from, job_path).empty()) {
      const std::string hint =
          did_you_mean(suggest(factors_from, detail::known_configs("hardware", job_path)));
      throw InputError(r.file, "stack_factors_from", factors_from,
                       "the name of a hardware file of configs/hardware (the GPU with the same "
                       "die whose stack factors this one runs)" +
                           (hint.empty() ? "" : "; " + hint));
    }
    for (size_t i = 0; i + 1 < spec.hardware.size(); ++i)
      if (spec.hardware[i].name == spec.hardware.back().name)
        throw InputError(r.file, "name", spec.hardware.back().name,
                         fmt::format("a hardware name no other entry of {} has (the result "
                                     "file's rows name their hardware by it)",
                                     job_path));
  }

  auto [net_node, net_src] = resolve_config(job, job.node("network"), "network", "networks");
  spec.network = parse_network(net_node, net_src.path);
  spec.network_source = net_src;
  for (const ResolvedHardware& r : resolved)
    spec.variants.push_back(make_variant(r, net_node, net_src.path, spec.network));

  const YamlMap search = job.has("search")
                             ? job.map("search")
                             : YamlMap(YAML::Node(YAML::NodeType::Map), job.file(), "search");
  if (serving) {
    for (const char* key : {"training", "baseline", "nonideal", "scenarios"})
      if (job.has(key))
        job.fail(key, "<given>",
                 "no such mapping in a mode: inference job (serving settings go under serving:)");
    if (!job.has("serving")) job.fail("serving", "<missing>", "a serving: mapping");
    spec.serving = parse_serving(job.map("serving"), job_path);
    // What the rest of the program reads of a training spec: precision and lengths.
    spec.training.dtype = spec.serving.dtype;
    spec.training.seq_length = spec.serving.max_seq_tokens();
    spec.training.global_batch_size = 1;
    spec.search = parse_serving_search(search, spec.network.gpus_per_node);
  } else {
    if (job.has("serving"))
      job.fail("serving", "<given>", "mode: inference for a serving: mapping (this job trains)");
    spec.training = parse_training(job.map("training"), spec.model.seq_length, job_path);
    spec.search = parse_search(search, spec.network.gpus_per_node);
  }
  spec.search.num_gpus = job.integer_list_or("gpus", {}, 1, kMaxDegree);
  if (spec.search.num_gpus.empty()) job.fail("gpus", "<missing>", "a GPU count or a list of them");
  const int64_t per_node = spec.network.gpus_per_node;
  for (int64_t g : spec.search.num_gpus) {
    bool whole_nodes = g % per_node == 0;
    bool part_of_node = g < per_node && per_node % g == 0;
    if (!whole_nodes && !part_of_node)
      job.fail("gpus", std::to_string(g),
               fmt::format("a multiple of the network's gpus_per_node ({}) or a divisor of it",
                           per_node));
  }

  const DType dtype = spec.training.dtype;
  for (size_t i = 0; i < spec.hardware.size(); ++i)
    if (spec.hardware[i].tensor_peak_FLOPs[static_cast<int>(dtype)] <= 0)
      throw InputError(spec.hardware_sources[i].path, "tensor_peak", dtype_name(dtype),
                       fmt::format("a {} tensor peak, since training.dtype is {}",
                                   dtype_name(dtype), dtype_name(dtype)));
  if (job.has("baseline")) spec.baseline = parse_baseline(job.map("baseline"), spec);
  if (job.has("simulation")) {  // discrete-event settings (docs/des.md)
    const YamlMap sim = job.map("simulation");
    spec.simulation.des_top_k = sim.integer_or("des_top_k", spec.simulation.des_top_k);
    spec.simulation.des_full = sim.choice_or("replicas", {"auto", "all"}, 0) == 1;
    sim.finish();
  }
  spec.scenarios =
      serving ? parse_scenarios(YAML::Node(), YAML::Node(), job.file())
              : parse_scenarios(job.has("nonideal") ? job.node("nonideal") : YAML::Node(),
                                job.has("scenarios") ? job.node("scenarios") : YAML::Node(),
                                job.file());
  check_stragglers(spec, job.has("scenarios"));
  // Power, thermal and stragglers need the GPU's power coefficients (docs/nonideal.md).
  for (const NonIdealSpec& sc : spec.scenarios) {
    if (!sc.needs_power_model()) continue;
    for (size_t i = 0; i < spec.hardware.size(); ++i)
      if (!spec.hardware[i].power.given() || spec.hardware[i].tdp_W <= 0)
        throw InputError(spec.hardware_sources[i].path, "power", "<missing>",
                         fmt::format("a tdp and a power: section (idle: W, hbm_pJ_per_byte, ...: "
                                     "docs/nonideal.md sec 1), since scenario '{}' of {} turns "
                                     "on power, thermal or stragglers",
                                     sc.name, spec.job.path));
    break;
  }
  job.finish();

  if (spec.baseline) {
    const char* why = illegal_reason(spec, *spec.baseline);
    if (why)
      job.fail("baseline", spec.baseline->describe(), fmt::format("a legal layout ({})", why));
  }
  attach_intervals(spec, job_path);
  return spec;
}

}  // namespace rapid
