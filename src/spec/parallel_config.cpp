#include "rapid/spec/parallel_config.hpp"

#include <fmt/format.h>

namespace rapid {

int64_t data_parallel_degree(int64_t gpus, int64_t tp, int64_t pp, int64_t cp) {
  int64_t model = 0;
  if (tp < 1 || pp < 1 || cp < 1 || __builtin_mul_overflow(tp, pp, &model) ||
      __builtin_mul_overflow(model, cp, &model) || gpus % model != 0)
    return 0;
  return gpus / model;
}

std::string ParallelConfig::describe_recompute() const {
  std::string rc = recompute_name(recompute);
  if (partial_recompute())
    rc += fmt::format("({} {})", kRecomputeMethodNames[static_cast<int>(recompute_method)],
                      recompute_layers);
  return rc;
}

std::string ParallelConfig::describe() const {
  const std::string rc = describe_recompute();
  return fmt::format("dp{} tp{} pp{} cp{} ep{} etp{} vpp{} mbs{} sp{} zero{} recompute={}{}", dp,
                     tp, pp, cp, ep, etp, vpp, mbs, sp ? 1 : 0, zero_stage, rc,
                     offload_layers > 0 ? fmt::format(" offload{}", offload_layers) : "");
}

}  // namespace rapid
