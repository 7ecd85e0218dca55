// Dense index space of a job's legal points (Calculon's "generators that yield only legal
// points"), derived without materialising the space (issue 13 part 1).
//
// Index order, slowest axis first: (scenario, serving load), then the layout: GPU count,
// tp, pp, cp, ep, etp (a "frame": they fix dp), then mbs, sp, offload layers, vpp, zero
// stage and the recompute option (recompute x method x num_layers), then the hardware
// variant (the axes the op templates do not read, analytical_evaluator.hpp, inside those
// they do: points that share template times come close). Legality does not depend on the hardware
// variant (illegal_reason reads the job's model, training and network only), so every variant holds
// the same layouts and the hardware is one radix of the index, the innermost: a layout's variants
// are consecutive points, which share its workload and memory (point_evaluator.hpp) and decode.
//
// Setup keeps one record per frame: its first index and point count, counted once. With a
// Share the counting is split over the ranks (each counts a contiguous part of the frames,
// the sums agree on every rank), so no rank repeats the whole enumeration. Memory is
// O(frames), independent of the number of points. decode(i) finds the frame by a binary
// search, then the point inside it in the frame's table of inner blocks (one per
// mbs x sp x offload x vpp x zero combination, with the bitmask of its legal recompute
// options), built on first use and cached per thread: a chunk of consecutive indices
// builds each frame's table once.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rapid/core/point.hpp"
#include "rapid/spec/parallel_config.hpp"
#include "rapid/spec/sweep_spec.hpp"

namespace rapid {

/// How the ranks split the counting of the frames: this rank counts part `part` of `parts`
/// and `sum` adds a vector elementwise over the ranks in place (MPI_Allreduce SUM). The
/// default counts everything here.
struct EnumerationShare {
  int part = 0;
  int parts = 1;
  std::function<void(std::span<int64_t>)> sum;
};

class Enumerator {
 public:
  /// Lists the frames of `spec` (which must outlive the enumerator) and counts their legal
  /// points. Throws InputError naming the job file when no point is legal, or when the
  /// baseline is not a point of the space (a value missing from a search list). Collective
  /// over the share's ranks when it has a `sum`.
  explicit Enumerator(const SweepSpec& spec, const EnumerationShare& share = {});

  int64_t size() const { return size_; }

  /// Point i, 0 <= i < size(). O(log frames) when i's frame is the calling thread's last
  /// one; else its inner table is built first (O(inner candidates)). Thread-safe.
  Point decode(int64_t i) const;

  /// Index of a point, or nullopt when it is not in the space.
  std::optional<int64_t> encode(int32_t hardware, const ParallelConfig& par, int32_t scenario = 0,
                                int32_t load = 0) const;
  /// Points per (scenario, serving load): the layouts x hardware variants.
  int64_t layouts() const { return layouts_; }
  /// Frames (GPU count x tp x pp x cp x ep x etp combinations with an integer dp).
  size_t frames() const { return frames_.size(); }

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

  /// GPU count x tp x pp x cp x ep x etp: the knobs that fix dp.
  struct Frame {
    ParallelConfig par;  ///< dp, tp, pp, cp, ep, etp set; the inner knobs at defaults
    int64_t first = 0;   ///< index of its first point within one hardware variant
  };
  /// One mbs x sp x offload x vpp x zero combination of a frame with a legal option.
  struct Inner {
    int64_t first;     ///< index of its first point relative to the frame's
    uint32_t combo;    ///< mixed-radix index over (vpp, mbs, offload, sp, zero)
    uint32_t options;  ///< legal recompute options (bit r: options_[r])
  };
  /// The frame's legal inner blocks in index order; returns its point count and ORs the
  /// options any of them allows into `used`. `why` gets the first rejection's reason.
  int64_t build_inner(const Frame& f, std::vector<Inner>& out, uint32_t& used,
                      const char** why = nullptr) const;
  /// The frame's layout with inner combination `combo` and recompute option `option`.
  ParallelConfig layout(const Frame& f, uint32_t combo, size_t option) const;
  /// Sets recompute option `option`'s fields of `c`.
  void set_option(ParallelConfig& c, size_t option) const;
  const char* illegal(const ParallelConfig& c) const;

  const SweepSpec& spec_;
  uint64_t id_;  ///< distinct per enumerator: the per-thread table cache's key
  std::vector<Frame> frames_;
  std::vector<RecomputeOption> options_;
  uint32_t used_options_ = 0;
  uint32_t inner_combos_ = 0;
  int64_t per_hardware_ = 0;  ///< legal layouts of one hardware variant
  int64_t size_ = 0;
  int64_t layouts_ = 0, scenarios_ = 1, loads_ = 1, hardware_ = 1;
  int64_t baseline_index_ = -1;
};

}  // namespace rapid
