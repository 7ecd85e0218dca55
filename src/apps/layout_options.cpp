#include "apps/layout_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "rapid/common/error.hpp"
#include "rapid/inference/serving_evaluator.hpp"
#include "rapid/spec/legality.hpp"

namespace rapid {

namespace {

// The enum value whose name (`names`, indexed by value) is `value`; an input error naming
// the command-line option and `expected` otherwise.
template <class E, size_t N>
E named(const char* const (&names)[N], const char* option, const std::string& value,
        const char* expected) {
  const auto* it = std::find(std::begin(names), std::end(names), value);
  if (it == std::end(names)) throw InputError("<command line>", option, value, expected);
  return static_cast<E>(it - std::begin(names));
}

}  // namespace

void add_layout_options(CLI::App& cmd, LayoutOptions& o) {
  const auto degree = CLI::Range(1, 1 << 24);
  cmd.add_option("--tp", o.tp, "tensor parallel degree")->check(degree);
  cmd.add_option("--pp", o.pp, "pipeline stages")->check(degree);
  cmd.add_option("--cp", o.cp, "context parallel degree")->check(degree);
  cmd.add_option("--ep", o.ep, "expert parallel degree (MoE models)")->check(degree);
  cmd.add_option("--etp", o.etp, "expert tensor parallel degree (MoE models)")->check(degree);
  cmd.add_option("--vpp", o.vpp, "virtual stages per GPU")->check(degree);
  cmd.add_option("--mbs", o.mbs, "micro-batch size")->check(degree);
  cmd.add_option("--zero", o.zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  cmd.add_option("--sp", o.sp, "sequence parallel (true/false)");
  cmd.add_option("--recompute", o.recompute, "none, selective, full or op (per-op, torchtitan)");
  cmd.add_option(
      "--recompute-method", o.recompute_method,
      "full recompute: uniform (groups), block (the first layers of each chunk) or every "
      "(every n-th layer)");
  cmd.add_option("--recompute-num-layers", o.recompute_layers,
                 "full recompute: layers per group (uniform), per chunk (block) or the period n "
                 "(every)")
      ->check(CLI::Range(1, 100000));
  cmd.add_option("--cpu-offload-layers", o.offload_layers,
                 "layers whose activations go to host memory")
      ->check(CLI::Range(0, 100000));
  cmd.add_option("--gpus", o.gpus, "GPU count (default: the job's first)")->check(degree);
  cmd.add_option("--hardware-index", o.hardware, "hardware variant of the job (default 0)");
}

namespace {

/// Without a baseline: the job's search where an axis has one value (a job that searches
/// one layout names it there), ParallelConfig's defaults elsewhere. `axes` gets the names
/// of the axes whose one value differs from the default.
ParallelConfig single_valued_search(const SearchSpace& s, std::vector<std::string>& axes) {
  ParallelConfig c;
  auto take = [&](const char* name, const auto& values, auto& field) {
    if (values.size() != 1) return;
    const auto v = static_cast<std::remove_reference_t<decltype(field)>>(values.front());
    if (v != field) axes.emplace_back(name);  // named where it differs from the default
    field = v;
  };
  take("tp", s.tp, c.tp);
  take("pp", s.pp, c.pp);
  take("cp", s.cp, c.cp);
  take("ep", s.ep, c.ep);
  take("etp", s.etp, c.etp);
  take("vpp", s.vpp, c.vpp);
  take("mbs", s.mbs, c.mbs);
  take("zero_stage", s.zero_stage, c.zero_stage);
  take("recompute", s.recompute, c.recompute);
  take("recompute_method", s.recompute_method, c.recompute_method);
  take("recompute_num_layers", s.recompute_layers, c.recompute_layers);
  take("cpu_offload_layers", s.offload_layers, c.offload_layers);
  if (s.sp.size() == 1) {
    if (s.sp.front() != c.sp) axes.emplace_back("sp");
    c.sp = s.sp.front();
  }
  return c;
}

}  // namespace

std::vector<std::string> given_flags(const LayoutOptions& o) {
  std::vector<std::string> flags;
  for (const auto& [name, given] : std::initializer_list<std::pair<const char*, bool>>{
           {"--tp", o.tp.has_value()},
           {"--pp", o.pp.has_value()},
           {"--cp", o.cp.has_value()},
           {"--ep", o.ep.has_value()},
           {"--etp", o.etp.has_value()},
           {"--vpp", o.vpp.has_value()},
           {"--mbs", o.mbs.has_value()},
           {"--zero", o.zero.has_value()},
           {"--sp", o.sp.has_value()},
           {"--recompute", o.recompute.has_value()},
           {"--recompute-method", o.recompute_method.has_value()},
           {"--recompute-num-layers", o.recompute_layers.has_value()},
           {"--cpu-offload-layers", o.offload_layers.has_value()},
           {"--gpus", o.gpus.has_value()},
           {"--hardware-index", o.hardware.has_value()}})
    if (given) flags.emplace_back(name);
  return flags;
}

Point resolve_layout(const SweepSpec& spec, const LayoutOptions& o, std::string* origin) {
  std::vector<std::string> axes;
  ParallelConfig c = spec.baseline ? *spec.baseline : single_valued_search(spec.search, axes);
  std::string from = spec.baseline ? "the job's baseline"
                     : axes.empty()
                         ? "defaults (the job has no baseline and no single-valued search axis)"
                         : fmt::format("the job's single-valued search ({}), defaults elsewhere",
                                       fmt::join(axes, ", "));
  if (const std::vector<std::string> flags = given_flags(o); !flags.empty())
    from += fmt::format("; {} from the command line", fmt::join(flags, ", "));
  if (origin) *origin = from;
  if (o.tp) c.tp = *o.tp;
  if (o.pp) c.pp = *o.pp;
  if (o.cp) c.cp = *o.cp;
  if (o.ep) c.ep = *o.ep;
  if (o.etp) c.etp = *o.etp;
  if (o.vpp) c.vpp = *o.vpp;
  if (o.mbs) c.mbs = *o.mbs;
  if (o.zero) c.zero_stage = static_cast<int8_t>(*o.zero);
  if (o.sp) c.sp = *o.sp;
  if (o.recompute)
    c.recompute = named<Recompute>(kRecomputeNames, "--recompute", *o.recompute,
                                   "none, selective, full or op");
  if (c.recompute != Recompute::Full) {
    c.recompute_method = RecomputeMethod::Uniform;
    c.recompute_layers = 1;
  }
  if (o.recompute_method)
    c.recompute_method = named<RecomputeMethod>(kRecomputeMethodNames, "--recompute-method",
                                                *o.recompute_method, "uniform, block or every");
  if (o.recompute_layers) c.recompute_layers = *o.recompute_layers;
  if (o.offload_layers) c.offload_layers = *o.offload_layers;
  const int64_t gpus = o.gpus ? *o.gpus : spec.search.num_gpus.front();
  const int64_t dp = data_parallel_degree(gpus, c.tp, c.pp, c.cp);
  if (dp == 0)
    throw InputError("<command line>", "--tp/--pp/--cp", fmt::format("{}*{}*{}", c.tp, c.pp, c.cp),
                     fmt::format("tp*pp*cp dividing the GPU count {}", gpus));
  c.dp = static_cast<int32_t>(dp);
  const bool serving = spec.mode == JobMode::Inference;
  if (const char* why = serving ? serving_illegal_reason(spec, c) : illegal_reason(spec, c))
    throw InputError(
        "<command line>", "layout",
        serving ? fmt::format("dp{} tp{} pp{} ep{}", c.dp, c.tp, c.pp, c.ep) : c.describe(),
        fmt::format("a legal layout ({}; the layout is {})", why, from));
  Point p;
  p.hardware = o.hardware.value_or(0);
  if (p.hardware < 0 || p.hardware >= static_cast<int>(spec.hardware.size()))
    throw InputError("<command line>", "--hardware-index", std::to_string(p.hardware),
                     fmt::format("an index below {}", spec.hardware.size()));
  p.par = c;
  return p;
}

int resolve_scenario(const SweepSpec& spec, const std::string& name) {
  const auto& all = spec.scenarios;
  auto it =
      std::find_if(all.begin(), all.end(), [&](const NonIdealSpec& s) { return s.name == name; });
  if (it != all.end()) return static_cast<int>(it - all.begin());
  if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos &&
      name.size() < 6 && std::stoi(name) < static_cast<int>(all.size()))
    return std::stoi(name);
  std::vector<std::string> names;
  for (const auto& s : all) names.push_back(s.name);
  throw InputError("<command line>", "--scenario", name,
                   fmt::format("a scenario of the job: {} (or its index)", fmt::join(names, ", ")));
}

}  // namespace rapid
