// The best points of each group of a sweep, kept per rank and agreed over all ranks: the
// shortest step time (ties by index) per group. `--fidelity auto` simulates the best K of
// each (GPU count, hardware variant, scenario); `--keep top-K` writes the best K of each
// (GPU count, hardware variant, scenario, serving load) and no other row.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "rapid/common/mpi_env.hpp"
#include "rapid/io/result_schema.hpp"

namespace rapid {

/// (GPU count, hardware variant, scenario, serving load).
using GroupKey = std::tuple<int64_t, int32_t, int32_t, int32_t>;

class BestPoints {
 public:
  /// Keeps the best `k` per group; `with_load`: the serving load is part of the group;
  /// `keep_rows`: each kept point's row is copied (for writing it later).
  BestPoints(int64_t k, bool with_load, bool keep_rows);

  /// Offers a feasible point (others are ignored by the caller).
  void consider(const Point& p, double step_time_s, int64_t index, const ResultRow* row = nullptr);
  /// Collective over `comm`: the best k per group over every rank, as (index, step time)
  /// sorted by index; the same list on every rank. Throws InternalError.
  std::vector<std::pair<int64_t, double>> agree(MPI_Comm comm) const;
  /// The kept rows of this rank whose index is in `chosen` (sorted by index), in index
  /// order.
  std::vector<const ResultRow*> rows_in(
      const std::vector<std::pair<int64_t, double>>& chosen) const;
  int64_t k() const { return k_; }

 private:
  struct Entry {
    double step;
    int64_t index;
    std::optional<ResultRow> row;
  };
  int64_t k_;
  bool with_load_, keep_rows_;
  std::map<GroupKey, std::vector<Entry>> best_;
};

}  // namespace rapid
