#include "rapid/spec/framework_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "rapid/common/error.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace rapid {

EndToEndFactors FrameworkSpec::factors_for(const std::string& hardware, bool* found) const {
  for (const std::string& key : {hardware, std::string("default")})
    if (auto it = end_to_end.find(key); it != end_to_end.end()) {
      if (found) *found = true;
      return it->second;
    }
  if (found) *found = false;
  return EndToEndFactors{};
}

AttentionImpl FrameworkSpec::pick_attention(const std::vector<AttentionImpl>& available) const {
  for (AttentionImpl a : attention) {
    if (a == AttentionImpl::Unfused) return a;
    if (std::find(available.begin(), available.end(), a) != available.end()) return a;
  }
  return AttentionImpl::Unfused;
}

namespace {

const std::vector<std::string> kImplNames(std::begin(kAttentionImplNames),
                                          std::end(kAttentionImplNames));

// Bytes per gradient element: bf16, fp32, or a bf16 .grad with an fp32 accumulation
// buffer beside it (nanotron's accumulate_grad_in_fp32).
constexpr int kGradBytes[] = {2, 4, 6};

std::vector<AttentionImpl> parse_attention(const YamlMap& m, std::vector<AttentionImpl> fallback) {
  const std::vector<int> picks = m.choice_list_or("attention", kImplNames, {});
  if (picks.empty()) return fallback;
  std::vector<AttentionImpl> out;
  for (int p : picks) out.push_back(static_cast<AttentionImpl>(p));
  return out;
}

}  // namespace

FrameworkSpec parse_framework(const YAML::Node& node, const std::string& file,
                              const FrameworkSpec& base) {
  YamlMap m(node, file);
  FrameworkSpec f = base;
  f.name = m.string("name");
  for (const char* k : {"base", "description", "source", "sources"}) m.has(k);
  f.attention = parse_attention(m, f.attention);
  if (m.has("fusions")) {
    const YamlMap u = m.map("fusions");
    Fusions& x = f.fusions;
    x.bias_dropout_add = u.boolean_or("bias_dropout_add", x.bias_dropout_add);
    x.bias_activation = u.boolean_or("bias_activation", x.bias_activation);
    x.rope = u.boolean_or("rope", x.rope);
    x.masked_softmax = u.boolean_or("masked_softmax", x.masked_softmax);
    x.cross_entropy = u.boolean_or("cross_entropy", x.cross_entropy);
    x.norm_cast = u.boolean_or("norm_cast", x.norm_cast);
    u.finish();
  }
  if (m.has("fp8")) {
    const YamlMap u = m.map("fp8");
    Fp8Recipe& r = f.fp8;
    r.dgrad = u.boolean_or("dgrad", r.dgrad);
    r.wgrad = u.boolean_or("wgrad", r.wgrad);
    r.attention = u.boolean_or("attention", r.attention);
    r.lm_head = u.boolean_or("lm_head", r.lm_head);
    r.cache_weights = u.boolean_or("cache_weights", r.cache_weights);
    r.amax_history_len = u.integer_or("amax_history_len", r.amax_history_len, 1, 1 << 20);
    u.finish();
  }
  f.tp_comm_overlap = m.boolean_or("tp_comm_overlap", f.tp_comm_overlap);
  f.overlap_grad_reduce = m.boolean_or("overlap_grad_reduce", f.overlap_grad_reduce);
  f.overlap_param_gather = m.boolean_or("overlap_param_gather", f.overlap_param_gather);
  auto grad_choice = [](int bytes) { return bytes == 2 ? 0 : bytes == 4 ? 1 : 2; };
  f.main_grad_bytes = kGradBytes[m.choice_or("main_grad_dtype", {"bf16", "fp32", "bf16+fp32"},
                                             grad_choice(f.main_grad_bytes))];
  f.grad_reduce_bytes = kGradBytes[m.choice_or("grad_reduce_dtype", {"bf16", "fp32"},
                                               grad_choice(f.grad_reduce_bytes))];
  f.host_overhead_per_op_s =
      m.quantity_or("host_overhead_per_op", Dimension::Time, f.host_overhead_per_op_s);
  f.grad_bucket_bytes = m.quantity_or("grad_bucket_size", Dimension::Size, f.grad_bucket_bytes);
  f.compute_efficiency = m.number_or("compute_efficiency", f.compute_efficiency, 0.05, 1.5);
  f.sp_keeps_gathered_inputs = m.boolean_or("sp_keeps_gathered_inputs", f.sp_keeps_gathered_inputs);
  f.tp_overlap_sms_gather = m.integer_or("tp_overlap_sms_gather", f.tp_overlap_sms_gather, 0, 1024);
  f.tp_overlap_sms_scatter =
      m.integer_or("tp_overlap_sms_scatter", f.tp_overlap_sms_scatter, 0, 1024);
  f.memory_reserve_bytes = m.quantity_or("memory_reserve", Dimension::Size, f.memory_reserve_bytes);
  f.fragmentation = m.number_or("fragmentation", f.fragmentation, 0.0, 3.0);
  f.loss_bytes_per_logit = m.number_or("loss_bytes_per_logit", f.loss_bytes_per_logit, 1.0, 64.0);
  if (m.has("supports")) {
    const YamlMap u = m.map("supports");
    f.supports_recompute_num_layers =
        u.boolean_or("recompute_num_layers", f.supports_recompute_num_layers);
    f.supports_cpu_offload = u.boolean_or("cpu_offload", f.supports_cpu_offload);
    f.cpu_offload_with_pp = u.boolean_or("cpu_offload_with_pp", f.cpu_offload_with_pp);
    u.finish();
  }
  if (m.has("end_to_end")) {
    const YamlMap e = m.map("end_to_end");
    for (const std::string& gpu : e.keys()) {
      const YamlMap g = e.map(gpu);
      EndToEndFactors x = f.factors_for(gpu);
      x.step = g.number_or("step", x.step, 0.05, 1.0);
      x.elementwise = g.number_or("elementwise", x.elementwise, 0.05, 1.0);
      g.finish();
      f.end_to_end[gpu] = x;
    }
  }
  m.finish();
  return f;
}

std::vector<std::string> known_frameworks(const std::string& anchor) {
  std::set<std::string> names;
  for (const std::string& dir : config_search_dirs(anchor)) {
    std::error_code ec;
    const fs::path d = fs::path(dir) / "frameworks";
    if (!fs::is_directory(d, ec)) continue;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".yaml") names.insert(e.path().stem().string());
  }
  return {names.begin(), names.end()};
}

FrameworkSpec load_framework(const std::string& name, const std::string& anchor,
                             const std::string& referrer, const std::string& key) {
  // The chain name -> base -> ..., loaded root first.
  std::vector<std::pair<std::string, YAML::Node>> chain;
  std::string next = name, from = referrer, from_key = key;
  while (!next.empty()) {
    const std::string path = next.find('/') != std::string::npos || next.ends_with(".yaml")
                                 ? ""
                                 : find_named_config("frameworks", next, anchor);
    if (path.empty())
      throw InputError(from, from_key, next,
                       fmt::format("a stack in configs/frameworks/ (known: {})",
                                   fmt::join(known_frameworks(anchor), ", ")));
    for (const auto& [p, n] : chain)
      if (p == path) throw InputError(path, "base", next, "a base chain without a cycle");
    YAML::Node node = load_yaml_file(path);
    chain.emplace_back(path, node);
    from = path;
    from_key = "base";
    const YAML::Node b = node.IsMap() ? node["base"] : YAML::Node();
    next = b && b.IsScalar() ? b.Scalar() : "";
  }
  FrameworkSpec f;
  std::string paths;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    f = parse_framework(it->second, it->first, f);
    paths = paths.empty() ? it->first : it->first + " <- " + paths;
  }
  f.path = paths;
  return f;
}

}  // namespace rapid
