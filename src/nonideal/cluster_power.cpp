#include "rapid/nonideal/cluster_power.hpp"

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
  // The profiles end where the step ends: the sum is defined up to the earliest end.
  double end = std::numeric_limits<double>::infinity(), last = 0;
  for (const auto& [t, dP] : c) last = std::max(last, t);
  end = last;
  double sum = 0, hi = -std::numeric_limits<double>::infinity(), lo = -hi;
  for (size_t i = 0; i < c.size(); ++i) {
    sum += c[i].second;
    const double next = i + 1 < c.size() ? c[i + 1].first : end;
    if (next > c[i].first && c[i].first < end) {  // the sum holds over [t_i, t_{i+1})
      hi = std::max(hi, sum);
      lo = std::min(lo, sum);
    }
  }
  return hi > lo ? hi - lo : 0.0;
}

}  // namespace rapid
