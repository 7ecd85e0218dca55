// Quantities with units, as people write them in YAML ("400Gbps", "0.5us", "80GiB",
// "2TB/s", "1.41GHz", "989TFLOPS"). Converted once, at parse time, to SI base units:
//   Bandwidth -> bytes per second (B/s)       Size      -> bytes (B)
//   Time      -> seconds (s)                  Frequency -> hertz (Hz)
//   FlopRate  -> floating-point ops per second (FLOP/s)
//   Ratio     -> plain number ("85%" -> 0.85)  Power     -> watts (W)
// A bare number means the base unit above. Decimal prefixes (k, M, G, T, P) are powers of
// 1000, binary prefixes (Ki, Mi, Gi, Ti) powers of 1024 (IEC 80000-13). Bits ("Gbps",
// "Gb/s") are divided by 8 (1 byte = 8 bits).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rapid {

enum class Dimension { Bandwidth, Size, Time, Frequency, FlopRate, Ratio, Power };

/// Human-readable list of accepted units for a dimension, used in error messages.
const char* dimension_units(Dimension d);

/// Largest value a quantity of `d` may take, in its base unit: far beyond any machine (1 EB/s,
/// 1 ZiB, 1e7 s, 1 THz, 1 ZFLOP/s, 10 MW), small enough that products of a few of them stay
/// finite in double.
double dimension_max(Dimension d);
/// The base unit's symbol ("B/s", "B", "s", "Hz", "FLOP/s", "", "W").
const char* dimension_base_unit(Dimension d);

/// "NUMBER[ ]UNIT" split, spaces around trimmed: ("2039GB/s" -> 2039, "GB/s"; "0.85" ->
/// 0.85, ""). nullopt when the text does not start with a finite number.
struct NumberAndUnit {
  double value;
  std::string_view unit;
};
std::optional<NumberAndUnit> split_quantity(std::string_view text);

/// Parses "NUMBER[ ]UNIT" into the SI base unit of `d`.
/// Returns std::nullopt when the text is not a finite number followed by a unit of `d`
/// (callers turn that into an InputError naming file and key).
std::optional<double> parse_quantity(std::string_view text, Dimension d);

}  // namespace rapid
