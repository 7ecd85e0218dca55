#include "unit_rendezvous.hpp"

namespace rapid::des {

void UnitRendezvous::reset(int32_t instances) {
  running_ = 0;
  pool_.clear();
  open_.clear();
  posts_.assign(static_cast<size_t>(instances), {});
}

std::optional<UnitWaiters> UnitRendezvous::post(int32_t i, int32_t layout, int32_t participants) {
  std::vector<int64_t>& counts = posts_[static_cast<size_t>(i)];
  if (counts.size() <= static_cast<size_t>(layout))
    counts.resize(static_cast<size_t>(layout) + 1, 0);
  const auto key = std::make_pair(layout, counts[static_cast<size_t>(layout)]++);
  auto& [posted, pool_begin] = open_[key];
  if (posted == 0) {
    pool_begin = static_cast<int32_t>(pool_.size());
    pool_.resize(pool_.size() + static_cast<size_t>(participants), -1);
  }
  pool_[static_cast<size_t>(pool_begin + posted)] = i;
  if (++posted < participants) return std::nullopt;
  ++running_;
  const UnitWaiters u{pool_begin, participants, 0};
  open_.erase(key);
  return u;
}

void UnitRendezvous::finished(const UnitWaiters& u) {
  if (u.pool_begin >= 0 && --running_ == 0 && open_.empty()) pool_.clear();
}

}  // namespace rapid::des
