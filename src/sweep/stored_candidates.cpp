#include "rapid/sweep/stored_candidates.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "rapid/common/error.hpp"

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

std::vector<int64_t> offer_stored_rows(const MpiEnv& mpi, ResultStore& store,
                                       const Enumerator& enumerator,
                                       const std::vector<std::pair<int64_t, int64_t>>& done,
                                       Scheduler& scheduler) {
  std::vector<int64_t> simulated;
  std::string error;
  if (mpi.is_root()) {
    try {
      for (const auto& [a, b] : done) {
        for (int64_t first = a; first < b; first += kPiece) {
          const int64_t count = std::min(kPiece, b - first);
          const std::vector<double> status = store.read_column("status", first, count);
          const std::vector<double> step =
              store.read_column("step_time_analytical_s", first, count);
          const std::vector<double> fidelity = store.read_column("fidelity", first, count);
          for (int64_t k = 0; k < count; ++k) {
            const auto j = static_cast<size_t>(k);
            // Simulated by an earlier run: ranked by its analytical step time, which its row
            // keeps (refine() simulates only points the closed form found feasible).
            const bool des = fidelity[j] == kDesCode;
            if (des) simulated.push_back(first + k);
            const Status s = des ? (std::isnan(step[j]) ? Status::Error : Status::Ok)
                                 : static_cast<Status>(status[j]);
            scheduler.consider(enumerator.decode(first + k), s, step[j], first + k);
          }
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = mpi.broadcast(error);
  if (!error.empty()) throw InternalError(error);
  // The simulated indices to every rank (as bytes).
  std::string bytes(reinterpret_cast<const char*>(simulated.data()),
                    simulated.size() * sizeof(int64_t));
  bytes = mpi.broadcast(bytes);
  simulated.resize(bytes.size() / sizeof(int64_t));
  std::memcpy(simulated.data(), bytes.data(), bytes.size());
  return simulated;
}

}  // namespace rapid
