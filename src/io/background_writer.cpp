#include "rapid/io/background_writer.hpp"

#include <chrono>

namespace rapid {

BackgroundWriter::BackgroundWriter(size_t max_queued_bytes)
    : max_bytes_(max_queued_bytes), thread_([this] { loop(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundWriter::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

void BackgroundWriter::submit(std::function<void()> task, size_t bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  // A task larger than the limit still goes, once the queue is empty.
  cv_.wait(lock, [&] { return error_ || queue_.empty() || queued_bytes_ + bytes <= max_bytes_; });
  rethrow_locked();
  queue_.push_back({std::move(task), bytes});
  queued_bytes_ += bytes;
  lock.unlock();
  cv_.notify_all();
}

void BackgroundWriter::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return error_ || (queue_.empty() && !running_task_); });
  rethrow_locked();
}

double BackgroundWriter::busy_s() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_s_;
}

void BackgroundWriter::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with nothing left
    Item item = std::move(queue_.front());
    queue_.pop_front();
    running_task_ = true;
    lock.unlock();
    const auto t0 = std::chrono::steady_clock::now();
    std::exception_ptr failed;
    if (!error_) {  // after a failure the rest is dropped (read under no lock: set below)
      try {
        item.task();
      } catch (...) {
        failed = std::current_exception();
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    item.task = nullptr;  // its data freed before the space is
    lock.lock();
    busy_s_ += s;
    if (failed && !error_) error_ = failed;
    queued_bytes_ -= item.bytes;
    running_task_ = false;
    cv_.notify_all();
  }
}

}  // namespace rapid
