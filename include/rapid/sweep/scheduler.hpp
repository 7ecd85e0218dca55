// Dynamic distribution of a sweep's index space over MPI ranks and OpenMP threads
// (docs/architecture.md "Data flow": rank 0 hands out index chunks, dynamic because point cost
// varies).
//
// Protocol (on a private duplicate of MPI_COMM_WORLD):
//  - a worker (rank > 0) sends CONTROL{request, points finished so far} and receives
//    CHUNK{first, count}; count == 0 means "no work left". It keeps one request outstanding:
//    right after receiving a chunk it asks for the next one (nonblocking), then evaluates the
//    current chunk, packs its rows (io/row_block.hpp: what --keep keeps) and sends them to
//    rank 0 as DATA{block tagged with the chunk's first index} (nonblocking: the next chunk
//    is evaluated while it goes), so the next chunk is usually there when it is done.
//  - after the "no work left" reply a worker sends CONTROL{finished, points, DATA messages
//    sent}; rank 0 returns from run() once every worker has finished and every DATA message
//    has arrived, so rank 0's progress ends at N exactly and every row reached the writer.
//  - rank 0 answers requests, receives DATA and passes each block to options.write (the
//    result store's writer thread: the disk never holds up an answer), and, when nothing is
//    pending, evaluates chunks itself; while it evaluates, its OpenMP thread 0 (the thread
//    that initialised MPI: MPI_THREAD_FUNNELED) polls every kPollInterval of its points.
//  - nobody spins: a rank waiting for a message tests it and sleeps (20 us doubling to 1 ms),
//    so idle ranks leave their core to the others (issue 13 part 3).
// With --keep feasible / top-K the file's rows are appended in point order: rank 0 holds a
// block that arrives before an earlier chunk's until that one is there (at most a few
// chunks per rank). --keep top-K sends nothing during run(): each rank keeps its best K
// rows per group (sweep/best_points.hpp) and finish_keep() gathers the agreed ones.
//
// Chunk sizes are guided (OpenMP's schedule(guided) idea): chunk = clamp(remaining /
// (4 * ranks), kMinChunk, kMaxChunk), capped by what remains; large chunks early amortise
// messages and writes, small chunks at the end balance the ranks' finishing times. With
// `align` > 0 every chunk is one file chunk of `align` rows ending on a multiple of it, so
// the chunks of an analytical --keep all sweep are whole file chunks, which the evaluating
// rank stores (`store_chunks`: io/chunk_encoder.hpp, issue 35) and rank 0 only writes (4096
// points: milliseconds of analytical evaluation, a fine enough grain for the ends).
// `--chunk N` fixes every chunk at N instead.
//
// Memory per rank is bounded independently of N: one chunk of rows (at most kMaxChunk or
// the fixed size), two packed blocks, the kept rows of --keep top-K (groups x K) plus one
// scratch Workload per thread, all reused.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "rapid/common/eval_context.hpp"
#include "rapid/common/mpi_env.hpp"
#include "rapid/eval/point_evaluator.hpp"
#include "rapid/io/chunk_encoder.hpp"
#include "rapid/io/result_schema.hpp"
#include "rapid/io/row_block.hpp"
#include "rapid/sweep/best_points.hpp"
#include "rapid/sweep/enumerator.hpp"
#include "rapid/workload/workload.hpp"

namespace rapid {

inline constexpr int64_t kMinChunk = 64;
inline constexpr int64_t kMaxChunk = 8192;
inline constexpr int64_t kPollInterval = 32;  ///< rank 0's thread-0 points between polls

/// Size of the next chunk: `fixed` when > 0, else `align` when > 0, else clamp(remaining /
/// (4 * ranks), kMinChunk, kMaxChunk); never more than `remaining` (>= 0), 0 when nothing
/// remains.
int64_t next_chunk_size(int64_t remaining, int ranks, int64_t fixed, int64_t align = 0);

/// Which rows of a sweep its file keeps (`--keep`).
enum class Keep : uint8_t {
  All,       ///< every point, row i = point i (resumable)
  Feasible,  ///< the points with status ok
  TopK,      ///< the best K feasible points per (GPU count, hardware, scenario, load), and
             ///< the job's baseline point whatever its rank and status (its speedups)
};

/// One row of a sweep: point `p` evaluated with fidelity `f` into `r`, never throwing for
/// the point (PointEvaluator::evaluate_guarded). A DES row keeps the analytical model's step
/// time of the point (EvalResult::step_time_analytical_s): the evaluator's, which computes it
/// beside every simulation, or `analytical_step_s` when given (under `--fidelity auto` the
/// first pass's).
void evaluate_row(const PointEvaluator& evaluator, const Point& p, Workload& scratch, EvalResult& r,
                  Fidelity f, std::optional<double> analytical_step_s = std::nullopt) noexcept;

struct SchedulerOptions {
  int64_t fixed_chunk = 0;  ///< > 0: every chunk this size (`--chunk`); 0: guided
  bool progress = true;     ///< rank 0 prints a progress line to stderr (<= 1 per second)
  /// stderr not a terminal (a pipe under mpirun, a log file): the longest gap between
  /// progress lines; each line ends with a newline (no carriage return), and the last one,
  /// at the end, is always printed.
  double progress_interval_s = 30;
  /// `--fidelity auto`: > 0 keeps each rank's best `top_k` feasible points per (GPU count,
  /// hardware variant) during run(), for refine().
  int64_t top_k = 0;
  /// The index ranges [first, last) to evaluate (a resumed sweep's missing rows); empty:
  /// the whole space.
  std::vector<std::pair<int64_t, int64_t>> todo;
  /// refine(): true for a point whose simulated row an earlier run already wrote (a
  /// resumed `--fidelity auto` sweep); it is not simulated again. Empty: none.
  std::function<bool(int64_t index)> simulated_before;
  Keep keep = Keep::All;
  int64_t keep_k = 0;  ///< Keep::TopK: K
  int64_t align = 0;   ///< > 0: chunk boundaries on multiples of it (the file's chunks)
  /// Keep::All: the rows of whole file chunks leave the evaluating rank in their stored
  /// form (io/chunk_encoder.hpp; the table has enumerator.size() rows).
  bool store_chunks = false;
  /// Rank 0: takes each block of rows for the file (Keep::All: any order; else in point
  /// order) and each block of rows to rewrite (refine()'s simulated rows).
  std::function<void(RowBlock)> write;
  std::function<void(RowBlock)> update;
  /// Every rank, after each chunk it evaluated (a testing hook may throw there).
  std::function<void()> after_chunk;
};

/// Rows a --keep sweep saw, by status and (feasible rows) by step time: what it dropped is
/// seen minus kept. Bins: log-spaced step times, 4 per decade from 1 ms to 100,000 s.
struct RowCensus {
  static constexpr int kStatuses = 7;  ///< ok .. overloaded (eval_result.hpp Status)
  static constexpr int kBins = 32;
  static double edge(int j);  ///< bin j covers [edge(j), edge(j + 1)); j = 0 .. kBins
  std::vector<int64_t> by_status = std::vector<int64_t>(kStatuses, 0);
  std::vector<int64_t> by_step = std::vector<int64_t>(kBins, 0);
  void add(const ResultRow& row, int sign = 1);
  void subtract(const RowCensus& other);
};

/// What run() did on this rank.
struct SweepStats {
  int64_t points_evaluated = 0;  ///< by this rank
  int64_t chunks = 0;            ///< evaluated by this rank
  double wall_s = 0;             ///< time spent in run()
  double evaluate_s = 0;         ///< in the evaluation of chunks (OpenMP loops)
  double pack_s = 0;             ///< packing rows for the file
  double compress_s = 0;         ///< filtering whole file chunks (store_chunks)
  double wait_s = 0;             ///< waiting for a chunk, a send or the other ranks
  int64_t simulated_rows = 0;    ///< rows whose discrete-event simulation ran
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
            SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Collective: evaluates every point of the enumerator exactly once across all ranks and
  /// passes the rows --keep keeps to rank 0's options.write. Returns when this rank has no
  /// more work (rank 0: when every rank has finished and its rows have arrived). Throws
  /// InternalError on an MPI failure and rethrows what the evaluator or a callback throws;
  /// after a throw the other ranks may be blocked, so the caller must end the job
  /// (MpiEnv::abort()).
  SweepStats run();

  /// `--fidelity auto`, after run() on every rank (collective): agrees across ranks on the
  /// best `top_k` points (shortest analytical step time, ties by index) of each (GPU count,
  /// hardware variant) group, then evaluates them with the discrete-event simulator
  /// (round robin over the ranks, OpenMP inside) and passes each row to the sink again.
  /// Rows are written in blocks as they are done; a stop request (a signal) ends it after
  /// the current block with stats().interrupted set (every rank still returns together).
  /// Returns the number of points chosen for simulation. Throws like run().
  int64_t refine();
  /// --keep top-K, after run() (and refine()) on every rank (collective): agrees on the
  /// best K per group and passes their rows, in point order, to rank 0's options.write,
  /// with the row of the job's baseline point (Enumerator::baseline_index()) when it is not
  /// among them: every speedup in the file is over that row (README "--keep"). Returns the
  /// number of rows. Throws like run().
  int64_t finish_keep();
  /// After finish_keep(), the same on every rank: true when the baseline's row was written
  /// besides the best K (it is not among them).
  bool baseline_kept_extra() const { return baseline_extra_; }
  /// What this rank saw (every row it evaluated) and kept (--keep feasible / top-K).
  const RowCensus& seen() const { return seen_; }
  const RowCensus& kept() const { return kept_; }
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
  void handle_control(int source);
  /// Rank 0: a chunk's block (its own or a worker's), to options_.write in order.
  void deliver(int64_t chunk_first, RowBlock block);
  /// Waits for `req` without spinning (test, then sleep); counts the time as waiting.
  void quiet_wait(MPI_Request& req);
  /// The rows of rows_[from, to) the file keeps, packed with `tag` (the chunk's first
  /// index; none for Keep::TopK: kept aside).
  RowBlock pack(int64_t from, int64_t to, int64_t tag);
  /// The same into `block` (its storage reused).
  void pack_into(RowBlock& block, int64_t from, int64_t to, int64_t tag);
  void print_progress(bool final);

  const MpiEnv& mpi_;
  const Enumerator& enumerator_;
  const PointEvaluator& evaluator_;
  SchedulerOptions options_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool completed_ = false;

  /// One per OpenMP thread: its workload and every cache and buffer its evaluations keep
  /// (eval_context.hpp), installed for the thread while it evaluates, freed with the scheduler
  /// or when the evaluation is over (finish_keep()).
  std::vector<EvalContext> contexts_;
  std::vector<ResultRow> rows_;     ///< the chunk being evaluated
  std::vector<uint8_t> evaluated_;  ///< per row of rows_: 1 once evaluated
  SweepStats stats_;

  /// --fidelity auto: the best points so far per (GPU count, hardware variant, scenario).
  BestPoints best_;
  /// --keep top-K: the best rows so far per (GPU count, hardware, scenario, load).
  BestPoints keep_best_;
  /// --keep top-K: the baseline point's row, on the rank that evaluated it.
  std::optional<ResultRow> baseline_row_;
  bool baseline_extra_ = false;
  RowCensus seen_, kept_;
  std::optional<ChunkEncoder> encoder_;  ///< store_chunks
  RowBlock own_;                         ///< rank 0, store_chunks: its block's storage
  RowBlock outgoing_;                    ///< a worker's block being sent
  std::vector<std::byte> message_;       ///< its message: chunk first, then the block
  MPI_Request data_send_ = MPI_REQUEST_NULL;
  int64_t data_sent_ = 0;  ///< DATA messages a worker sent

  // Rank 0 only.
  int64_t next_ = 0;  ///< first index not yet handed out (within todo_[range_])
  std::vector<std::pair<int64_t, int64_t>> todo_;  ///< ranges to evaluate
  size_t range_ = 0;                               ///< the range next_ is in
  int64_t total_ = 0;                              ///< points in todo_
  int64_t handed_ = 0;                             ///< of which handed out
  int workers_finished_ = 0;
  std::vector<int64_t> reported_;                       ///< points each worker reported finished
  std::vector<int64_t> data_expected_, data_received_;  ///< DATA messages per worker
  std::vector<int64_t> handed_order_;    ///< chunk firsts in hand-out order (not yet written)
  size_t handed_at_ = 0;                 ///< the next of handed_order_ to write
  std::map<int64_t, RowBlock> arrived_;  ///< blocks waiting for an earlier chunk's
  MPI_Request receive_ = MPI_REQUEST_NULL;
  int64_t receive_payload_[3] = {0, 0, 0};  ///< kind, points finished, DATA messages sent
  std::chrono::steady_clock::time_point start_, last_print_;
  bool tty_ = false;
  int64_t printed_ = 0;  ///< points done at the last progress line
};

}  // namespace rapid
