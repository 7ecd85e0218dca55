// Layer collectives (TP/CP/EP) whose group spans several simulated instances, as when a
// group crosses the simulated DP replicas: each instance posts its part as it reaches the
// collective, and the collective starts when the last participant has posted (NCCL
// collectives block until every rank of the communicator has launched them). The waiters
// of a started one stay in a pool until it ends.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace rapid::des {

/// The instances a layer collective wakes when it ends.
struct UnitWaiters {
  int32_t pool_begin = -1;  ///< its waiters in the pool; -1: the one waiter is `single`
  int32_t count = 0;
  int32_t single = 0;
};

class UnitRendezvous {
 public:
  /// Nothing open, nothing pooled; `instances` post from now on.
  void reset(int32_t instances);
  /// Instance `i` posts its next collective on layout `layout` (an instance's k-th post on
  /// a layout meets the other participants' k-th) of `participants` instances: the waiters
  /// to start it with when `i` is the last to post, else nothing.
  std::optional<UnitWaiters> post(int32_t i, int32_t layout, int32_t participants);
  /// Waiter k of `u`, k < u.count.
  int32_t waiter(const UnitWaiters& u, int32_t k) const {
    return u.pool_begin < 0 ? u.single : pool_[static_cast<size_t>(u.pool_begin + k)];
  }
  /// `u` ended: the pool is emptied whenever no collective is open or running from it.
  void finished(const UnitWaiters& u);
  size_t pool_size() const { return pool_.size(); }

 private:
  int32_t running_ = 0;  ///< started collectives whose waiters are in the pool
  std::vector<int32_t> pool_;
  /// Open collectives by (layout, post number): (posted so far, pool begin).
  std::map<std::pair<int32_t, int64_t>, std::pair<int32_t, int32_t>> open_;
  std::vector<std::vector<int64_t>> posts_;  ///< per instance, per layout: posts so far
};

}  // namespace rapid::des
