#include "rapid/workload/schedule.hpp"

#include <algorithm>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

// The k-th pass of one direction, k = (group * vpp + slot) * pp + lane counted up without
// divisions: it runs chunk slot (forward; vpp - 1 - slot backward) of micro-batch
// group * pp + lane. vpp == 1: chunk 0 of micro-batch k.
struct PassCounter {
  int64_t pp, vpp, lane = 0, slot = 0, group = 0;
  PassRef take(PassDir dir, int64_t m) {
    const int64_t chunk = dir == PassDir::Forward ? slot : vpp - 1 - slot;
    const int64_t mb = group * pp + lane;
    RAPID_ASSERT(mb < m, "interleaved schedule: micro-batches divisible by pp");
    if (++lane == pp) {
      lane = 0;
      if (++slot == vpp) slot = 0, ++group;
    }
    return PassRef{dir, static_cast<int32_t>(chunk), static_cast<int32_t>(mb)};
  }
};

}  // namespace

int64_t warmup_forwards(int64_t pp, int64_t vpp, int64_t m, int64_t stage) {
  return vpp == 1 ? std::min(pp - stage - 1, m)
                  : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, m * vpp);
}

void pipeline_schedule(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                       std::vector<PassRef>& out) {
  const int64_t total = m * vpp;
  const int64_t warm = warmup_forwards(pp, vpp, m, stage);
  out.resize(static_cast<size_t>(2 * total));
  PassCounter f{pp, vpp}, b{pp, vpp};
  PassRef* o = out.data();
  for (int64_t k = 0; k < warm; ++k) *o++ = f.take(PassDir::Forward, m);
  for (int64_t k = 0; k < total - warm; ++k) {
    *o++ = f.take(PassDir::Forward, m);
    *o++ = b.take(PassDir::Backward, m);
  }
  for (int64_t k = total - warm; k < total; ++k) *o++ = b.take(PassDir::Backward, m);
}

}  // namespace rapid
