#include "rapid/sweep/best_points.hpp"

#include <algorithm>

namespace rapid {

BestPoints::BestPoints(int64_t k, bool with_load, bool keep_rows)
    : k_(k), with_load_(with_load), keep_rows_(keep_rows) {}

void BestPoints::consider(const Point& p, double step_time_s, int64_t index, const ResultRow* row) {
  const auto k = static_cast<size_t>(k_);
  auto& list = best_[{p.par.num_gpus(), p.hardware, p.scenario, with_load_ ? p.load : 0}];
  auto before = [](const Entry& a, double s, int64_t i) {
    return a.step < s || (a.step == s && a.index < i);
  };
  if (list.size() == k && before(list.back(), step_time_s, index)) return;
  const auto at = std::find_if(list.begin(), list.end(),
                               [&](const Entry& e) { return !before(e, step_time_s, index); });
  Entry e{step_time_s, index, std::nullopt};
  if (keep_rows_ && row) e.row = *row;
  list.insert(at, std::move(e));
  if (list.size() > k) list.pop_back();
}

std::vector<std::pair<int64_t, double>> BestPoints::agree(MPI_Comm comm) const {
  // Every rank's candidates as (gpus, hardware, scenario, load, index, step time), gathered
  // on all ranks.
  constexpr size_t kFields = 6;
  std::vector<double> mine;
  for (const auto& [g, list] : best_)
    for (const Entry& e : list)
      mine.insert(mine.end(),
                  {static_cast<double>(std::get<0>(g)), static_cast<double>(std::get<1>(g)),
                   static_cast<double>(std::get<2>(g)), static_cast<double>(std::get<3>(g)),
                   static_cast<double>(e.index), e.step});
  int ranks = 1;
  mpi_check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks), 0);
  mpi_check(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm), "MPI_Allgather");
  for (int r = 1; r < ranks; ++r)
    offsets[static_cast<size_t>(r)] =
        offsets[static_cast<size_t>(r) - 1] + counts[static_cast<size_t>(r) - 1];
  std::vector<double> all(static_cast<size_t>(offsets.back() + counts.back()));
  mpi_check(MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                           offsets.data(), MPI_DOUBLE, comm),
            "MPI_Allgatherv");
  // The global best k per group: the same list on every rank.
  std::map<GroupKey, std::vector<std::pair<double, int64_t>>> best;
  for (size_t i = 0; i + kFields - 1 < all.size(); i += kFields)
    best[{static_cast<int64_t>(all[i]), static_cast<int32_t>(all[i + 1]),
          static_cast<int32_t>(all[i + 2]), static_cast<int32_t>(all[i + 3])}]
        .push_back({all[i + 5], static_cast<int64_t>(all[i + 4])});
  std::vector<std::pair<int64_t, double>> chosen;
  for (auto& [group, list] : best) {
    std::sort(list.begin(), list.end());
    for (size_t j = 0; j < list.size() && j < static_cast<size_t>(k_); ++j)
      chosen.push_back({list[j].second, list[j].first});
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<const ResultRow*> BestPoints::rows_in(
    const std::vector<std::pair<int64_t, double>>& chosen) const {
  std::vector<const ResultRow*> out;
  for (const auto& [g, list] : best_)
    for (const Entry& e : list) {
      const auto it = std::lower_bound(chosen.begin(), chosen.end(),
                                       std::pair<int64_t, double>{e.index, -1e300});
      if (e.row && it != chosen.end() && it->first == e.index) out.push_back(&*e.row);
    }
  std::sort(out.begin(), out.end(),
            [](const ResultRow* a, const ResultRow* b) { return a->point.index < b->point.index; });
  return out;
}

}  // namespace rapid
