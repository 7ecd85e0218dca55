#include "rapid/spec/hardware_variant.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>

#include "config_resolve.hpp"
#include "rapid/common/error.hpp"
#include "rapid/spec/units.hpp"
#include "rapid/spec/yaml_overrides.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

constexpr int kMaxChain = 16;          // variants on variants
constexpr size_t kMaxGridSize = 4096;  // variants one grid expands into
constexpr size_t kMaxAxisValues = 1000;

// Network keys a variant may change: rates, latencies and efficiencies. The structure
// (topology, GPUs per node, NICs, nodes per leaf) decides which layouts are legal and is
// the job's, the same for every variant.
constexpr const char* kNetworkKeys[] = {
    "leaf_bandwidth",      "spine_bandwidth",      "nvlink_bandwidth",    "oversubscription",
    "link_latency",        "nvlink_latency",       "collective_latency",  "network_efficiency",
    "nvlink_step_latency", "network_step_latency", "torus_link_bandwidth"};

std::string name_of(const YAML::Node& hw, const std::string& path) {
  const YAML::Node n = hw.IsMap() ? hw["name"] : YAML::Node();
  if (n && n.IsScalar()) return n.Scalar();
  return std::filesystem::path(path).stem().string();
}

ResolvedHardware plain(const YAML::Node& node, const std::string& path, const std::string& text) {
  ResolvedHardware r;
  r.node = node;  // never written: a variant on it merges into a clone
  r.file = r.path = path;
  r.text = text;
  r.base = name_of(node, path);
  r.base_node = node;
  r.base_path = path;
  return r;
}

// `base` with `overrides` (a mapping; its `network:` goes to the job's network), named
// `name`; `file` gives the overrides.
ResolvedHardware derive(const ResolvedHardware& base, const YAML::Node& overrides,
                        const std::string& name, const std::string& file) {
  if (!overrides.IsMap())
    throw InputError(file, "overrides", flow_text(overrides), "a mapping of keys to new values",
                     overrides.Mark().line, overrides.Mark().column);
  // The hardware keys (shared, not cloned: parse errors keep their lines) and the network's.
  YAML::Node hw(YAML::NodeType::Map);
  for (const auto& kv : overrides)
    if (kv.first.as<std::string>() != "network") hw[kv.first.as<std::string>()] = kv.second;
  ResolvedHardware r = base;
  if (overrides["network"]) {
    const YAML::Node net = overrides["network"];
    if (!net.IsMap())
      throw InputError(file, "overrides.network", "<not a mapping>",
                       "a mapping of network keys to new values", net.Mark().line,
                       net.Mark().column);
    for (const auto& kv : net) {
      const std::string k = kv.first.as<std::string>();
      bool ok = false;
      for (const char* allowed : kNetworkKeys) ok = ok || k == allowed;
      if (!ok)
        throw InputError(file, "overrides.network." + k, flow_text(kv.second),
                         fmt::format("a rate, latency or efficiency of the network ({}): the "
                                     "topology is the job's",
                                     fmt::join(kNetworkKeys, ", ")),
                         kv.first.Mark().line, kv.first.Mark().column);
    }
    r.network_overrides.push_back({file, net});  // shared: its errors keep their lines
  }
  // yaml-cpp's Node::operator= writes through to the node shared with `base`: reset().
  r.node.reset(apply_overrides(base.node, hw, file, "overrides"));
  r.node["name"] = name;
  r.file = file;
  r.is_base = false;
  return r;
}

// `node` from `path` (provenance); `file` names it in messages and anchors relative paths
// (the job's file for an inline entry).
ResolvedHardware resolve_node(const YAML::Node& node, const std::string& file,
                              const std::string& path, const std::string& text,
                              const std::string& anchor, int depth) {
  if (node.IsMap() && !node["base"]) {
    // Not a variant; a file with none of a GPU's keys is not hardware either (a network or
    // model file named by mistake, a variant whose base: is misspelt).
    bool gpu = false;
    for (const char* k : {"num_sms", "sm_clock", "tensor_peak", "hbm_bandwidth", "hbm_capacity"})
      gpu = gpu || static_cast<bool>(node[k]);
    if (!gpu)
      throw InputError(file, "base", "<missing>",
                       "a hardware file (num_sms, sm_clock, tensor_peak, hbm_bandwidth, ...) "
                       "or a variant (base: and overrides:); this mapping has neither",
                       node.Mark().line, node.Mark().column);
  }
  if (!node.IsMap() || !node["base"]) return plain(node, path, text);
  if (depth >= kMaxChain)
    throw InputError(file, "base", name_of(node, path),
                     fmt::format("a chain of at most {} variants, each on another one (a "
                                 "variant cannot be its own base)",
                                 kMaxChain));
  const YamlMap v(node, file);
  const std::string name = v.string("name");
  for (const char* k : {"description", "source", "sources", "case"}) v.has(k);
  auto [bnode, bsrc] =
      detail::resolve_config(v, v.node("base"), "base", "hardware", "hardware/variants", anchor);
  const bool inline_base = bsrc.path.starts_with("<inline");
  const ResolvedHardware b =
      resolve_node(bnode, inline_base ? file : bsrc.path, bsrc.path, bsrc.yaml, anchor, depth + 1);
  const YAML::Node overrides =
      v.has("overrides") ? v.node("overrides") : YAML::Node(YAML::NodeType::Map);
  v.finish();
  ResolvedHardware r = derive(b, overrides, name, file);
  r.path = path;
  r.text = fmt::format("{}\n# base: {}\n{}", text, b.path, b.text);
  return r;
}

// Whether `node` sets the dotted key ("tensor_peak.bf16") to a scalar.
bool sets_value(const YAML::Node& node, const std::string& dotted) {
  const size_t dot = dotted.find('.');
  const YAML::Node child = node.IsMap() ? node[dotted.substr(0, dot)] : YAML::Node();
  if (!child.IsDefined()) return false;
  return dot == std::string::npos ? child.IsScalar() : sets_value(child, dotted.substr(dot + 1));
}

// "2TB/s" -> (2, "TB/s"); throws naming the key when the text is not a number first.
std::pair<double, std::string> number_and_unit(const YamlMap& m, const std::string& key) {
  const YAML::Node n = m.node(key);
  const std::string text = n.IsScalar() ? n.Scalar() : "<not a scalar>";
  const std::optional<NumberAndUnit> q = split_quantity(text);
  if (!q) m.fail(key, text, "a number with the field's unit (2TB/s, 8MiB, 1410MHz)");
  return {q->value, std::string(q->unit)};
}

// The values of one grid axis: a list, one value, or {from, to, step | factor}.
std::vector<std::string> axis_values(const YamlMap& axes, const std::string& key) {
  const YAML::Node n = axes.node(key);
  std::vector<std::string> out;
  if (n.IsScalar()) return {n.Scalar()};
  if (n.IsSequence()) {
    for (const auto& v : n) {
      if (!v.IsScalar()) axes.fail(key, flow_text(v), "a list of values of the field");
      out.push_back(v.Scalar());
    }
    if (out.empty()) axes.fail(key, "[]", "at least one value");
    return out;
  }
  const YamlMap r(n, axes.file(), axes.key_path(key));
  const auto [from, unit] = number_and_unit(r, "from");
  const auto [to, to_unit] = number_and_unit(r, "to");
  if (to_unit != unit)
    r.fail("to", r.node("to").Scalar(), fmt::format("the unit of from ('{}')", unit));
  const bool geometric = r.has("factor");
  const double step = geometric ? r.number_or("factor", 2.0, 1.0001, 1e6) : [&] {
    const auto [s, s_unit] = number_and_unit(r, "step");
    if (s_unit != unit)
      r.fail("step", r.node("step").Scalar(), fmt::format("the unit of from ('{}')", unit));
    if (!(s > 0)) r.fail("step", r.node("step").Scalar(), "a step > 0");
    return s;
  }();
  r.finish();
  if (!(to >= from)) r.fail("to", r.node("to").Scalar(), "a value >= from");
  for (size_t i = 0;; ++i) {
    const double v = geometric ? from * std::pow(step, static_cast<double>(i))
                               : from + static_cast<double>(i) * step;
    if (v > to * (1 + 1e-9)) break;
    if (out.size() == kMaxAxisValues)
      axes.fail(key, fmt::format("more than {} values", kMaxAxisValues), "a shorter range");
    out.push_back(fmt::format("{:.12g}{}", v, unit));
  }
  return out;
}

}  // namespace

ResolvedHardware resolve_hardware(const YamlMap& job, const YAML::Node& entry,
                                  const std::string& key) {
  auto [node, src] = detail::resolve_config(job, entry, key, "hardware", "hardware/variants");
  return resolve_node(node, entry.IsMap() ? job.file() : src.path, src.path, src.yaml, job.file(),
                      0);
}

std::vector<ResolvedHardware> expand_hardware_grid(const YamlMap& job, const YAML::Node& grid) {
  std::vector<YAML::Node> grids;
  if (grid.IsSequence())
    for (const auto& g : grid) grids.push_back(g);
  else
    grids.push_back(grid);
  std::vector<ResolvedHardware> out;
  for (size_t gi = 0; gi < grids.size(); ++gi) {
    const std::string key =
        grid.IsSequence() ? fmt::format("hardware_grid[{}]", gi) : "hardware_grid";
    const YamlMap m(grids[gi], job.file(), key);
    const ResolvedHardware base = resolve_hardware(m, m.node("base"), "base");
    const std::string prefix = m.string_or("name", name_of(base.node, base.path));
    const YamlMap axes = m.map("axes");
    std::vector<std::string> keys = axes.keys();
    if (keys.empty()) m.fail("axes", "{}", "at least one field with its values");
    for (const std::string& k : keys)  // a grid varies fields its base sets (typos caught)
      if (!k.starts_with("network.") && !sets_value(base.node, k))
        axes.fail(k, flow_text(axes.node(k)),
                  fmt::format("a field {} sets to a value (a typo? dotted keys reach into "
                              "mappings: tensor_peak.bf16; network.KEY for the network)",
                              name_of(base.node, base.path)));
    std::vector<std::vector<std::string>> values;
    double count = 1;
    for (const std::string& k : keys) {
      values.push_back(axis_values(axes, k));
      count *= static_cast<double>(values.back().size());
    }
    axes.finish();
    m.finish();
    if (count + static_cast<double>(out.size()) > kMaxGridSize)
      m.fail("axes", fmt::format("{:.0f} variants", count),
             fmt::format("at most {} variants in all", kMaxGridSize));
    std::vector<size_t> at(keys.size(), 0);
    for (size_t v = 0; v < static_cast<size_t>(count); ++v) {
      YAML::Node overrides(YAML::NodeType::Map);
      std::string name = prefix + "@";
      for (size_t a = 0; a < keys.size(); ++a) {
        set_dotted(overrides, keys[a], YAML::Node(values[a][at[a]]));
        name += fmt::format("{}{}={}", a ? "," : "", keys[a], values[a][at[a]]);
      }
      ResolvedHardware r = derive(base, overrides, name, job.file());
      r.path = fmt::format("<{} of {}>", key, job.file());
      r.text =
          fmt::format("# {}: {}\n# base: {}\n{}", key, flow_text(overrides), base.path, base.text);
      out.push_back(std::move(r));
      for (size_t a = keys.size(); a-- > 0;) {  // the last axis varies fastest
        if (++at[a] < values[a].size()) break;
        at[a] = 0;
      }
    }
  }
  return out;
}

HardwareSpec parse_resolved(const ResolvedHardware& r, const HardwareSpec* root_spec) {
  HardwareSpec h = parse_hardware(r.node, r.file);
  h.base_name = r.base;
  if (r.is_base) return h;
  const HardwareSpec root = root_spec ? *root_spec : parse_hardware(r.base_node, r.base_path);
  // Peaks and clocks without the fixed thermal derate (applied to both at parse time).
  const double clock = h.sm_clock_Hz / h.clock_thermal_keep;
  const double root_clock = root.sm_clock_Hz / root.clock_thermal_keep;
  const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
  bool peaks_as_root = same(h.vector_peak_FLOPs / h.clock_thermal_keep,
                            root.vector_peak_FLOPs / root.clock_thermal_keep);
  for (int i = 0; i < kNumDTypes; ++i)
    peaks_as_root = peaks_as_root &&
                    same(h.tensor_peak_FLOPs[static_cast<size_t>(i)] / h.clock_thermal_keep,
                         root.tensor_peak_FLOPs[static_cast<size_t>(i)] / root.clock_thermal_keep);
  const double f =
      static_cast<double>(h.num_sms) * clock / (static_cast<double>(root.num_sms) * root_clock);
  if (peaks_as_root && !same(f, 1.0)) {
    for (double& peak : h.tensor_peak_FLOPs) peak *= f;
    h.vector_peak_FLOPs *= f;
  }
  if (same(h.l2_bandwidth_Bps, root.l2_bandwidth_Bps) && !same(clock, root_clock))
    h.l2_bandwidth_Bps *= clock / root_clock;
  return h;
}

HardwareSpec load_hardware_file(const std::string& path) {
  const std::string text = read_text_file(path);
  return parse_resolved(resolve_node(load_yaml_text(text, path), path, path, text, path, 0));
}

HardwareVariant make_variant(const ResolvedHardware& r, const YAML::Node& net_node,
                             const std::string& net_file, const NetworkSpec& job_network) {
  HardwareVariant v;
  v.base = r.base;
  v.is_base = r.is_base;
  v.network = job_network;
  YAML::Node diff = changed_keys(r.base_node, r.node);
  diff.remove("name");
  if (r.network_overrides.empty()) {
    v.overrides = flow_text(diff);
    return v;
  }
  YAML::Node net = YAML::Clone(net_node);
  std::string file = net_file;
  for (const ResolvedHardware::NetworkOverride& o : r.network_overrides) {
    net.reset(apply_overrides(net, o.node, o.file, "overrides.network"));
    file = o.file;
  }
  v.network = parse_network(net, file);
  const YAML::Node net_diff = changed_keys(net_node, net);
  if (net_diff.size() > 0) diff["network"] = net_diff;
  v.overrides = flow_text(diff);
  return v;
}

}  // namespace rapid
