#include "rapid/workload/schedule.hpp"

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid {

void pipeline_schedule(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                       std::vector<PassRef>& out) {
  out.clear();
  const int64_t total = m * vpp;
  const int64_t warm = vpp == 1 ? std::min(pp - stage - 1, m)
                                : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  auto pass = [&](int64_t k, PassDir dir) {
    if (vpp == 1) return PassRef{dir, 0, static_cast<int32_t>(k)};
    const int64_t group = pp * vpp, in = k % group;
    const int64_t chunk = dir == PassDir::Forward ? in / pp : vpp - 1 - in / pp;
    const int64_t mb = (k / group) * pp + k % pp;
    RAPID_ASSERT(mb < m, "interleaved schedule: micro-batches divisible by pp");
    return PassRef{dir, static_cast<int32_t>(chunk), static_cast<int32_t>(mb)};
  };
  for (int64_t k = 0; k < warm; ++k) out.push_back(pass(k, PassDir::Forward));
  for (int64_t k = 0; k < total - warm; ++k) {
    out.push_back(pass(warm + k, PassDir::Forward));
    out.push_back(pass(k, PassDir::Backward));
  }
  for (int64_t k = total - warm; k < total; ++k) out.push_back(pass(k, PassDir::Backward));
}

}  // namespace rapid
