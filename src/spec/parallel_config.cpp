#include "rapid/spec/parallel_config.hpp"

#include <fmt/format.h>

namespace rapid {

std::string ParallelConfig::describe() const {
  return fmt::format("dp{} tp{} pp{} cp{} ep{} etp{} vpp{} mbs{} sp{} zero{} recompute={}", dp, tp,
                     pp, cp, ep, etp, vpp, mbs, sp ? 1 : 0, zero_stage, recompute_name(recompute));
}

}  // namespace rapid
