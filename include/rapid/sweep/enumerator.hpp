// Dense index space of a job's legal points (Calculon's "generators that yield only legal
// points"). Point i in [0, size()) decodes in O(1): the legal combinations of every knob
// but recompute are listed once at setup as blocks, recompute is the innermost axis, so
// block = i / R and recompute = i % R with R the number of recompute options.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// One point of the sweep: a hardware variant and a parallel layout.
struct Point {
  int64_t index = 0;
  int32_t hardware = 0;  ///< index into SweepSpec::hardware
  ParallelConfig par;
};

class Enumerator {
 public:
  /// Lists the legal blocks of `spec` (which must outlive the enumerator). Throws InputError
  /// naming the job file when no point is legal, or when the baseline is not a point of the
  /// space (a value missing from a search list).
  explicit Enumerator(const SweepSpec& spec);

  int64_t size() const { return static_cast<int64_t>(blocks_.size()) * radix_; }

  /// Point i, 0 <= i < size(). O(1), no allocation.
  Point decode(int64_t i) const;

  /// Index of a point, or nullopt when it is not in the space. O(number of blocks).
  std::optional<int64_t> encode(int32_t hardware, const ParallelConfig& par) const;

  /// Index of the job's baseline (on hardware variant 0), or -1 when the job has none.
  int64_t baseline_index() const { return baseline_index_; }

 private:
  struct Block {
    ParallelConfig par;  ///< recompute unset: it is the innermost axis
    int32_t hardware;
  };
  std::vector<Block> blocks_;
  std::vector<Recompute> recompute_;
  int64_t radix_ = 1;
  int64_t baseline_index_ = -1;
};

}  // namespace rapid
