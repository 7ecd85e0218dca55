// The ops the simulation has running: collectives and transfers as flows, and the timed
// link-fault changes, each with what its end acts on, in slots that finished ops leave for
// the next (an op's events carry its slot's version: a reused slot's older events are stale).
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "rapid/des/event_queue.hpp"
#include "unit_rendezvous.hpp"

namespace rapid::des {

// What an op's end acts on, by its role. A layer collective (TP/CP/EP) wakes its
// UnitWaiters (unit_rendezvous.hpp).

/// A pipeline transfer of message `message` (Simulator::Impl::message) between two
/// instances.
struct Transfer {
  int32_t sender = 0, receiver = 0, message = 0;
};
/// DP op `op` of stage `stage`'s stream (StageProgram::dp_ops).
struct DpRun {
  int32_t stage = 0, op = 0;
};
/// No collective: a timed link fault starts or ends at Fabric::fault_times()[time_index]
/// (its kOpDone event changes the capacity of the faulted link classes, docs/faults.md).
struct FaultChangeAt {
  int32_t time_index = 0;
};
using OpTarget = std::variant<UnitWaiters, Transfer, DpRun, FaultChangeAt>;
/// The role of an op: the index of its target's alternative.
enum class CommRole : uint8_t { Unit, P2P, Dp, FaultChange };

struct ActiveOp {
  OpTarget target;
  int32_t desc = 0, pending = 0;
  SimTime start = 0, last = 0;
  SimTime latency = 0;   ///< after the last drain (CommDesc::latency + timed loss)
  uint32_t version = 0;  ///< its kOpDone events carry it (older ones are stale)
  bool folded = false;   ///< running outside the flow network (dynamic folding)
  CommRole role() const { return static_cast<CommRole>(target.index()); }
};

class OpSlots {
 public:
  /// A slot for `op`: a finished op's if any (its version one more, so that the finished
  /// op's events are stale), else a new one.
  int32_t add(const ActiveOp& op) {
    if (free_.empty()) {
      ops_.push_back(op);
      return static_cast<int32_t>(ops_.size()) - 1;
    }
    const int32_t id = free_.back();
    free_.pop_back();
    const uint32_t version = ops_[static_cast<size_t>(id)].version + 1;
    ops_[static_cast<size_t>(id)] = op;
    ops_[static_cast<size_t>(id)].version = version;
    return id;
  }
  /// Op `id` is done: its slot serves the next op.
  void release(int32_t id) { free_.push_back(id); }
  void clear() {
    ops_.clear();
    free_.clear();
  }
  ActiveOp& operator[](int32_t id) { return ops_[static_cast<size_t>(id)]; }
  const ActiveOp& operator[](int32_t id) const { return ops_[static_cast<size_t>(id)]; }

 private:
  std::vector<ActiveOp> ops_;
  std::vector<int32_t> free_;
};

}  // namespace rapid::des
