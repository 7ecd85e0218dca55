// A stage's DP/ZeRO traffic in the simulator (docs/des.md sec 2): its ops in program order on
// two NCCL streams, as Megatron-Core and PyTorch FSDP issue them: gradient reductions on one,
// parameter all-gathers on the other (prefetched gathers do not queue behind reductions;
// concurrent ones share the links). An op starts when every simulated replica of the stage
// posted it and the ops before it on its lane are done. The stream owns that order and what it
// ran when; the simulator starts the ops it hands out and wakes the instances waiting for one.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "rapid/des/event_queue.hpp"

namespace rapid::des {

/// One NCCL stream of a stage's DP traffic: its ops in order, one at a time.
struct DpLane {
  std::vector<int32_t> ops;  ///< indices into the stage's DP ops
  int32_t next = 0;
  bool busy = false;
};

struct DpStream {
  std::array<DpLane, 2> lanes;  ///< [0] reductions, [1] gathers
  int32_t needed = 1;           ///< posts per op (replicas of the stage simulated)
  std::vector<int32_t> desc, posts, lane;
  std::vector<SimTime> done;
  SimTime busy_ps = 0;
  std::vector<SimTime> span_start, span_end;     ///< finished ops, in finishing order
  std::array<SimTime, 2> since{kNever, kNever};  ///< running op's start, per lane
  std::vector<int32_t> waiters;                  ///< instances waiting for an op (Inst::wait_arg)
  int32_t future_posts = 0;  ///< posts scheduled at a later time (kDpPost events)

  /// Adds op k (of desc `d`) to lane `l` (0 reductions, 1 gathers), in program order.
  void add_op(int32_t d, int32_t l);
  /// One replica posts op k: true when that was the last post it needed.
  bool post(int32_t k) { return ++posts[static_cast<size_t>(k)] == needed; }
  /// Starts at `now` the head op of each idle lane that every replica posted:
  /// start(k, desc of k) for each, in lane order.
  template <class Start>
  void start_ready(SimTime now, Start&& start) {
    for (size_t l = 0; l < lanes.size(); ++l) {
      DpLane& ln = lanes[l];
      if (ln.busy || ln.next >= static_cast<int32_t>(ln.ops.size())) continue;
      const int32_t k = ln.ops[static_cast<size_t>(ln.next)];
      if (posts[static_cast<size_t>(k)] < needed) continue;
      ln.busy = true;
      since[l] = now;
      start(k, desc[static_cast<size_t>(k)]);
    }
  }
  /// Op k, started at `start`, finished at `now`: its lane moves to its next op.
  void finish(int32_t k, SimTime start, SimTime now);
  /// Time within [a, b] (b <= now) during which some DP collective of the stream ran;
  /// `spans` is a buffer it fills.
  SimTime cover(SimTime a, SimTime b, SimTime now,
                std::vector<std::pair<SimTime, SimTime>>& spans) const;
  /// Nothing running, nothing posted (now or later): no DP op can start before an
  /// instance posts one.
  bool quiet() const {
    if (future_posts > 0) return false;
    for (const DpLane& l : lanes)
      if (l.busy || (l.next < static_cast<int32_t>(l.ops.size()) &&
                     posts[static_cast<size_t>(l.ops[static_cast<size_t>(l.next)])] > 0))
        return false;
    return true;
  }
};

}  // namespace rapid::des
