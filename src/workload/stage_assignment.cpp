#include "rapid/workload/stage_assignment.hpp"

#include "rapid/common/error.hpp"

namespace rapid {

std::vector<int64_t> assign_layers(int64_t layers, int64_t pp, bool balanced,
                                   const std::vector<double>& extra) {
  RAPID_ASSERT(pp >= 1 && layers >= 0, "at least one stage");
  std::vector<int64_t> out(static_cast<size_t>(pp), 0);
  if (!balanced) {
    RAPID_ASSERT(layers % pp == 0, "an even split needs pp to divide the layers");
    for (auto& n : out) n = layers / pp;
    return out;
  }
  auto load = [&](size_t i) {
    return static_cast<double>(out[i]) + (i < extra.size() ? extra[i] : 0.0);
  };
  // One layer per stage first (a stage without layers is not a stage), then the rest.
  int64_t left = layers;
  for (size_t i = 0; i < out.size() && left > 0; ++i, --left) out[i] = 1;
  for (; left > 0; --left) {
    size_t best = 0;
    for (size_t i = 1; i < out.size(); ++i)
      if (load(i) <= load(best)) best = i;
    ++out[best];
  }
  return out;
}

}  // namespace rapid
