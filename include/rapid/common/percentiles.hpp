// Nearest-rank percentiles of a sample (Hyndman & Fan 1996, definition 1: the value at rank
// ceil(q n), 1-based, of the n sorted values; at least a share q of the sample is at or
// below it). The serving simulation's p50, p90 and p99 of TTFT, ITL and E2E
// (docs/inference.md sec 5).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rapid {

struct Percentiles {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double p50 = kNaN, p90 = kNaN, p99 = kNaN;
};

/// The median, 90th and 99th percentiles of `v` (NaN when empty); sorts `v` in place.
inline Percentiles nearest_rank_percentiles(std::vector<double>& v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
  };
  return {at(0.5), at(0.9), at(0.99)};
}

}  // namespace rapid
