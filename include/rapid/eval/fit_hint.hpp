// What an out-of-memory row says (docs/architecture.md "Errors", kind 3; issue 8 part 5): by how
// much the layout misses the GPU's memory and which single knob change would make it fit. The
// changes are tried cheapest first, by what they cost a training step: the distributed
// optimizer's ZeRO 1 and 2 (no extra traffic with overlap), sequence parallelism, selective
// recompute (the attention core only), block recompute of the fewest layers per chunk,
// ZeRO 3 (weights gathered every micro-batch), activation offload of the fewest layers,
// full recompute, then a smaller micro-batch. Only legal layouts count (legality.hpp,
// the stack's features). Memory only: no timing, no workload rebuild.
#pragma once

#include <array>

#include "rapid/core/eval_result.hpp"
#include "rapid/spec/sweep_spec.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

struct FitHintResult {
  FitHint hint = FitHint::None;
  int32_t value = 0;      ///< the knob's new value
  double peak_bytes = 0;  ///< the peak memory with the change
};

/// The first change of the order above under which the peak memory of `w` (built for
/// w.par) is at most `capacity_bytes`; FitHint::None when no single change fits.
/// The peak memory of the layouts a search tried lately: the searches of a layout's ZeRO
/// stages and recompute options (a sweep's neighbours) try the same knob changes. For one
/// spec only: the caller keeps one per spec.
struct PeakCache {
  static constexpr size_t kEntries = 512;  ///< 256 sets of two ways
  /// By entry: layout_hash of its layout (0: unused), its peak (infinite: the layout is
  /// illegal) and the layout; the hashes apart, so that a probe reads one cache line.
  std::array<uint64_t, kEntries> hash{};
  std::array<double, kEntries> peak_bytes{};
  std::array<ParallelConfig, kEntries> layout{};
  size_t next = 0;
};

FitHintResult find_fit_hint(const SweepSpec& spec, const Workload& w, double capacity_bytes,
                            PeakCache* cache = nullptr);

}  // namespace rapid
