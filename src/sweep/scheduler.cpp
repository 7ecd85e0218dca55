#include "rapid/sweep/scheduler.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <numeric>
#include <thread>

#include "rapid/common/error.hpp"

namespace rapid {

namespace {

enum Tag : int { kTagRequest = 1, kTagChunk = 2, kTagFinished = 3 };

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string format_duration(double s) {
  if (!(s >= 0) || s > 1e8) return "?";
  if (s < 60) return fmt::format("{:.1f}s", s);
  const auto total = static_cast<int64_t>(s + 0.5);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

}  // namespace

namespace {
std::atomic<bool> g_stop{false};
}  // namespace

void request_stop() noexcept {
  g_stop.store(true, std::memory_order_relaxed);
}

bool stop_requested() noexcept {
  return g_stop.load(std::memory_order_relaxed);
}

void evaluate_row(const PointEvaluator& evaluator, const Point& p, Workload& scratch, EvalResult& r,
                  Fidelity f, std::optional<double> analytical_step_s) noexcept {
  // The closed form beside a simulation costs microseconds.
  if (f == Fidelity::Des && !analytical_step_s) {
    evaluator.evaluate_guarded(p, scratch, r, Fidelity::Analytical);
    analytical_step_s = r.step_time_s;
  }
  evaluator.evaluate_guarded(p, scratch, r, f);
  if (f == Fidelity::Des) r.step_time_analytical_s = *analytical_step_s;
}

int64_t next_chunk_size(int64_t remaining, int ranks, int64_t fixed) {
  if (remaining <= 0) return 0;
  const int64_t size =
      fixed > 0 ? fixed
                : std::clamp(remaining / (4 * int64_t{std::max(ranks, 1)}), kMinChunk, kMaxChunk);
  return std::min(size, remaining);
}

Scheduler::Scheduler(const MpiEnv& mpi, const Enumerator& enumerator,
                     const PointEvaluator& evaluator, ChunkSink sink, SchedulerOptions options)
    : mpi_(mpi),
      enumerator_(enumerator),
      evaluator_(evaluator),
      sink_(std::move(sink)),
      options_(options),
      scratch_(static_cast<size_t>(std::max(omp_get_max_threads(), 1))) {
  mpi_check(MPI_Comm_dup(mpi_.comm(), &comm_), "MPI_Comm_dup");
  todo_ = options_.todo.empty() ? std::vector<std::pair<int64_t, int64_t>>{{0, enumerator_.size()}}
                                : options_.todo;
  for (const auto& [a, b] : todo_) total_ += b - a;
  next_ = todo_.empty() ? 0 : todo_.front().first;
  if (mpi_.is_root()) reported_.assign(static_cast<size_t>(mpi_.size()), 0);
  tty_ = ::isatty(STDERR_FILENO) != 0;
}

Scheduler::~Scheduler() {
  // MPI_Comm_free is collective: only after a run every rank completed (after a failure the
  // job is aborted and MPI cleans up).
  if (completed_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

SweepStats Scheduler::run() {
  start_ = last_print_ = std::chrono::steady_clock::now();
  if (mpi_.is_root())
    run_coordinator();
  else
    run_worker();
  stats_.wall_s = seconds_since(start_);
  completed_ = true;
  return stats_;
}

Scheduler::Chunk Scheduler::take_chunk() {
  // Within the current range (chunks never span two), sized by what is left overall; none
  // once a stop was requested.
  while (range_ < todo_.size() && next_ >= todo_[range_].second)
    if (++range_ < todo_.size()) next_ = todo_[range_].first;
  if (range_ >= todo_.size() || stop_requested()) return Chunk{next_, 0};
  const int64_t n = std::min(next_chunk_size(total_ - handed_, mpi_.size(), options_.fixed_chunk),
                             todo_[range_].second - next_);
  Chunk c{next_, n};
  next_ += n;
  handed_ += n;
  return c;
}

void Scheduler::run_coordinator() {
  const int workers = mpi_.size() - 1;
  post_receive();
  while (true) {
    const bool handled = poll();
    if (handed_ < total_ && !stop_requested()) {
      const Chunk c = take_chunk();
      if (c.count > 0) evaluate_chunk(c, workers > 0);
      continue;
    }
    if (workers_finished_ == workers) break;
    // Nothing left to hand out: answer the last requests ("no work left") and wait for the
    // workers' final reports, waking up often enough to keep the progress line alive.
    if (!handled) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const int64_t done = std::accumulate(reported_.begin(), reported_.end(), int64_t{0});
  stats_.interrupted = stop_requested() || done < total_;
  RAPID_ASSERT(stats_.interrupted || done == total_, "every point evaluated exactly once");
  print_progress(true);
}

void Scheduler::post_receive() {
  if (workers_finished_ == mpi_.size() - 1) {
    receive_ = MPI_REQUEST_NULL;
    return;
  }
  mpi_check(
      MPI_Irecv(&receive_payload_, 1, MPI_INT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &receive_),
      "MPI_Irecv");
}

bool Scheduler::poll() {
  bool handled = false;
  while (receive_ != MPI_REQUEST_NULL) {
    int flag = 0;
    MPI_Status st;
    mpi_check(MPI_Test(&receive_, &flag, &st), "MPI_Test");
    if (!flag) break;
    handle_message(st.MPI_SOURCE, st.MPI_TAG, receive_payload_);
    post_receive();
    handled = true;
  }
  print_progress(false);
  return handled;
}

void Scheduler::handle_message(int source, int tag, int64_t payload) {
  RAPID_ASSERT(source > 0 && source < mpi_.size(), "message from a worker");
  reported_[static_cast<size_t>(source)] = payload;
  if (tag == kTagFinished) {
    ++workers_finished_;
    return;
  }
  RAPID_ASSERT(tag == kTagRequest, "a request or a final report");
  const Chunk c = take_chunk();
  const int64_t msg[2] = {c.first, c.count};
  // The worker posted its receive before sending the request: this send completes at once.
  mpi_check(MPI_Send(msg, 2, MPI_INT64_T, source, kTagChunk, comm_), "MPI_Send");
}

void Scheduler::run_worker() {
  int64_t current[2] = {0, 0};
  int64_t next[2] = {0, 0};
  int64_t finished = 0;
  int64_t request_payload = 0;
  MPI_Request recv_req = MPI_REQUEST_NULL;
  MPI_Request send_req = MPI_REQUEST_NULL;

  mpi_check(MPI_Irecv(current, 2, MPI_INT64_T, 0, kTagChunk, comm_, &recv_req), "MPI_Irecv");
  mpi_check(MPI_Send(&request_payload, 1, MPI_INT64_T, 0, kTagRequest, comm_), "MPI_Send");
  mpi_check(MPI_Wait(&recv_req, MPI_STATUS_IGNORE), "MPI_Wait");
  while (current[1] > 0 && !stop_requested()) {
    // Prefetch: ask for the next chunk before evaluating this one.
    request_payload = finished;
    mpi_check(MPI_Irecv(next, 2, MPI_INT64_T, 0, kTagChunk, comm_, &recv_req), "MPI_Irecv");
    mpi_check(MPI_Isend(&request_payload, 1, MPI_INT64_T, 0, kTagRequest, comm_, &send_req),
              "MPI_Isend");
    finished += evaluate_chunk(Chunk{current[0], current[1]}, false);
    mpi_check(MPI_Wait(&send_req, MPI_STATUS_IGNORE), "MPI_Wait");
    mpi_check(MPI_Wait(&recv_req, MPI_STATUS_IGNORE), "MPI_Wait");
    current[0] = next[0];
    current[1] = next[1];
  }
  // A prefetched chunk left unevaluated after a stop stays missing (the done mask says so).
  stats_.interrupted = stop_requested();
  mpi_check(MPI_Send(&finished, 1, MPI_INT64_T, 0, kTagFinished, comm_), "MPI_Send");
}

void Scheduler::evaluate_rows(int64_t count, const std::function<int64_t(int64_t)>& index_of,
                              Fidelity fidelity, int grain, bool poll_while_evaluating,
                              const std::function<double(int64_t)>& analytical_step) {
  if (rows_.size() < static_cast<size_t>(count)) rows_.resize(static_cast<size_t>(count));
  evaluated_.assign(static_cast<size_t>(count), 0);
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  int64_t since_poll = 0;  // touched by thread 0 only

#pragma omp parallel for schedule(dynamic, grain)
  for (int64_t k = 0; k < count; ++k) {
    if (failed.load(std::memory_order_relaxed)) continue;
    // A stop request skips the rest of the rows (within one point's time, not a chunk's:
    // mpirun kills its ranks 1 s after its own SIGTERM); the rows done are kept.
    if (stop_requested()) continue;
    const int t = omp_get_thread_num();
    try {
      if (poll_while_evaluating && t == 0 && ++since_poll >= kPollInterval) {
        since_poll = 0;
        poll();
      }
      ResultRow& row = rows_[static_cast<size_t>(k)];
      row.point = enumerator_.decode(index_of(k));
      evaluate_row(evaluator_, row.point, scratch_[static_cast<size_t>(t)], row.result, fidelity,
                   analytical_step ? std::optional<double>(analytical_step(k)) : std::nullopt);
      evaluated_[static_cast<size_t>(k)] = 1;
    } catch (...) {
#pragma omp critical(rapid_scheduler_error)
      {
        if (!error) error = std::current_exception();
      }
      failed.store(true, std::memory_order_relaxed);
    }
  }
  if (error) std::rethrow_exception(error);
}

int64_t Scheduler::evaluate_chunk(const Chunk& c, bool poll_while_evaluating) {
  RAPID_ASSERT(c.count > 0 && c.first + c.count <= enumerator_.size(), "chunk inside [0, N)");
  evaluate_rows(
      c.count, [&](int64_t k) { return c.first + k; },
      evaluator_.fidelity() == Fidelity::Des ? Fidelity::Des : Fidelity::Analytical, 16,
      poll_while_evaluating);
  // Every run of evaluated rows (the whole chunk unless a stop request cut it short).
  int64_t written = 0;
  for (int64_t a = 0; a < c.count;) {
    if (!evaluated_[static_cast<size_t>(a)]) {
      ++a;
      continue;
    }
    int64_t b = a;
    while (b < c.count && evaluated_[static_cast<size_t>(b)]) ++b;
    if (options_.top_k > 0) keep_best(c.first, a, b);
    sink_(c.first + a, std::span<const ResultRow>(rows_.data() + a, static_cast<size_t>(b - a)));
    written += b - a;
    a = b;
  }
  stats_.points_evaluated += written;
  stats_.chunks += 1;
  if (mpi_.is_root()) reported_[0] += written;
  return written;
}

void Scheduler::print_progress(bool final) {
  if (!options_.progress || total_ == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const int64_t total = total_;
  const int64_t done = std::accumulate(reported_.begin(), reported_.end(), int64_t{0});
  // A terminal gets the line once a second; a log file (Slurm's, CI's) every 30 s, or
  // sooner after each 5% of the points but never twice within 2 s (a sweep of a second
  // writes one line, not twenty), and no final line repeating the last one.
  if (!final) {
    if (tty_ && now - last_print_ < std::chrono::seconds(1)) return;
    if (!tty_ && now - last_print_ < std::chrono::seconds(30) &&
        (20 * (done - printed_) < total || now - last_print_ < std::chrono::seconds(2)))
      return;
  } else if (!tty_ && printed_ == done) {
    return;
  }
  last_print_ = now;
  printed_ = done;
  const double elapsed = seconds_since(start_);
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : -1.0;
  const std::string line =
      fmt::format("rapid-sweep: {}/{} points ({:.1f}%), {:.0f} points/s, elapsed {}, ETA {}", done,
                  total, 100.0 * static_cast<double>(done) / static_cast<double>(total), rate,
                  format_duration(elapsed), final ? "0.0s" : format_duration(eta));
  // On a terminal the line is redrawn in place; in a log file each update is its own line.
  if (tty_)
    std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), final ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace rapid

namespace rapid {

void Scheduler::keep_best(int64_t first, int64_t from, int64_t to) {
  for (int64_t j = from; j < to; ++j) {
    const ResultRow& row = rows_[static_cast<size_t>(j)];
    consider(row.point, row.result.status, row.result.step_time_s, first + j);
  }
}

void Scheduler::consider(const Point& p, Status status, double step_time_s, int64_t index) {
  if (status != Status::Ok) return;
  const auto k = static_cast<size_t>(options_.top_k);
  auto& list = best_[{p.par.num_gpus(), p.hardware, p.scenario}];
  const std::pair<double, int64_t> c{step_time_s, index};
  if (list.size() == k && !(c < list.back())) return;
  list.insert(std::upper_bound(list.begin(), list.end(), c), c);
  if (list.size() > k) list.pop_back();
}

int64_t Scheduler::refine() {
  // Every rank's candidates as (gpus, hardware, scenario, index, step time), gathered on all
  // ranks.
  constexpr size_t kFields = 5;
  std::vector<double> mine;
  for (const auto& [group, list] : best_)
    for (const auto& [step, index] : list)
      mine.insert(mine.end(),
                  {static_cast<double>(std::get<0>(group)), static_cast<double>(std::get<1>(group)),
                   static_cast<double>(std::get<2>(group)), static_cast<double>(index), step});
  const int ranks = mpi_.size();
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks), 0);
  mpi_check(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  for (int r = 1; r < ranks; ++r)
    offsets[static_cast<size_t>(r)] =
        offsets[static_cast<size_t>(r) - 1] + counts[static_cast<size_t>(r) - 1];
  std::vector<double> all(static_cast<size_t>(offsets.back() + counts.back()));
  mpi_check(MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                           offsets.data(), MPI_DOUBLE, comm_),
            "MPI_Allgatherv");
  // The global best K per group: the same list on every rank.
  std::map<std::tuple<int64_t, int32_t, int32_t>, std::vector<std::pair<double, int64_t>>> best;
  for (size_t i = 0; i + kFields - 1 < all.size(); i += kFields)
    best[{static_cast<int64_t>(all[i]), static_cast<int32_t>(all[i + 1]),
          static_cast<int32_t>(all[i + 2])}]
        .push_back({all[i + 4], static_cast<int64_t>(all[i + 3])});
  std::vector<std::pair<int64_t, double>> chosen;  // (index, analytical step time)
  for (auto& [group, list] : best) {
    std::sort(list.begin(), list.end());
    for (size_t j = 0; j < list.size() && j < static_cast<size_t>(options_.top_k); ++j)
      chosen.push_back({list[j].second, list[j].first});
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<std::pair<int64_t, double>> here;
  for (size_t j = static_cast<size_t>(mpi_.rank()); j < chosen.size();
       j += static_cast<size_t>(ranks))
    if (!options_.simulated_before || !options_.simulated_before(chosen[j].first))
      here.push_back(chosen[j]);
  if (mpi_.is_root() && options_.progress)
    std::fprintf(stderr,
                 "rapid-sweep: discrete-event simulation of %zu points (the best %lld per GPU "
                 "count, hardware and scenario)\n",
                 chosen.size(), static_cast<long long>(options_.top_k));
  // In blocks of a few points per thread, each block's rows written when it is done: a
  // sweep stopped (a signal) or killed here keeps the simulations finished so far.
  const auto block = static_cast<size_t>(4 * std::max(omp_get_max_threads(), 1));
  for (size_t b = 0; b < here.size() && !stop_requested(); b += block) {
    const size_t n = std::min(block, here.size() - b);
    evaluate_rows(
        static_cast<int64_t>(n), [&](int64_t k) { return here[b + static_cast<size_t>(k)].first; },
        Fidelity::Des, 1, false,
        [&](int64_t k) { return here[b + static_cast<size_t>(k)].second; });
    for (size_t j = 0; j < n; ++j)
      if (evaluated_[j]) sink_(here[b + j].first, std::span<const ResultRow>(&rows_[j], 1));
  }
  stats_.interrupted = stop_requested();
  mpi_check(MPI_Barrier(comm_), "MPI_Barrier");
  return static_cast<int64_t>(chosen.size());
}

}  // namespace rapid
