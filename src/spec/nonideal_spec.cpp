// `nonideal:` and `scenarios:` of a job (docs/nonideal.md sec 7).
#include "rapid/spec/nonideal_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "rapid/common/error.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

// Cooling presets (docs/nonideal.md sec 2): the hardware file's air heatsink or liquid
// cold plate, and the temperature the GPU's sink sees: air at the ASHRAE recommended inlet
// limit (27 C, "Thermal Guidelines for Data Processing Environments", 5th ed. 2021),
// liquid at the facility-water limit of ASHRAE liquid-cooling class W32 (32 C supply).
CoolingSpec preset(int which) {
  CoolingSpec c;
  c.name = which == 0 ? "air" : "liquid";
  c.liquid = which == 1;
  c.ambient_C = which == 0 ? 27.0 : 32.0;
  return c;
}

CoolingSpec parse_cooling(const YamlMap& m, const std::string& key, CoolingSpec c) {
  const YAML::Node n = m.node(key);
  if (n.IsScalar()) return preset(m.choice(key, {"air", "liquid"}));
  const YamlMap k = m.map(key);
  if (k.has("preset")) c = preset(k.choice("preset", {"air", "liquid"}));
  c.name = k.string_or("name", k.has("preset") ? c.name : "custom");
  c.ambient_C = k.number_or("ambient_C", c.ambient_C, -50.0, 150.0);
  c.sink_J_per_C = k.number_or("sink_J_per_C", c.sink_J_per_C, 1e-3, 1e7);
  c.sink_C_per_W = k.number_or("sink_C_per_W", c.sink_C_per_W, 1e-5, 100.0);
  c.alpha_C_per_J = k.number_or("alpha_C_per_J", c.alpha_C_per_J, 1e-7, 10.0);
  c.beta_per_s = k.number_or("beta_per_s", c.beta_per_s, 1e-4, 100.0);
  c.conductance_factor = k.number_or("conductance_factor", c.conductance_factor, 0.01, 100.0);
  // The lumped form's rates set the same sink: one way or the other.
  if (k.has("alpha_C_per_J") && k.has("sink_J_per_C"))
    k.fail("alpha_C_per_J", "<set with sink_J_per_C>",
           "one of alpha_C_per_J (= 1 / sink_J_per_C) and sink_J_per_C");
  if (k.has("beta_per_s") && k.has("sink_C_per_W"))
    k.fail("beta_per_s", "<set with sink_C_per_W>",
           "one of beta_per_s (= 1 / (sink_C_per_W x sink_J_per_C)) and sink_C_per_W");
  k.finish();
  return c;
}

std::vector<StragglerSpec> parse_stragglers(const YamlMap& m, const CoolingSpec& base) {
  std::vector<StragglerSpec> out;
  const YAML::Node list = m.node("stragglers");
  if (!list.IsSequence()) m.fail("stragglers", "<not a list>", "a list of {gpu|node|rack: N, ...}");
  for (size_t i = 0; i < list.size(); ++i) {
    const YamlMap s(list[i], m.file(), m.key_path(fmt::format("stragglers[{}]", i)));
    StragglerSpec x;
    std::vector<std::string> given;
    for (auto [key, scope] : {std::pair{"gpu", StragglerSpec::Scope::Gpu},
                              std::pair{"node", StragglerSpec::Scope::Node},
                              std::pair{"rack", StragglerSpec::Scope::Rack}})
      if (s.has(key)) {
        given.push_back(key);
        x.scope = scope;
        x.index = s.integer(key, 0, YamlMap::kMaxInteger);
      }
    if (given.size() != 1)
      s.fail(given.empty() ? "gpu" : given[1],
             given.empty() ? "<missing>" : fmt::format("{} and {}", given[0], given[1]),
             "exactly one of gpu, node or rack (an index)");
    x.clock_factor = s.number_or("clock_factor", 1.0, 0.01, 1.0);
    x.hbm_factor = s.number_or("hbm_factor", 1.0, 0.01, 1.0);
    x.nic_health = s.number_or("nic_health", 1.0, 0.001, 1.0);
    if (s.has("cooling")) {
      x.own_cooling = true;
      x.cooling = parse_cooling(s, "cooling", base);
    }
    s.finish();
    if (x.clock_factor >= 1 && x.hbm_factor >= 1 && x.nic_health >= 1 && !x.own_cooling)
      s.fail("clock_factor", "1",
             "at least one of clock_factor, hbm_factor, nic_health below 1 "
             "or a cooling of its own (else it is not a straggler)");
    for (const StragglerSpec& y : out)
      if (y.scope == x.scope && y.index == x.index)
        s.fail(given[0], std::to_string(x.index),
               "a GPU, node or rack no other straggler of "
               "this scenario names (merge their factors)");
    out.push_back(x);
  }
  return out;
}

/// Reads one scenario's mapping.
NonIdealSpec parse_one(const YAML::Node& node, const std::string& file, const std::string& path) {
  const YamlMap m(node, file, path);
  NonIdealSpec s;
  s.name = m.string_or("name", s.name);
  if (s.name.empty() || s.name.find_first_not_of(" \t") == std::string::npos)
    m.fail("name", s.name, "a non-empty scenario name");
  s.power = m.boolean_or("power", false);
  s.thermal = m.boolean_or("thermal", false);
  s.power = s.power || s.thermal;
  if (m.has("cooling")) s.cooling = parse_cooling(m, "cooling", s.cooling);
  s.cooling.ambient_C = m.number_or("ambient_C", s.cooling.ambient_C, -50.0, 150.0);
  s.mitigation = static_cast<Mitigation>(
      m.choice_or("mitigation", {std::begin(kMitigationNames), std::end(kMitigationNames)}, 0));
  if (s.mitigation != Mitigation::None && !s.thermal)
    m.fail("mitigation", kMitigationNames[static_cast<int>(s.mitigation)],
           "thermal: true (mitigations act on thermal throttling)");
  if (!s.thermal)  // cooling acts through the thermal model only
    for (const char* key : {"cooling", "ambient_C"})
      if (m.has(key)) m.fail(key, "<set>", "thermal: true (cooling acts on the thermal model)");
  if (m.has("stragglers")) s.stragglers = parse_stragglers(m, s.cooling);
  for (size_t i = 0; i < s.stragglers.size(); ++i)
    if (s.stragglers[i].own_cooling && !s.thermal)
      m.fail(fmt::format("stragglers[{}].cooling", i), "<set>",
             "thermal: true (cooling acts on the thermal model)");
  if (!s.stragglers.empty()) s.power = true;  // their derates need the ops' roofline split
  if (m.has("link_faults"))
    s.link_faults = parse_link_faults(m.node("link_faults"), file, m.key_path("link_faults"));
  if (m.has("failures"))
    s.failures = parse_failures(m.node("failures"), file, m.key_path("failures"));
  m.finish();
  return s;
}

// The cooling's sink and its overrides ("air", "liquid, conductance x0.33", ...).
std::string describe_cooling(const CoolingSpec& c) {
  std::string d = c.liquid ? "liquid" : "air";
  if (c.name != d) d = fmt::format("{} ({})", c.name, d);
  if (c.sink_J_per_C > 0) d += fmt::format(", sink {} J/C", c.sink_J_per_C);
  if (c.alpha_C_per_J > 0) d += fmt::format(", alpha {} C/J", c.alpha_C_per_J);
  if (c.sink_C_per_W > 0) d += fmt::format(", sink {} C/W", c.sink_C_per_W);
  if (c.beta_per_s > 0) d += fmt::format(", beta {}/s", c.beta_per_s);
  if (c.conductance_factor != 1) d += fmt::format(", conductance x{}", c.conductance_factor);
  return d;
}

}  // namespace

std::string describe_scenario(const NonIdealSpec& s) {
  std::vector<std::string> parts;
  if (s.thermal)
    parts.push_back(fmt::format("thermal ({}, {} C), mitigation {}", describe_cooling(s.cooling),
                                s.cooling.ambient_C,
                                kMitigationNames[static_cast<int>(s.mitigation)]));
  else if (s.power)
    parts.push_back("power");
  for (const StragglerSpec& x : s.stragglers) {
    static const char* scopes[] = {"gpu", "node", "rack"};
    std::string d = fmt::format("straggler {} {}", scopes[static_cast<int>(x.scope)], x.index);
    if (x.clock_factor < 1) d += fmt::format(" clock x{}", x.clock_factor);
    if (x.hbm_factor < 1) d += fmt::format(" HBM x{}", x.hbm_factor);
    if (x.nic_health < 1) d += fmt::format(" NIC x{}", x.nic_health);
    if (x.own_cooling)
      d += fmt::format(" cooling {}, {} C", describe_cooling(x.cooling), x.cooling.ambient_C);
    parts.push_back(d);
  }
  for (size_t i = 0; i < s.link_faults.size() && i < 3; ++i)
    parts.push_back(describe_link_fault(s.link_faults[i]));
  if (s.link_faults.size() > 3)
    parts.push_back(fmt::format("{} more link faults", s.link_faults.size() - 3));
  if (s.failures.enabled) parts.push_back("failures");
  return parts.empty() ? "ideal" : fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<NonIdealSpec> parse_scenarios(const YAML::Node& nonideal, const YAML::Node& scenarios,
                                          const std::string& file) {
  // An absent key comes as a null node.
  const bool has_base = nonideal.IsDefined() && !nonideal.IsNull();
  const YAML::Node base = has_base ? nonideal : YAML::Node(YAML::NodeType::Map);
  NonIdealSpec first = parse_one(base, file, "nonideal");
  if (!scenarios.IsDefined() || scenarios.IsNull()) {
    if (!has_base) return {first};
    if (!base["name"]) first.name = "nonideal";
    return {first};
  }
  if (!scenarios.IsSequence() || scenarios.size() == 0)
    throw InputError(file, "scenarios",
                     scenarios.IsScalar()     ? scenarios.Scalar()
                     : scenarios.IsSequence() ? "<empty list>"
                                              : "<not a list>",
                     "a non-empty list of {name: ..., keys of nonideal: to override}");
  std::vector<NonIdealSpec> out;
  std::set<std::string> names;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const std::string path = fmt::format("scenarios[{}]", i);
    if (!scenarios[i].IsMap())
      throw InputError(file, path, "<not a mapping>", "a mapping {name: ..., overrides}");
    YAML::Node merged = YAML::Clone(base);
    for (const auto& kv : scenarios[i]) merged[kv.first.Scalar()] = kv.second;
    if (!scenarios[i]["name"]) merged["name"] = fmt::format("scenario-{}", i);
    NonIdealSpec s = parse_one(merged, file, path);
    if (!names.insert(s.name).second)
      throw InputError(file, path + ".name", s.name, "a name no other scenario has");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace rapid
