#include "rapid/eval/cluster_power.hpp"

#include <algorithm>
#include <limits>

namespace rapid {

void ClusterPower::add(const StepProfile& profile, const Derate& derate, double gpus) {
  double t = 0;
  for (const PowerSegment& s : profile.segments) {
    const double d = s.stretches
                         ? s.duration_s * derate.slowdown(s.work.compute_share, s.work.memory_share)
                         : s.duration_s;
    const double P = (s.stretches ? s.work.at(derate) : s.work.full_W()) * gpus;
    changes_.push_back({t, P});
    changes_.push_back({t + d, -P});
    t += d;
  }
}

double ClusterPower::swing_W() const {
  if (changes_.empty()) return 0;
  std::vector<std::pair<double, double>> c = changes_;
  std::sort(c.begin(), c.end());
  // The sum of the powers holds over [t_i, t_{i+1}); the last change ends the step.
  double sum = 0, hi = -std::numeric_limits<double>::infinity(), lo = -hi;
  for (size_t i = 0; i + 1 < c.size(); ++i) {
    sum += c[i].second;
    if (c[i + 1].first > c[i].first) {
      hi = std::max(hi, sum);
      lo = std::min(lo, sum);
    }
  }
  return hi > lo ? hi - lo : 0.0;
}

}  // namespace rapid
