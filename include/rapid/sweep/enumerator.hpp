// Dense index space of a job's legal points (Calculon's "generators that yield only legal
// points"). The legal combinations of every knob but recompute are listed once at setup as
// blocks, each with the bitmask of its legal recompute options (recompute x method x
// num_layers: partial recompute is legal only where a model chunk has the layers) and the
// index of its first point; point i decodes by a binary search over the blocks' first
// indices, O(log blocks), no allocation.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// One point of the sweep: a hardware variant and a parallel layout.
struct Point {
  int64_t index = 0;
  int32_t hardware = 0;  ///< index into SweepSpec::hardware
  int32_t scenario = 0;  ///< index into SweepSpec::scenarios (non-ideal conditions)
  int32_t load = 0;      ///< serving: index into SweepSpec::serving.loads (0 in training)
  ParallelConfig par;
};

class Enumerator {
 public:
  /// Lists the legal blocks of `spec` (which must outlive the enumerator). Throws InputError
  /// naming the job file when no point is legal, or when the baseline is not a point of the
  /// space (a value missing from a search list).
  explicit Enumerator(const SweepSpec& spec);

  int64_t size() const { return size_; }

  /// Point i, 0 <= i < size(). O(log blocks), no allocation.
  Point decode(int64_t i) const;

  /// Index of a point, or nullopt when it is not in the space. O(blocks x recompute options).
  std::optional<int64_t> encode(int32_t hardware, const ParallelConfig& par,
                                int32_t scenario = 0, int32_t load = 0) const;
  /// Points per (scenario, serving load): the layouts x hardware variants.
  int64_t layouts() const { return layouts_; }

  /// Index of the job's baseline (on hardware variant 0), or -1 when the job has none.
  int64_t baseline_index() const { return baseline_index_; }

  /// The recompute options of the search (recompute x method x num_layers) that no layout
  /// of the space can run, as `full(block 500)`: search values that add no point.
  std::vector<std::string> unused_recompute_options() const;

 private:
  /// One value of the innermost axis.
  struct RecomputeOption {
    Recompute recompute;
    RecomputeMethod method;
    int32_t layers;
  };
  /// The options of a search space: none, selective, and full x methods x layer counts.
  static std::vector<RecomputeOption> recompute_options(const SearchSpace& s);

  struct Block {
    ParallelConfig par;  ///< recompute unset: it is the innermost axis
    int32_t hardware;
    int64_t first;     ///< index of its first point
    uint32_t options;  ///< legal recompute options (bit r: options_[r])
  };
  ParallelConfig apply(const ParallelConfig& c, size_t option) const;

  std::vector<Block> blocks_;
  std::vector<RecomputeOption> options_;
  int64_t size_ = 0;
  int64_t layouts_ = 0, scenarios_ = 1, loads_ = 1;
  int64_t baseline_index_ = -1;
};

}  // namespace rapid
