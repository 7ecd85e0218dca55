#include "rapid/spec/parallel_config.hpp"

#include <fmt/format.h>

namespace rapid {

const char* recompute_name(Recompute r) {
  static const char* names[] = {"none", "selective", "full"};
  return names[static_cast<int>(r)];
}

std::string ParallelConfig::describe() const {
  return fmt::format("dp{} tp{} pp{} cp{} ep{} vpp{} mbs{} sp{} zero{} recompute={}", dp, tp, pp,
                     cp, ep, vpp, mbs, sp ? 1 : 0, zero_stage, recompute_name(recompute));
}

}  // namespace rapid
