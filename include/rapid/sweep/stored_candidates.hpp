// Resuming a `--fidelity auto` sweep (README "Stopping and resuming"): the second pass
// simulates the best K points of each group by their analytical step time, over all rows,
// but a resumed run evaluated only the rows its partial file lacked. This offers the
// scheduler the rows earlier runs wrote, read back from the file, so refine() chooses the
// same points an uninterrupted run would: a row an earlier refine() already replaced by its
// simulation is ranked by the analytical step time it keeps (step_time_analytical_s), and
// is not simulated twice (SchedulerOptions::simulated_before).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "rapid/common/mpi_env.hpp"
#include "rapid/io/result_store.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/sweep/scheduler.hpp"

namespace rapid {

/// The complement of `missing` (sorted, disjoint ranges) in [0, n).
std::vector<std::pair<int64_t, int64_t>> done_ranges(
    const std::vector<std::pair<int64_t, int64_t>>& missing, int64_t n);

/// Collective: rank 0 (the store's only reader) reads the rows in `done` from `store`
/// (status, step_time_analytical_s, fidelity; in pieces of bounded size) and offers each
/// to its `scheduler` (Scheduler::consider; refine() agrees over the ranks). Returns, on
/// every rank, the sorted indices of the rows an earlier refine() simulated. Throws
/// InternalError on an HDF5 failure.
std::vector<int64_t> offer_stored_rows(const MpiEnv& mpi, ResultStore& store,
                                       const Enumerator& enumerator,
                                       const std::vector<std::pair<int64_t, int64_t>>& done,
                                       Scheduler& scheduler);

}  // namespace rapid
