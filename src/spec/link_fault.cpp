#include "rapid/spec/link_fault.hpp"

#include <fmt/format.h>

#include <cmath>

#include "rapid/common/error.hpp"
#include "rapid/spec/units.hpp"
#include "rapid/spec/yaml_reader.hpp"

namespace rapid {

namespace {

// A plain number under `key` in the interval (lo, hi] / [lo, hi) as the flags say; the
// interval is spelled out in the error.
double number_in(const YamlMap& m, const std::string& key, double fallback, double lo, bool lo_open,
                 double hi, bool hi_open) {
  if (!m.has(key)) return fallback;
  const YAML::Node n = m.node(key);
  const std::string expected =
      fmt::format("a number in {}{}, {}{}", lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
  if (!n.IsScalar()) m.fail(key, n.IsSequence() ? "<list>" : "<mapping>", expected);
  const auto v = parse_quantity(n.Scalar(), Dimension::Ratio);
  if (!v || *v < lo || *v > hi || (lo_open && *v == lo) || (hi_open && *v == hi))
    m.fail(key, n.Scalar(), expected);
  return *v;
}

LinkFault parse_one(const YAML::Node& node, const std::string& file, const std::string& path) {
  YamlMap m(node, file, path);
  LinkFault f;
  f.selector = static_cast<LinkSelector>(m.choice(
      "link",
      std::vector<std::string>(std::begin(kLinkSelectorNames), std::end(kLinkSelectorNames))));
  switch (f.selector) {
    case LinkSelector::NicUp:
    case LinkSelector::NicDown:
    case LinkSelector::Nic:
    case LinkSelector::Nvlink:
      f.index = m.integer("gpu", 0);
      break;
    case LinkSelector::LeafSpine:
      f.index = m.integer("leaf", 0);
      f.index2 = m.integer("spine", 0);
      break;
    case LinkSelector::MostLoaded:
      break;
  }
  // Below a thousandth of its bandwidth (or above half its packets lost) a link is as good
  // as failed: say `failed: true` (the simulator's picosecond clock also bounds how slow a
  // flow may be).
  f.health = number_in(m, "health", 1.0, 1e-3, false, 1.0, false);
  f.failed = m.boolean_or("failed", false);
  f.loss_rate = number_in(m, "loss_rate", 0.0, 0.0, false, 0.5, false);
  f.transport = static_cast<Transport>(m.choice_or(
      "transport", std::vector<std::string>(std::begin(kTransportNames), std::end(kTransportNames)),
      0));
  f.start_s = m.quantity_or("start", Dimension::Time, 0.0);
  f.duration_s = m.quantity_or("duration", Dimension::Time, f.duration_s);
  m.finish();
  if (m.has("duration") && f.duration_s <= 0)
    m.fail("duration", m.node("duration").Scalar(), "a positive time (or no duration: to the end)");
  if (f.health == 1.0 && !f.failed && f.loss_rate == 0.0)
    throw InputError(file, path, "a fault without effect",
                     "at least one of health < 1, failed: true, loss_rate > 0",
                     node.Mark().is_null() ? -1 : node.Mark().line,
                     node.Mark().is_null() ? -1 : node.Mark().column);
  // NVLink corrects errors by link-level replay (CRC + retry in the NVLink data link
  // layer): no packet loss reaches the transport, only lower bandwidth.
  if (f.selector == LinkSelector::Nvlink && f.loss_rate > 0)
    m.fail("loss_rate", m.node("loss_rate").Scalar(),
           "no loss_rate on nvlink (NVLink replays at the link level: give health)");
  // Routes are computed once per step: a failed link is down for the whole step.
  if (f.failed && (m.has("start") || m.has("duration")))
    m.fail(m.has("start") ? "start" : "duration",
           m.node(m.has("start") ? "start" : "duration").Scalar(),
           "no start or duration on a failed link (routes avoid it for the whole step; "
           "a transient slowdown is health or loss_rate)");
  return f;
}

}  // namespace

std::vector<LinkFault> parse_link_faults(const YAML::Node& node, const std::string& file,
                                         const std::string& path) {
  std::vector<LinkFault> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence())
    throw InputError(file, path, node.IsScalar() ? node.Scalar() : "<mapping>",
                     "a list of faults, e.g. [{link: nic, gpu: 0, health: 0.5}]",
                     node.Mark().is_null() ? -1 : node.Mark().line,
                     node.Mark().is_null() ? -1 : node.Mark().column);
  if (node.size() > kMaxLinkFaults)
    throw InputError(file, path, fmt::format("{} faults", node.size()),
                     fmt::format("at most {} faults", kMaxLinkFaults));
  for (size_t i = 0; i < node.size(); ++i)
    out.push_back(parse_one(node[i], file, fmt::format("{}[{}]", path, i)));
  return out;
}

std::string describe_link_fault(const LinkFault& f) {
  std::string where;
  switch (f.selector) {
    case LinkSelector::NicUp:
      where = fmt::format("nic of gpu {} (up)", f.index);
      break;
    case LinkSelector::NicDown:
      where = fmt::format("nic of gpu {} (down)", f.index);
      break;
    case LinkSelector::Nic:
      where = fmt::format("nic of gpu {}", f.index);
      break;
    case LinkSelector::LeafSpine:
      where = fmt::format("leaf {} <-> spine {}", f.index, f.index2);
      break;
    case LinkSelector::Nvlink:
      where = fmt::format("nvlink of gpu {}", f.index);
      break;
    case LinkSelector::MostLoaded:
      where = "most loaded link";
      break;
  }
  std::string what;
  auto add = [&](const std::string& s) { what += (what.empty() ? "" : ", ") + s; };
  if (f.failed) add("failed");
  if (f.health < 1.0) add(fmt::format("health {:g}", f.health));
  if (f.loss_rate > 0.0)
    add(fmt::format("loss {:g} ({})", f.loss_rate, kTransportNames[static_cast<int>(f.transport)]));
  if (!f.permanent())
    what += std::isinf(f.duration_s)
                ? fmt::format(" from {:g} s", f.start_s)
                : fmt::format(" from {:g} s for {:g} s", f.start_s, f.duration_s);
  return where + ": " + what;
}

}  // namespace rapid
