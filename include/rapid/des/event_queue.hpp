// The discrete-event simulator's clock and future-event set (docs/des.md "Event engine").
//
// Simulated time is an integer number of picoseconds (SimTime). Integers make time sums
// associative, so a block of ops coalesced into one event ends at exactly the picosecond
// the op-by-op simulation reaches, and two events computed along different paths tie
// exactly instead of differing in the last bit of a double; 2^63 ps is 106 days, far
// beyond one training step. Rates and byte counts stay doubles.
//
// The future-event set is a min-heap ordered by (time, sequence number): events at
// the same picosecond run in the order they were scheduled, so a run is deterministic (the
// same input gives the same output, bit for bit, whatever thread evaluates it).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace rapid::des {

/// Simulated time in picoseconds.
using SimTime = int64_t;
inline constexpr SimTime kNever = std::numeric_limits<SimTime>::max();
inline constexpr double kPsPerSecond = 1e12;

/// Seconds -> picoseconds, rounded to the nearest (durations of ops and latencies).
inline SimTime to_ps(double seconds) {
  return static_cast<SimTime>(std::llround(seconds * kPsPerSecond));
}
/// Seconds -> picoseconds, rounded up (a transfer is done once its last byte is).
inline SimTime to_ps_ceil(double seconds) {
  return static_cast<SimTime>(std::ceil(seconds * kPsPerSecond));
}
inline double to_seconds(SimTime t) {
  return static_cast<double>(t) / kPsPerSecond;
}

/// One scheduled event. `kind` and `target` are the simulator's (which handler, which
/// entity); `data` carries a version or an index.
struct Event {
  SimTime time = 0;
  uint64_t seq = 0;
  uint32_t kind = 0;
  int32_t target = 0;
  uint64_t data = 0;
};

/// Binary min-heap of events by (time, seq). push/pop are O(log n); no allocation once the
/// vector has grown to the largest number of pending events (clear() keeps capacity).
class EventQueue {
 public:
  void clear() {
    heap_.clear();
    next_seq_ = 0;
  }
  /// Schedules an event; `time` must not be earlier than the last popped event's time
  /// (checked by the simulator, not here).
  void push(SimTime time, uint32_t kind, int32_t target, uint64_t data = 0);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  /// The pending events, in heap order.
  std::span<const Event> pending() const { return heap_; }
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop();
  /// Events scheduled since the last clear().
  uint64_t scheduled() const { return next_seq_; }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace rapid::des
