#include "rapid/spec/framework_spec.hpp"
#include "config_resolve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "rapid/common/error.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/spec/yaml_reader.hpp"
#include "stack_keys.hpp"

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

// `fitted_overlaps:` names, in OverlapBits order.
const std::vector<std::string> kOverlapNames = {"tp_comm", "grad_reduce", "param_gather"};

}  // namespace

FrameworkSpec parse_framework(const YAML::Node& node, const std::string& file,
                              const FrameworkSpec& base) {
  YamlMap m(node, file);
  FrameworkSpec f = base;
  f.name = m.string("name");
  for (const char* k : {"base", "description", "source", "sources"}) m.has(k);
  f.attention = detail::read_attention(m, f.attention);
  if (m.has("fusions")) {
    const YamlMap u = m.map("fusions");
    Fusions& x = f.fusions;
    x.bias_dropout_add = u.boolean_or("bias_dropout_add", x.bias_dropout_add);
    x.bias_activation = u.boolean_or("bias_activation", x.bias_activation);
    x.rope = u.boolean_or("rope", x.rope);
    x.masked_softmax = u.boolean_or("masked_softmax", x.masked_softmax);
    x.cross_entropy = u.boolean_or("cross_entropy", x.cross_entropy);
    x.norm_cast = u.boolean_or("norm_cast", x.norm_cast);
    x.norm = u.boolean_or("norm", x.norm);
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
    r.recipe = static_cast<Fp8Scaling>(
        u.choice_or("recipe", {std::begin(kFp8ScalingNames), std::end(kFp8ScalingNames)},
                    static_cast<int>(r.recipe)));
    u.finish();
  }
  detail::read_stack_keys(m, f);
  f.tp_overlap_sms_gather = m.integer_or("tp_overlap_sms_gather", f.tp_overlap_sms_gather, 0, 1024);
  f.tp_overlap_sms_scatter =
      m.integer_or("tp_overlap_sms_scatter", f.tp_overlap_sms_scatter, 0, 1024);
  f.loss_bytes_per_logit = m.number_or("loss_bytes_per_logit", f.loss_bytes_per_logit, 1.0, 64.0);
  f.loss_bytes_held_per_logit =
      m.number_or("loss_bytes_held_per_logit", f.loss_bytes_held_per_logit, 0.0, 64.0);
  if (m.has("supports")) {
    const YamlMap u = m.map("supports");
    f.supports_recompute_num_layers =
        u.boolean_or("recompute_num_layers", f.supports_recompute_num_layers);
    f.supports_cpu_offload = u.boolean_or("cpu_offload", f.supports_cpu_offload);
    f.cpu_offload_with_pp = u.boolean_or("cpu_offload_with_pp", f.cpu_offload_with_pp);
    f.interleaved_pp2 = u.boolean_or("interleaved_pp2", f.interleaved_pp2);
    f.supports_op_recompute = u.boolean_or("op_recompute", f.supports_op_recompute);
    f.tp_comm_overlap_without_compile =
        u.boolean_or("tp_comm_overlap_without_compile", f.tp_comm_overlap_without_compile);
    u.finish();
  }
  if (m.has("end_to_end")) {
    const YamlMap e = m.map("end_to_end");
    for (const std::string& gpu : e.keys()) {
      const YamlMap g = e.map(gpu);
      EndToEndFactors x = f.factors_for(gpu);
      x.step = g.number_or("step", x.step, 0.05, 1.0);
      x.elementwise = g.number_or("elementwise", x.elementwise, 0.05, 1.0);
      // The overlaps of the runs the factors were fitted on; [] for none.
      if (g.has("fitted_overlaps")) {
        const YAML::Node n = g.node("fitted_overlaps");
        x.fitted_overlaps = 0;
        if (!n.IsSequence() || n.size() > 0)
          for (int bit : g.choice_list_or("fitted_overlaps", kOverlapNames, {}))
            x.fitted_overlaps |= 1u << bit;
      }
      g.finish();
      f.end_to_end[gpu] = x;
    }
  }
  m.finish();
  return f;
}

std::vector<std::string> known_frameworks(const std::string& anchor) {
  return detail::known_configs("frameworks", anchor);
}

FrameworkSpec load_framework(const std::string& name, const std::string& anchor,
                             const std::string& referrer, const std::string& key) {
  const std::vector<detail::ChainLink> chain =
      detail::load_base_chain("frameworks", "a stack", name, anchor, referrer, key);
  FrameworkSpec f;
  for (const detail::ChainLink& l : chain) f = parse_framework(l.node, l.path, f);
  f.path = detail::chain_paths(chain);
  return f;
}

}  // namespace rapid
