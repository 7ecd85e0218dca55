#include "rapid/spec/yaml_overrides.hpp"

#include <fmt/format.h>

#include <optional>

#include "rapid/common/error.hpp"
#include "rapid/spec/units.hpp"

namespace rapid {

namespace {

bool is_scale(const YAML::Node& v) {
  return v.IsMap() && v.size() == 1 && v["scale"];
}

// "2039GB/s" x 4 -> "8156GB/s": the leading number scaled, the unit kept.
std::string scaled_scalar(const std::string& text, double factor, const std::string& file,
                          const std::string& key) {
  const std::optional<NumberAndUnit> q = split_quantity(text);
  if (!q) throw InputError(file, key, text, "a base value that is a number (with a unit) to scale");
  return fmt::format("{}{}", q->value * factor, q->unit);
}

double scale_factor(const YAML::Node& v, const std::string& file, const std::string& key) {
  const YAML::Node f = v["scale"];
  const std::optional<NumberAndUnit> q = f.IsScalar() ? split_quantity(f.Scalar()) : std::nullopt;
  const double factor = q && q->unit.empty() ? q->value : 0.0;
  if (!(factor > 0 && factor <= 1e6))
    throw InputError(file, key + ".scale", f.IsScalar() ? f.Scalar() : "<not a number>",
                     "a factor in (0, 1e6]", f.Mark().line, f.Mark().column);
  return factor;
}

void merge_into(YAML::Node out, const YAML::Node& overrides, const std::string& file,
                const std::string& prefix) {
  if (!overrides.IsMap())
    throw InputError(file, prefix, "<not a mapping>", "a mapping of keys to new values",
                     overrides.Mark().line, overrides.Mark().column);
  for (const auto& kv : overrides) {
    const std::string key = kv.first.as<std::string>();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const YAML::Node v = kv.second;
    YAML::Node current = out[key];
    if (prefix == "overrides" && key == "name")
      throw InputError(file, path, flow_text(v),
                       "no name among the overrides: a variant's name is its own `name:` key",
                       kv.first.Mark().line, kv.first.Mark().column);
    if (is_scale(v)) {
      if (!current.IsScalar())
        throw InputError(file, path, "{scale: ...}",
                         fmt::format("a key the base sets to a number, to scale; the base has "
                                     "no '{}' (a typo, or a key to give a value rather than a "
                                     "scale)",
                                     key),
                         v.Mark().line, v.Mark().column);
      out[key] = scaled_scalar(current.Scalar(), scale_factor(v, file, path), file, path);
    } else if (v.IsMap() && current.IsMap()) {
      merge_into(current, v, file, path);
    } else if (v.IsMap() && current.IsScalar()) {
      throw InputError(file, path, flow_text(v),
                       fmt::format("a value for '{}' or {{scale: F}} (the base gives it one "
                                   "value, {})",
                                   key, current.Scalar()),
                       v.Mark().line, v.Mark().column);
    } else {
      // Shared, not cloned: parse errors keep the override's line and column. (A later
      // variant on this one merges into its own clone of the whole mapping.)
      out[key] = v;
    }
  }
}

}  // namespace

YAML::Node apply_overrides(const YAML::Node& base, const YAML::Node& overrides,
                           const std::string& file, const std::string& key_prefix) {
  YAML::Node out = YAML::Clone(base);
  if (overrides && !overrides.IsNull()) merge_into(out, overrides, file, key_prefix);
  return out;
}

YAML::Node changed_keys(const YAML::Node& base, const YAML::Node& changed) {
  YAML::Node out(YAML::NodeType::Map);
  if (!changed.IsMap()) return out;
  for (const auto& kv : changed) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node was = base.IsMap() ? base[key] : YAML::Node();
    const YAML::Node now = kv.second;
    if (now.IsMap() && was && was.IsMap()) {
      YAML::Node inner = changed_keys(was, now);
      if (inner.size() > 0) out[key] = inner;
    } else if (!was || (was.IsScalar() && now.IsScalar() ? was.Scalar() != now.Scalar()
                                                         : YAML::Dump(was) != YAML::Dump(now))) {
      out[key] = YAML::Clone(now);
    }
  }
  return out;
}

std::string flow_text(const YAML::Node& node) {
  if (!node || node.IsNull() || (node.IsMap() && node.size() == 0)) return "";
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << node;
  return e.c_str();
}

void set_dotted(YAML::Node map, const std::string& dotted_key, const YAML::Node& value) {
  const size_t dot = dotted_key.find('.');
  if (dot == std::string::npos) {
    map[dotted_key] = value;
    return;
  }
  const std::string head = dotted_key.substr(0, dot);
  if (!map[head].IsMap()) map[head] = YAML::Node(YAML::NodeType::Map);
  set_dotted(map[head], dotted_key.substr(dot + 1), value);
}

}  // namespace rapid
