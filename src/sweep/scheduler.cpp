#include "rapid/sweep/scheduler.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <numeric>
#include <thread>

#include "rapid/common/error.hpp"
#include "rapid/eval/point_evaluator.hpp"

namespace rapid {

namespace {

enum Tag : int { kTagControl = 1, kTagChunk = 2, kTagData = 3 };
enum ControlKind : int64_t { kRequest = 1, kFinished = 2 };

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
  evaluator.evaluate_guarded(p, scratch, r, f);
  // The evaluator records the closed form beside a simulation (fidelity_gap.hpp); a row the
  // simulation could not give keeps the first pass's answer when there was one.
  if (f == Fidelity::Des && analytical_step_s) r.step_time_analytical_s = *analytical_step_s;
}

int64_t next_chunk_size(int64_t remaining, int ranks, int64_t fixed, int64_t align) {
  if (remaining <= 0) return 0;
  int64_t size =
      fixed > 0 ? fixed
                : std::clamp(remaining / (4 * int64_t{std::max(ranks, 1)}), kMinChunk, kMaxChunk);
  // Aligned: one file chunk (a chunk's rows, 6 MB, and its packed block, 3.7 MB, stay in a
  // rank's share of the L3 cache: 5-8% faster than 8192 on the GPT-3 sweep, docs/production.md
  // sec 5).
  if (fixed <= 0 && align > 0) size = align;
  return std::min(size, remaining);
}

double RowCensus::edge(int j) {
  return std::pow(10.0, -3.0 + 0.25 * j);
}

void RowCensus::add(const ResultRow& row, int sign) {
  const auto s = static_cast<size_t>(row.result.status);
  if (s < by_status.size()) by_status[s] += sign;
  if (row.result.status != Status::Ok || !(row.result.step_time_s > 0)) return;
  const double j = std::floor(4.0 * (std::log10(row.result.step_time_s) + 3.0));
  by_step[static_cast<size_t>(std::clamp(j, 0.0, double{kBins - 1}))] += sign;
}

void RowCensus::subtract(const RowCensus& o) {
  for (size_t i = 0; i < by_status.size(); ++i) by_status[i] -= o.by_status[i];
  for (size_t i = 0; i < by_step.size(); ++i) by_step[i] -= o.by_step[i];
}

Scheduler::Scheduler(const MpiEnv& mpi, const Enumerator& enumerator,
                     const PointEvaluator& evaluator, SchedulerOptions options)
    : mpi_(mpi),
      enumerator_(enumerator),
      evaluator_(evaluator),
      options_(std::move(options)),
      contexts_(static_cast<size_t>(std::max(omp_get_max_threads(), 1))),
      best_(std::max<int64_t>(options_.top_k, 1), false, false),
      keep_best_(std::max<int64_t>(options_.keep_k, 1), true, true) {
  mpi_check(MPI_Comm_dup(mpi_.comm(), &comm_), "MPI_Comm_dup");
  todo_ = options_.todo.empty() ? std::vector<std::pair<int64_t, int64_t>>{{0, enumerator_.size()}}
                                : options_.todo;
  for (const auto& [a, b] : todo_) total_ += b - a;
  next_ = todo_.empty() ? 0 : todo_.front().first;
  if (mpi_.is_root()) {
    reported_.assign(static_cast<size_t>(mpi_.size()), 0);
    data_expected_.assign(static_cast<size_t>(mpi_.size()), -1);
    data_received_.assign(static_cast<size_t>(mpi_.size()), 0);
  }
  tty_ = ::isatty(STDERR_FILENO) != 0;
  if (options_.store_chunks && options_.keep == Keep::All && enumerator_.size() > 0)
    encoder_.emplace(enumerator_.size());
}

Scheduler::~Scheduler() {
  // A worker that fails with its last block's send in flight (rank 0 has not taken it):
  // the block's storage must outlive the send, which MPI may still read (freed, it sent
  // garbage or crashed the rank). It is left allocated: the job is ending in MPI_Abort.
  if (data_send_ != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Test(&data_send_, &done, MPI_STATUS_IGNORE);
    if (!done) static_cast<void>(new RowBlock(std::move(outgoing_)));  // NOLINT: on purpose
  }
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

void Scheduler::quiet_wait(MPI_Request& req) {
  const auto t0 = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(20);
  while (true) {
    int flag = 0;
    mpi_check(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    if (flag) break;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
  stats_.wait_s += seconds_since(t0);
}

Scheduler::Chunk Scheduler::take_chunk() {
  // Within the current range (chunks never span two), sized by what is left overall; none
  // once a stop was requested.
  while (range_ < todo_.size() && next_ >= todo_[range_].second)
    if (++range_ < todo_.size()) next_ = todo_[range_].first;
  if (range_ >= todo_.size() || stop_requested()) return Chunk{next_, 0};
  int64_t n =
      std::min(next_chunk_size(total_ - handed_, mpi_.size(), options_.fixed_chunk, options_.align),
               todo_[range_].second - next_);
  // Aligned: the chunk ends on the next boundary (a resumed range may start between two).
  if (options_.fixed_chunk <= 0 && options_.align > 0)
    n = std::min(n, options_.align - next_ % options_.align);
  Chunk c{next_, n};
  next_ += n;
  handed_ += n;
  if (options_.keep == Keep::Feasible) handed_order_.push_back(c.first);
  return c;
}

void Scheduler::run_coordinator() {
  const int workers = mpi_.size() - 1;
  post_receive();
  auto all_arrived = [&] {
    for (int r = 1; r <= workers; ++r)
      if (data_received_[static_cast<size_t>(r)] != data_expected_[static_cast<size_t>(r)])
        return false;
    return true;
  };
  while (true) {
    const bool handled = poll();
    if (handed_ < total_ && !stop_requested()) {
      const Chunk c = take_chunk();
      if (c.count > 0) evaluate_chunk(c, workers > 0);
      continue;
    }
    if (workers_finished_ == workers && all_arrived()) break;
    // Nothing left to hand out: answer the last requests ("no work left") and wait for the
    // workers' final reports and rows, waking up often enough to keep the progress line.
    if (!handled) {
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      stats_.wait_s += seconds_since(t0);
    }
  }
  const int64_t done = std::accumulate(reported_.begin(), reported_.end(), int64_t{0});
  stats_.interrupted = stop_requested() || done < total_;
  RAPID_ASSERT(stats_.interrupted || done == total_, "every point evaluated exactly once");
  RAPID_ASSERT(stats_.interrupted || arrived_.empty(), "every block written in order");
  print_progress(true);
}

void Scheduler::post_receive() {
  if (workers_finished_ == mpi_.size() - 1) {
    receive_ = MPI_REQUEST_NULL;
    return;
  }
  mpi_check(
      MPI_Irecv(receive_payload_, 3, MPI_INT64_T, MPI_ANY_SOURCE, kTagControl, comm_, &receive_),
      "MPI_Irecv");
}

bool Scheduler::poll() {
  bool handled = false;
  while (receive_ != MPI_REQUEST_NULL) {
    int flag = 0;
    MPI_Status st;
    mpi_check(MPI_Test(&receive_, &flag, &st), "MPI_Test");
    if (!flag) break;
    handle_control(st.MPI_SOURCE);
    post_receive();
    handled = true;
  }
  // Rows from the workers.
  while (mpi_.size() > 1) {
    int flag = 0;
    MPI_Status st;
    mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, kTagData, comm_, &flag, &st), "MPI_Iprobe");
    if (!flag) break;
    int bytes = 0;
    mpi_check(MPI_Get_count(&st, MPI_BYTE, &bytes), "MPI_Get_count");
    ByteBuffer msg(static_cast<size_t>(bytes));
    mpi_check(
        MPI_Recv(msg.data(), bytes, MPI_BYTE, st.MPI_SOURCE, kTagData, comm_, MPI_STATUS_IGNORE),
        "MPI_Recv");
    RowBlock block(std::move(msg));
    const int64_t first = block.tag();
    ++data_received_[static_cast<size_t>(st.MPI_SOURCE)];
    deliver(first, std::move(block));
    handled = true;
  }
  print_progress(false);
  return handled;
}

void Scheduler::handle_control(int source) {
  RAPID_ASSERT(source > 0 && source < mpi_.size(), "message from a worker");
  const int64_t kind = receive_payload_[0];
  reported_[static_cast<size_t>(source)] = receive_payload_[1];
  if (kind == kFinished) {
    data_expected_[static_cast<size_t>(source)] = receive_payload_[2];
    ++workers_finished_;
    return;
  }
  RAPID_ASSERT(kind == kRequest, "a request or a final report");
  const Chunk c = take_chunk();
  const int64_t msg[2] = {c.first, c.count};
  // The worker posted its receive before sending the request: this send completes at once.
  mpi_check(MPI_Send(msg, 2, MPI_INT64_T, source, kTagChunk, comm_), "MPI_Send");
}

void Scheduler::deliver(int64_t chunk_first, RowBlock block) {
  if (options_.keep != Keep::Feasible) {
    if (!block.empty() && options_.write) options_.write(std::move(block));
    return;
  }
  // In point order: hold a block until every chunk handed out before it is written.
  arrived_.emplace(chunk_first, std::move(block));
  while (handed_at_ < handed_order_.size()) {
    const auto it = arrived_.find(handed_order_[handed_at_]);
    if (it == arrived_.end()) break;
    if (!it->second.empty() && options_.write) options_.write(std::move(it->second));
    arrived_.erase(it);
    ++handed_at_;
  }
}

void Scheduler::run_worker() {
  int64_t current[2] = {0, 0};
  int64_t next[2] = {0, 0};
  int64_t finished = 0;
  int64_t request[3] = {kRequest, 0, 0};
  MPI_Request recv_req = MPI_REQUEST_NULL;
  MPI_Request send_req = MPI_REQUEST_NULL;

  mpi_check(MPI_Irecv(current, 2, MPI_INT64_T, 0, kTagChunk, comm_, &recv_req), "MPI_Irecv");
  mpi_check(MPI_Send(request, 3, MPI_INT64_T, 0, kTagControl, comm_), "MPI_Send");
  quiet_wait(recv_req);
  while (current[1] > 0 && !stop_requested()) {
    // Prefetch: ask for the next chunk before evaluating this one.
    request[1] = finished;
    mpi_check(MPI_Irecv(next, 2, MPI_INT64_T, 0, kTagChunk, comm_, &recv_req), "MPI_Irecv");
    mpi_check(MPI_Isend(request, 3, MPI_INT64_T, 0, kTagControl, comm_, &send_req), "MPI_Isend");
    try {
      finished += evaluate_chunk(Chunk{current[0], current[1]}, false);
    } catch (...) {
      // `next` and `request` live on this frame: MPI must be done with them before the
      // failure unwinds it (rank 0 answering into a dead frame corrupted the stack).
      MPI_Cancel(&recv_req);
      MPI_Wait(&recv_req, MPI_STATUS_IGNORE);
      MPI_Wait(&send_req, MPI_STATUS_IGNORE);
      throw;
    }
    quiet_wait(send_req);
    quiet_wait(recv_req);
    current[0] = next[0];
    current[1] = next[1];
  }
  quiet_wait(data_send_);
  // A prefetched chunk left unevaluated after a stop stays missing (the done mask says so).
  stats_.interrupted = stop_requested();
  const int64_t last[3] = {kFinished, finished, data_sent_};
  mpi_check(MPI_Send(last, 3, MPI_INT64_T, 0, kTagControl, comm_), "MPI_Send");
}
void Scheduler::evaluate_rows(int64_t count, const std::function<int64_t(int64_t)>& index_of,
                              Fidelity fidelity, int grain, bool poll_while_evaluating,
                              const std::function<double(int64_t)>& analytical_step) {
  if (rows_.size() < static_cast<size_t>(count)) rows_.resize(static_cast<size_t>(count));
  evaluated_.assign(static_cast<size_t>(count), 0);
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  int64_t since_poll = 0;  // touched by thread 0 only

  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    EvalContext& context = contexts_[static_cast<size_t>(t)];
    const EvalContext::Scope scope(context);
    Workload& scratch = context.get<Workload>();
#pragma omp for schedule(dynamic, grain)
    for (int64_t k = 0; k < count; ++k) {
      if (failed.load(std::memory_order_relaxed)) continue;
      // A stop request skips the rest of the rows (within one point's time, not a chunk's:
      // mpirun kills its ranks 1 s after its own SIGTERM); the rows done are kept.
      if (stop_requested()) continue;
      try {
        if (poll_while_evaluating && t == 0 && ++since_poll >= kPollInterval) {
          since_poll = 0;
          poll();
        }
        ResultRow& row = rows_[static_cast<size_t>(k)];
        row.point = enumerator_.decode(index_of(k));
        evaluate_row(evaluator_, row.point, scratch, row.result, fidelity,
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
  }
  stats_.evaluate_s += seconds_since(t0);
  if (error) std::rethrow_exception(error);
}

RowBlock Scheduler::pack(int64_t from, int64_t to, int64_t tag) {
  RowBlock block;
  pack_into(block, from, to, tag);
  return block;
}

void Scheduler::pack_into(RowBlock& block, int64_t from, int64_t to, int64_t tag) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::span<const ResultRow> rows(rows_.data() + from, static_cast<size_t>(to - from));
  for (const ResultRow& r : rows) {
    if (r.result.simulated_replicas > 0) ++stats_.simulated_rows;
    if (options_.keep != Keep::All) seen_.add(r);
    if (options_.top_k > 0 && r.result.status == Status::Ok)
      best_.consider(r.point, r.result.step_time_s, r.point.index);
    if (options_.keep == Keep::TopK && r.result.status == Status::Ok)
      keep_best_.consider(r.point, r.result.step_time_s, r.point.index, &r);
    if (options_.keep == Keep::TopK && r.point.index == enumerator_.baseline_index())
      baseline_row_ = r;
  }
  if (options_.keep == Keep::All) block.pack(rows, {}, tag);
  if (options_.keep == Keep::Feasible) {
    block.pack(
        rows, [](const ResultRow& r) { return r.result.status == Status::Ok; }, tag);
    for (const ResultRow& r : rows)
      if (r.result.status == Status::Ok) kept_.add(r);
  }
  stats_.pack_s += seconds_since(t0);
}

int64_t Scheduler::evaluate_chunk(const Chunk& c, bool poll_while_evaluating) {
  RAPID_ASSERT(c.count > 0 && c.first + c.count <= enumerator_.size(), "chunk inside [0, N)");
  evaluate_rows(
      c.count, [&](int64_t k) { return c.first + k; },
      evaluator_.fidelity() == Fidelity::Des ? Fidelity::Des : Fidelity::Analytical, 16,
      poll_while_evaluating);
  // Every run of evaluated rows (the whole chunk unless a stop request cut it short),
  // tagged with the chunk (also when nothing is kept: rank 0 orders the blocks by it).
  RowBlock block;
  if (!mpi_.is_root() && options_.keep != Keep::TopK) {
    // The previous block's send is long done (a chunk's evaluation ago): its storage holds
    // this one (no allocation, no page faults, no zero-fill per chunk).
    quiet_wait(data_send_);
    block = std::move(outgoing_);
  } else if (encoder_) {
    block = std::move(own_);  // rank 0: the storage of its previous block (below)
  }
  block.pack({}, {}, c.first);
  int64_t written = 0;
  for (int64_t a = 0; a < c.count;) {
    if (!evaluated_[static_cast<size_t>(a)]) {
      ++a;
      continue;
    }
    int64_t b = a;
    while (b < c.count && evaluated_[static_cast<size_t>(b)]) ++b;
    if (block.empty())
      pack_into(block, a, b, c.first);
    else
      block.append(pack(a, b, c.first));
    written += b - a;
    a = b;
  }
  if (encoder_) {
    const auto t1 = std::chrono::steady_clock::now();
    encoder_->encode(block);
    stats_.compress_s += seconds_since(t1);
  }
  if (mpi_.is_root() && encoder_ && block.count() == 0) {
    // Stored chunks only: a copy of their few bytes goes to the writer, the chunk-sized
    // storage stays for rank 0's next chunk.
    RowBlock stored{ByteBuffer(block.bytes())};
    own_ = std::move(block);
    deliver(c.first, std::move(stored));
  } else if (mpi_.is_root()) {
    deliver(c.first, std::move(block));
  } else if (options_.keep != Keep::TopK) {
    // The previous block's send is long done (a chunk's evaluation ago): then this one.
    quiet_wait(data_send_);
    outgoing_ = std::move(block);
    const ByteBuffer& bytes = outgoing_.bytes();
    mpi_check(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTagData, comm_,
                        &data_send_),
              "MPI_Isend");
    ++data_sent_;
  }
  stats_.points_evaluated += written;
  stats_.chunks += 1;
  if (mpi_.is_root()) reported_[0] += written;
  if (options_.after_chunk) options_.after_chunk();
  return written;
}

void Scheduler::print_progress(bool final) {
  if (!options_.progress || total_ == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const int64_t total = total_;
  const int64_t done = std::accumulate(reported_.begin(), reported_.end(), int64_t{0});
  // A terminal gets the line once a second; a log file or a pipe (Slurm's, CI's, mpirun's)
  // every progress_interval_s (30 s), or sooner after each 5% of the points but never
  // twice within 2 s (or the interval when shorter: a sweep of a second writes one line,
  // not twenty), and no final line repeating the last one.
  if (!final) {
    const std::chrono::duration<double> since = now - last_print_;
    const double interval = options_.progress_interval_s;
    if (tty_ && since < std::chrono::seconds(1)) return;
    if (!tty_ && since.count() < interval &&
        (20 * (done - printed_) < total || since.count() < std::min(2.0, interval)))
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
                  format_duration(elapsed),
                  !final          ? format_duration(eta)
                  : done == total ? "0.0s"
                                  : "none (stopped)");
  // On a terminal the line is redrawn in place; in a log file each update is its own line.
  if (tty_)
    std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), final ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace rapid

namespace rapid {

void Scheduler::consider(const Point& p, Status status, double step_time_s, int64_t index) {
  if (status == Status::Ok) best_.consider(p, step_time_s, index);
}

namespace {

// Collective over `comm`: every rank's block at rank 0 (the others get an empty one).
std::vector<RowBlock> gather_blocks(MPI_Comm comm, int rank, int ranks, const RowBlock& mine) {
  const ByteBuffer& bytes = mine.bytes();
  const auto size = static_cast<int>(bytes.size());
  std::vector<int> sizes(static_cast<size_t>(ranks), 0), offsets(static_cast<size_t>(ranks), 0);
  mpi_check(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  for (int r = 1; r < ranks; ++r)
    offsets[static_cast<size_t>(r)] =
        offsets[static_cast<size_t>(r) - 1] + sizes[static_cast<size_t>(r) - 1];
  std::vector<std::byte> all(rank == 0 ? static_cast<size_t>(offsets.back() + sizes.back()) : 0);
  mpi_check(MPI_Gatherv(bytes.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                        MPI_BYTE, 0, comm),
            "MPI_Gatherv");
  std::vector<RowBlock> out;
  if (rank != 0) return out;
  for (int r = 0; r < ranks; ++r) {
    const auto at = static_cast<size_t>(offsets[static_cast<size_t>(r)]);
    const auto n = static_cast<size_t>(sizes[static_cast<size_t>(r)]);
    if (n > 0)
      out.emplace_back(ByteBuffer(all.begin() + static_cast<std::ptrdiff_t>(at),
                                  all.begin() + static_cast<std::ptrdiff_t>(at + n)));
  }
  return out;
}

// The blocks' rows in one block, in point order.
RowBlock merge_in_order(const std::vector<RowBlock>& blocks) {
  RowBlock all;
  for (const RowBlock& b : blocks) all.append(b);
  std::vector<size_t> order(static_cast<size_t>(all.count()));
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return all.index(a) < all.index(b); });
  return all.select(order);
}

}  // namespace

int64_t Scheduler::refine() {
  const std::vector<std::pair<int64_t, double>> chosen = best_.agree(comm_);
  const int ranks = mpi_.size();
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
  // In blocks of a few points per thread; a stop request (a signal) ends it after the
  // current block, and the rows simulated so far still go to the file.
  const auto block = static_cast<size_t>(4 * std::max(omp_get_max_threads(), 1));
  RowBlock simulated;
  for (size_t b = 0; b < here.size() && !stop_requested(); b += block) {
    const size_t n = std::min(block, here.size() - b);
    evaluate_rows(
        static_cast<int64_t>(n), [&](int64_t k) { return here[b + static_cast<size_t>(k)].first; },
        Fidelity::Des, 1, false,
        [&](int64_t k) { return here[b + static_cast<size_t>(k)].second; });
    RowBlock done;
    done.pack(std::span<const ResultRow>(rows_.data(), n));
    std::vector<size_t> take;
    for (size_t j = 0; j < n; ++j)
      if (evaluated_[j]) take.push_back(j);
    simulated.append(done.select(take));
  }
  stats_.interrupted = stop_requested();
  const std::vector<RowBlock> blocks = gather_blocks(comm_, mpi_.rank(), ranks, simulated);
  if (mpi_.is_root() && options_.update) {
    RowBlock all = merge_in_order(blocks);
    if (!all.empty()) options_.update(std::move(all));
  }
  mpi_check(MPI_Barrier(comm_), "MPI_Barrier");
  return static_cast<int64_t>(chosen.size());
}

int64_t Scheduler::finish_keep() {
  RAPID_ASSERT(options_.keep == Keep::TopK, "--keep top-K");
  // The evaluation is over: its per-thread caches go before the kept rows are gathered.
  for (EvalContext& c : contexts_) c.clear();
  const std::vector<std::pair<int64_t, double>> chosen = keep_best_.agree(comm_);
  RowBlock mine;
  std::vector<const ResultRow*> rows = keep_best_.rows_in(chosen);
  // The baseline's row besides the best K (whatever its status: an oom baseline says why
  // there is no speedup), from the rank that evaluated it, in point order with the others.
  const int64_t base = enumerator_.baseline_index();
  baseline_extra_ =
      base >= 0 &&
      !std::binary_search(chosen.begin(), chosen.end(), std::pair<int64_t, double>{base, 0.0},
                          [](const auto& a, const auto& b) { return a.first < b.first; });
  if (baseline_extra_ && baseline_row_) {
    const auto at =
        std::lower_bound(rows.begin(), rows.end(), base,
                         [](const ResultRow* r, int64_t index) { return r->point.index < index; });
    rows.insert(at, &*baseline_row_);
  }
  for (const ResultRow* r : rows) kept_.add(*r);
  mine.pack(rows);
  const std::vector<RowBlock> blocks = gather_blocks(comm_, mpi_.rank(), mpi_.size(), mine);
  if (mpi_.is_root() && options_.write) {
    RowBlock all = merge_in_order(blocks);
    if (!all.empty()) options_.write(std::move(all));
  }
  return static_cast<int64_t>(chosen.size()) + (baseline_extra_ ? 1 : 0);
}

}  // namespace rapid
