#include "rapid/spec/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

namespace rapid {
namespace {

struct Prefix {
  std::string_view symbol;
  double factor;
};

// Longest symbols first so "Ki" wins over "K"-less matches.
constexpr std::array<Prefix, 14> kPrefixes{{{"Ki", 1024.0},
                                            {"Mi", 1048576.0},
                                            {"Gi", 1073741824.0},
                                            {"Ti", 1099511627776.0},
                                            {"Pi", 1125899906842624.0},
                                            {"k", 1e3},
                                            {"K", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"m", 1e-3},
                                            {"u", 1e-6},
                                            {"n", 1e-9}}};

struct BaseUnit {
  std::string_view symbol;
  double factor;  // to the SI base of the dimension
};

// Base unit symbols per dimension (after the prefix is stripped).
std::pair<const BaseUnit*, size_t> base_units(Dimension d) {
  static constexpr BaseUnit bw[] = {
      {"B/s", 1.0}, {"Bps", 1.0}, {"bps", 0.125}, {"b/s", 0.125}, {"bit/s", 0.125}};
  static constexpr BaseUnit size[] = {{"B", 1.0}, {"b", 0.125}, {"bit", 0.125}};
  static constexpr BaseUnit time[] = {{"s", 1.0}};
  static constexpr BaseUnit freq[] = {{"Hz", 1.0}};
  static constexpr BaseUnit flops[] = {{"FLOPS", 1.0}, {"FLOP/s", 1.0}, {"flops", 1.0}};
  static constexpr BaseUnit ratio[] = {{"%", 0.01}};
  static constexpr BaseUnit power[] = {{"W", 1.0}};
  switch (d) {
    case Dimension::Bandwidth:
      return {bw, std::size(bw)};
    case Dimension::Size:
      return {size, std::size(size)};
    case Dimension::Time:
      return {time, std::size(time)};
    case Dimension::Frequency:
      return {freq, std::size(freq)};
    case Dimension::FlopRate:
      return {flops, std::size(flops)};
    case Dimension::Ratio:
      return {ratio, std::size(ratio)};
    case Dimension::Power:
      return {power, std::size(power)};
  }
  return {nullptr, 0};
}

std::optional<double> unit_factor(std::string_view unit, Dimension d) {
  auto [units, n] = base_units(d);
  for (size_t i = 0; i < n; ++i)
    if (unit == units[i].symbol) return units[i].factor;
  // Prefixed units; "m", "u", "n" only make sense for time ("ms", "us", "ns").
  for (const Prefix& p : kPrefixes) {
    if (unit.size() <= p.symbol.size() || unit.substr(0, p.symbol.size()) != p.symbol) continue;
    if (p.factor < 1.0 && d != Dimension::Time) continue;
    std::string_view rest = unit.substr(p.symbol.size());
    for (size_t i = 0; i < n; ++i)
      if (rest == units[i].symbol) return p.factor * units[i].factor;
  }
  if (d == Dimension::Time) {
    if (unit == "min") return 60.0;
    if (unit == "h") return 3600.0;
  }
  return std::nullopt;
}

}  // namespace

const char* dimension_units(Dimension d) {
  switch (d) {
    case Dimension::Bandwidth:
      return "a bandwidth such as 400Gbps, 50GB/s or 2TB/s";
    case Dimension::Size:
      return "a size such as 80GiB, 40MB or 1024 (bytes)";
    case Dimension::Time:
      return "a time such as 0.5us, 5ms or 30s";
    case Dimension::Frequency:
      return "a frequency such as 1.41GHz or 1980MHz";
    case Dimension::FlopRate:
      return "a FLOP rate such as 989TFLOPS or 312e12";
    case Dimension::Ratio:
      return "a fraction such as 0.85 or 85%";
    case Dimension::Power:
      return "a power such as 700W";
  }
  return "a quantity";
}

double dimension_max(Dimension d) {
  switch (d) {
    case Dimension::Bandwidth:
      return 1e18;
    case Dimension::Size:
      return 1180591620717411303424.0;  // 2^70 B = 1 ZiB
    case Dimension::Time:
      return 1e7;
    case Dimension::Frequency:
      return 1e12;
    case Dimension::FlopRate:
      return 1e21;
    case Dimension::Ratio:
      return 1e12;
    case Dimension::Power:
      return 1e7;
  }
  return 1e12;
}

const char* dimension_base_unit(Dimension d) {
  switch (d) {
    case Dimension::Bandwidth:
      return "B/s";
    case Dimension::Size:
      return "B";
    case Dimension::Time:
      return "s";
    case Dimension::Frequency:
      return "Hz";
    case Dimension::FlopRate:
      return "FLOP/s";
    case Dimension::Ratio:
      return "";
    case Dimension::Power:
      return "W";
  }
  return "";
}

std::optional<NumberAndUnit> split_quantity(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  double value = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    unit.remove_prefix(1);
  return NumberAndUnit{value, unit};
}

std::optional<double> parse_quantity(std::string_view text, Dimension d) {
  const std::optional<NumberAndUnit> q = split_quantity(text);
  if (!q) return std::nullopt;
  if (q->unit.empty()) return q->value;
  auto factor = unit_factor(q->unit, d);
  if (!factor) return std::nullopt;
  // A finite number whose unit scales it past the double range is no quantity either.
  if (!std::isfinite(q->value * *factor)) return std::nullopt;
  return q->value * *factor;
}

}  // namespace rapid
