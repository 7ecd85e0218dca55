#include "rapid/sweep/stored_candidates.hpp"

#include <algorithm>
#include <cmath>

namespace rapid {

namespace {
constexpr int64_t kPiece = 1 << 16;  // rows read at once (3 columns x 8 B x 64 Ki = 1.5 MiB)
constexpr double kDesCode = 1;       // kFidelityNames: {"analytical", "des"}
}  // namespace

std::vector<std::pair<int64_t, int64_t>> done_ranges(
    const std::vector<std::pair<int64_t, int64_t>>& missing, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> done;
  int64_t at = 0;
  for (const auto& [a, b] : missing) {
    if (a > at) done.push_back({at, a});
    at = std::max(at, b);
  }
  if (at < n) done.push_back({at, n});
  return done;
}

void offer_stored_rows(const MpiEnv& mpi, ResultStore& store, const Enumerator& enumerator,
                       const std::vector<std::pair<int64_t, int64_t>>& done, Scheduler& scheduler) {
  const int64_t n = store.num_points();
  const int64_t lo = n * mpi.rank() / mpi.size();
  const int64_t hi = n * (mpi.rank() + 1) / mpi.size();
  for (const auto& [a, b] : done) {
    for (int64_t first = std::max(a, lo); first < std::min(b, hi); first += kPiece) {
      const int64_t count = std::min({kPiece, b - first, hi - first});
      const std::vector<double> status = store.read_column("status", first, count);
      const std::vector<double> step = store.read_column("step_time_analytical_s", first, count);
      const std::vector<double> fidelity = store.read_column("fidelity", first, count);
      for (int64_t k = 0; k < count; ++k) {
        const auto j = static_cast<size_t>(k);
        // Simulated by an earlier run: ranked by its analytical step time, which its row
        // keeps (refine() simulates only points the closed form found feasible).
        const Status s = fidelity[j] == kDesCode
                             ? (std::isnan(step[j]) ? Status::Error : Status::Ok)
                             : static_cast<Status>(status[j]);
        scheduler.consider(enumerator.decode(first + k), s, step[j], first + k);
      }
    }
  }
}

}  // namespace rapid
