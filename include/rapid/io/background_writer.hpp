// One thread that runs tasks in submission order (issue 13 part 2: the result file is
// written beside the evaluation, never by the threads evaluating or the thread answering
// MPI requests). Every HDF5 call of a store goes through it once it runs, so HDF5 (not
// built thread-safe on Debian) is never entered by two threads at once.
//
// Back-pressure: submit() blocks while the queued tasks' declared bytes exceed the limit,
// so a writer slower than the evaluation bounds the memory instead of queueing without end.
// A task that throws stops the writer: its exception is rethrown by the next submit() or
// wait() on the submitting thread, and later tasks are dropped.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace rapid {

class BackgroundWriter {
 public:
  explicit BackgroundWriter(size_t max_queued_bytes = size_t{64} << 20);
  /// Runs what is queued, then joins the thread (errors then are dropped: call wait()).
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  /// Queues `task` (holding `bytes` of data until it has run). Rethrows an earlier task's
  /// failure.
  void submit(std::function<void()> task, size_t bytes = 0);
  /// Blocks until every queued task has run; rethrows a task's failure.
  void wait();
  /// Seconds the thread spent running tasks so far.
  double busy_s() const;

 private:
  struct Item {
    std::function<void()> task;
    size_t bytes;
  };
  void loop();
  void rethrow_locked();

  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  ///< work queued, space freed, or idle
  std::deque<Item> queue_;
  size_t queued_bytes_ = 0;
  bool running_task_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  double busy_s_ = 0;
  std::thread thread_;
};

}  // namespace rapid
