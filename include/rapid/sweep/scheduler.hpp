// Dynamic distribution of a sweep's index space over MPI ranks and OpenMP threads
// (DESIGN.md "Data flow": rank 0 hands out index chunks, dynamic because point cost varies).
//
// Protocol (on a private duplicate of MPI_COMM_WORLD):
//  - a worker (rank > 0) sends REQUEST{points it has finished so far} and receives
//    CHUNK{first, count}; count == 0 means "no work left". It keeps one request outstanding:
//    right after receiving a chunk it asks for the next one (nonblocking), then evaluates and
//    writes the current chunk, so the next chunk is usually there when it is done.
//  - after the "no work left" reply a worker sends FINISHED{points finished}; rank 0 returns
//    from run() once every worker has finished, so rank 0's progress ends at N exactly.
//  - rank 0 answers requests and, when none is pending, evaluates chunks itself. While it
//    evaluates, its OpenMP thread 0 (the thread that initialised MPI: MPI_THREAD_FUNNELED)
//    answers requests every kPollInterval of its points, so a worker never waits a whole
//    chunk. With one rank, rank 0 evaluates everything and sends no messages.
//
// Chunk sizes are guided (OpenMP's schedule(guided) idea): chunk = clamp(remaining /
// (4 * ranks), kMinChunk, kMaxChunk), capped by what remains. Large chunks early amortise
// messages and HDF5 writes; small chunks at the end balance the ranks' finishing times.
// `--chunk N` fixes every chunk at N instead.
//
// Memory per rank is bounded independently of N: one chunk of rows (at most kMaxChunk or
// the fixed size) plus one scratch Workload per thread, all reused (nothing is allocated per
// point once they are warm).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "rapid/eval/point_evaluator.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/sweep/mpi_env.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

inline constexpr int64_t kMinChunk = 64;
inline constexpr int64_t kMaxChunk = 16384;
inline constexpr int64_t kPollInterval = 32;  ///< rank 0's thread-0 points between polls

/// Size of the next chunk: `fixed` when > 0, else clamp(remaining / (4 * ranks), kMinChunk,
/// kMaxChunk); never more than `remaining` (>= 0), 0 when nothing remains.
int64_t next_chunk_size(int64_t remaining, int ranks, int64_t fixed);

/// One row of a sweep: point `p` evaluated with fidelity `f` into `r`, never throwing for
/// the point (PointEvaluator::evaluate_guarded). A DES row keeps the analytical model's step
/// time of the point (EvalResult::step_time_analytical_s): `analytical_step_s` when given
/// (under `--fidelity auto` the first pass's), else the closed form's, evaluated here.
void evaluate_row(const PointEvaluator& evaluator, const Point& p, Workload& scratch, EvalResult& r,
                  Fidelity f, std::optional<double> analytical_step_s = std::nullopt) noexcept;

/// Receives each evaluated chunk: rows[k] is point first + k. Called on the main thread.
using ChunkSink = std::function<void(int64_t first, std::span<const ResultRow> rows)>;

struct SchedulerOptions {
  int64_t fixed_chunk = 0;  ///< > 0: every chunk this size (`--chunk`); 0: guided
  bool progress = true;     ///< rank 0 prints a progress line to stderr (<= 1 per second)
  /// `--fidelity auto`: > 0 keeps each rank's best `top_k` feasible points per (GPU count,
  /// hardware variant) during run(), for refine().
  int64_t top_k = 0;
  /// The index ranges [first, last) to evaluate (a resumed sweep's missing rows); empty:
  /// the whole space.
  std::vector<std::pair<int64_t, int64_t>> todo;
  /// refine(): true for a point whose simulated row an earlier run already wrote (a
  /// resumed `--fidelity auto` sweep); it is not simulated again. Empty: none.
  std::function<bool(int64_t index)> simulated_before;
};

/// What run() did on this rank.
struct SweepStats {
  int64_t points_evaluated = 0;  ///< by this rank
  int64_t chunks = 0;            ///< evaluated by this rank
  double wall_s = 0;             ///< time spent in run()
  bool interrupted = false;      ///< stopped early by request_stop() (a signal)
};

/// Asks every scheduler of this process to stop after the point each thread is on (the
/// chunk's rows done so far are written, the rest left missing); async-signal safe (a
/// signal handler calls it). The coordinator then hands out no more chunks.
void request_stop() noexcept;
bool stop_requested() noexcept;

class Scheduler {
 public:
  /// Collective (duplicates MPI_COMM_WORLD). `enumerator`, `evaluator` and `mpi` must outlive
  /// the scheduler. Allocates one scratch Workload per OpenMP thread (omp_get_max_threads()
  /// at this point). Throws InternalError.
  Scheduler(const MpiEnv& mpi, const Enumerator& enumerator, const PointEvaluator& evaluator,
            ChunkSink sink, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Collective: evaluates every point of the enumerator exactly once across all ranks and
  /// passes each chunk to the sink of the rank that evaluated it. Returns when this rank has
  /// no more work (rank 0: when every rank has finished). Throws InternalError on an MPI
  /// failure and rethrows what the evaluator or the sink throws; after a throw the other
  /// ranks may be blocked, so the caller must end the job (MpiEnv::abort()).
  SweepStats run();

  /// `--fidelity auto`, after run() on every rank (collective): agrees across ranks on the
  /// best `top_k` points (shortest analytical step time, ties by index) of each (GPU count,
  /// hardware variant) group, then evaluates them with the discrete-event simulator
  /// (round robin over the ranks, OpenMP inside) and passes each row to the sink again.
  /// Rows are written in blocks as they are done; a stop request (a signal) ends it after
  /// the current block with stats().interrupted set (every rank still returns together).
  /// Returns the number of points chosen for simulation. Throws like run().
  int64_t refine();
  const SweepStats& stats() const { return stats_; }

  /// `--fidelity auto`: offers refine() point `index` with its analytical status and step
  /// time (a row an earlier run wrote, when resuming), as run() does for its own rows.
  void consider(const Point& p, Status status, double step_time_s, int64_t index);

 private:
  struct Chunk {
    int64_t first = 0;
    int64_t count = 0;
  };

  void run_coordinator();
  void run_worker();
  Chunk take_chunk();
  /// Evaluates and writes the chunk; returns the rows written (fewer than c.count when a
  /// stop request cut it short: the rest stay missing in the done mask).
  int64_t evaluate_chunk(const Chunk& c, bool poll_while_evaluating);
  /// rows_[k] = point index_of(k) for k < count, evaluated with `fidelity` on the OpenMP
  /// threads (dynamic schedule, `grain` points at a time), evaluated_[k] = 1 for each one
  /// done (a stop request skips the rest); rethrows the first failure. Each row is
  /// evaluate_row()'s, with analytical_step(k) when given (refine(): the first pass's
  /// analytical step times).
  void evaluate_rows(int64_t count, const std::function<int64_t(int64_t)>& index_of,
                     Fidelity fidelity, int grain, bool poll_while_evaluating,
                     const std::function<double(int64_t)>& analytical_step = {});
  bool poll();  // rank 0: answers what has arrived; true when a message was handled
  void post_receive();
  void handle_message(int source, int tag, int64_t payload);
  void print_progress(bool final);

  const MpiEnv& mpi_;
  const Enumerator& enumerator_;
  const PointEvaluator& evaluator_;
  ChunkSink sink_;
  SchedulerOptions options_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool completed_ = false;

  std::vector<Workload> scratch_;   ///< one per OpenMP thread
  std::vector<ResultRow> rows_;     ///< the chunk being evaluated
  std::vector<uint8_t> evaluated_;  ///< per row of rows_: 1 once evaluated
  SweepStats stats_;

  /// This rank's best points per (GPU count, hardware): (step time, index), best first.
  /// The best points so far per (GPU count, hardware variant, scenario).
  std::map<std::tuple<int64_t, int32_t, int32_t>, std::vector<std::pair<double, int64_t>>> best_;
  void keep_best(int64_t first, int64_t from, int64_t to);  ///< rows_[from, to): first + j

  // Rank 0 only.
  int64_t next_ = 0;  ///< first index not yet handed out (within todo_[range_])
  std::vector<std::pair<int64_t, int64_t>> todo_;  ///< ranges to evaluate
  size_t range_ = 0;                               ///< the range next_ is in
  int64_t total_ = 0;                              ///< points in todo_
  int64_t handed_ = 0;                             ///< of which handed out
  int workers_finished_ = 0;
  std::vector<int64_t> reported_;  ///< points each worker reported finished
  MPI_Request receive_ = MPI_REQUEST_NULL;
  int64_t receive_payload_ = 0;
  std::chrono::steady_clock::time_point start_, last_print_;
  bool tty_ = false;
  int64_t printed_ = 0;  ///< points done at the last progress line
};

}  // namespace rapid
