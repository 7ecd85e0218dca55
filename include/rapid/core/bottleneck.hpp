// Which pipeline stage's breakdown a row reports (docs/model.md section 8): the one with the
// most compute, of equal compute the one with more blocking sends (a middle stage sends both
// ways). Both evaluators pick by it, so the DES and the closed form report the same stage
// whatever each makes of the traffic the stages wait for.
#pragma once

#include <cstdint>

namespace rapid {

/// Blocking pipeline sends of stage `j` per micro-batch: each chunk's forward output and
/// backward gradient, but the first stage's chunk 0 gradient and the last stage's last
/// chunk output.
inline int64_t stage_sends(int64_t j, int64_t pp, int64_t vpp) {
  if (pp <= 1) return 0;
  return 2 * vpp - (j == 0 ? 1 : 0) - (j == pp - 1 ? 1 : 0);
}

/// Stage a (compute `compute_a` over the step, `sends_a`) is a heavier bottleneck than b.
/// Compute within 1e-9 counts as equal (the DES sums integer picoseconds, the closed form
/// doubles).
inline bool heavier_stage(double compute_a, int64_t sends_a, double compute_b, int64_t sends_b) {
  if (compute_a > compute_b * (1.0 + 1e-9)) return true;
  if (compute_b > compute_a * (1.0 + 1e-9)) return false;
  return sends_a > sends_b;
}

}  // namespace rapid
